// The identity domain's commands (commands/identity/identity.h) as the dispatcher routes them:
// each decided against the identity part of the decision state into a Decision whose entity is
// the user it is about. Pure.
#pragma once

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/identity/identity.h"

namespace cairn::commands {

Result<Decision> DecideCommand(const DecisionState& state, const CreateUser& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateUser& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const StartSession& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const EndSession& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const CreateAccessToken& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateAccessToken& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const RecordLoginFailure& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const RecordAccessDenied& command,
                               const CommandMeta& meta);

// Users and sessions are authorized at the edge (an admin, or the user themself), where the
// credential is; the write side lets them through.
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateUser& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateUser& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const StartSession& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const EndSession& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateAccessToken& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateAccessToken& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const RecordLoginFailure& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const RecordAccessDenied& command);

}  // namespace cairn::commands
