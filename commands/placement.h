// Cairn's first placement rule, a pure decider: queued tasks in priority order (lower number
// first, then submission order) are placed best-fit onto free slots of schedulable agents in
// their pool. A task that does not fit now stays queued and does not block smaller tasks behind
// it. The full policies (fair share, priority with preemption, round robin, gangs) replace this.
#pragma once

#include <vector>

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Returns AllocationAssigned events (payload only) for every task that can be placed now, each
// with its reason in words. Does not modify `state`.
std::vector<events::Envelope> PlaceQueuedTasks(const DecisionState& state);

}  // namespace cairn::commands
