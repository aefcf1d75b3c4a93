// Time travel over REST (admins only: the past holds every workspace's work): the cluster as it
// was after a given offset, or at a given time, from the newest snapshot before that moment plus
// the log's tail (projections/snapshots.h).
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET /api/v1/history/state?at=OFFSET | ?time=RFC3339 [&limit=N: the queue's first N jobs, 100 by
// default, 0 = all; "jobQueueTotal" counts them all] [&experimentLimit=N: the first N experiments
// not ended, 0 (the default) = all; "experimentsTotal" counts them all]
// -> {"asOf": {"nextOffset", "lastEventTime"}, "snapshot": {"nextOffset"} | null,
//     "jobQueue": [...], "tasks": [the queue's jobs' live tasks], "experiments": [not ended],
//     "agents": [...], "models": [...], "nextOffset"}
net::Response GetHistoryState(Call& call);

// The cluster's slots and queue over a window, from the utilization projection (any user: counts
// only, no one's work). GET /api/v1/history/utilization [?from=T&to=T: RFC 3339 or unix seconds;
// the last hour to now by default] [&steps=N: 60 by default, 1 to 1000]
// -> {"from", "to", "stepSeconds", "atStart": {counts},
//     "points": [{"time": a step's end, "slotsTotal", "slotsUsed", "tasksWaiting" (at that time),
//                 "peakSlotsUsed", "peakTasksWaiting" (the highest within the step),
//                 "offset" (the last event folded by then: where the history view opens)}]}
net::Response GetHistoryUtilization(Call& call);

}  // namespace cairn::api
