// Helpers shared by the Kafka suites: building events and reading a log or a topic back.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "events/event_log.h"

namespace cairn::testing {

// A small non-placement event (AgentEnabled) with the given id.
Envelope MakeEvent(const std::string& event_id);
// A placement order for `agent_id`: AllocationAssigned, or KillRequested when `kill`.
Envelope MakeOrder(const std::string& event_id, const std::string& agent_id, bool kill = false);

// Events [from, end) of `log`, read with one reader; DeadlineExceeded when they do not all come
// within `timeout`.
Result<std::vector<Envelope>> ReadRange(EventLog& log, uint64_t from, uint64_t end,
                                        std::chrono::milliseconds timeout);

// The event ids of `events`, in order.
std::vector<std::string> IdsOf(const std::vector<Envelope>& events);

// Every record of every partition of `topic` (key, value parsed as an Envelope) up to the
// partitions' end offsets at the time of the call, read with assign() from the beginning (no
// group, so no join delay). Records of one partition keep their order; partitions follow one
// another.
Result<std::vector<std::pair<std::string, Envelope>>> ReadWholeTopic(
    const std::string& brokers, const std::string& topic, std::chrono::milliseconds timeout);

}  // namespace cairn::testing
