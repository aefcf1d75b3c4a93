// The config policies domain's decisions (commands/policies/policy_commands.h), and who may run
// each: the global policies are cluster admins', a workspace's its admins'. Pure.
#pragma once

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/policies/policy_commands.h"

namespace cairn::commands {

Result<Decision> DecideCommand(const DecisionState& state, const SetConfigPolicies& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DeleteConfigPolicies& command,
                               const CommandMeta& meta);

Status MayRun(const DecisionState& state, const UserRecord& user,
              const SetConfigPolicies& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const DeleteConfigPolicies& command);

}  // namespace cairn::commands
