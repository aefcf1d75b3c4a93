// The agents and pools domain's decisions (commands/agents/agent_commands.h): an agent's
// registration (a reconnect, or a new process that ends its predecessor's tasks), disconnection,
// enabling and disabling (with or without draining), and the recorded pool configuration; and
// who may run each (MayRun). Pure.
#pragma once

#include "base/status.h"
#include "commands/agents/agent_commands.h"
#include "commands/decision.h"
#include "commands/decision_state.h"

namespace cairn::commands {

Result<Decision> DecideCommand(const DecisionState& state, const ConfigurePools& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const RegisterAgent& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DisconnectAgent& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const EnableAgent& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DisableAgent& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const SetSlotEnabled& command,
                               const CommandMeta& meta);

// Enabling and disabling agents takes the cluster-wide right to; the rest is agents' and the
// master's own, through their routes.
Status MayRun(const DecisionState& state, const UserRecord& user, const ConfigurePools& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const RegisterAgent& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DisconnectAgent& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const EnableAgent& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DisableAgent& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const SetSlotEnabled& command);

}  // namespace cairn::commands
