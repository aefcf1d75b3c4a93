// Internal to the write side: the decider's pool and job-queue commands (commands.h) — the
// recorded pool configuration, users' changes to a job's priority, weight, pool, max slots and
// place in the queue, and the forced end of preemptions whose grace period ran out. Pure.
#pragma once

#include <cstdint>
#include <string>

#include "commands/commands.h"
#include "commands/decider.h"
#include "commands/decision_state.h"

namespace cairn::commands {

Result<Decision> DecideConfigurePools(const DecisionState& state, const ConfigurePools& command);
Result<Decision> DecideUpdateJob(const DecisionState& state, const UpdateJob& update);
// A kill for every preemption whose grace period ended by `now`.
Result<Decision> DecideExpirePreemptions(const DecisionState& state, int64_t now);

// "a, b, c": the configured pools, for messages.
std::string PoolNames(const DecisionState& state);
// InvalidArgument naming `pool` and the configured pools.
Status NoSuchPool(const DecisionState& state, const std::string& pool);

}  // namespace cairn::commands
