// GET /metrics: the master's measures in Prometheus's text format (version 0.0.4) — the queue
// per pool, the writer's follow-up and append latencies, events appended, each projection's lag,
// the newest snapshot's age, agents by state and slots per pool.
#pragma once

#include <string>

#include "events/event_log.h"
#include "master/decision_loop.h"
#include "projections/projections.h"

namespace cairn {

std::string RenderMasterMetrics(const DecisionLoop& writer, Projections& projections, EventLog& log,
                                int64_t now_unix_micros);

}  // namespace cairn
