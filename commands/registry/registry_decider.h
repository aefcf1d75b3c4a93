// The model registry's decisions (commands/registry/registry_commands.h) and who may run them.
// Names are unique cluster-wide (as Determined's); a version points at a checkpoint that exists
// and was not garbage-collected. Pure, like the rest of the write side.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/registry/registry_commands.h"

namespace cairn::commands {

// The entity of a registry decision (Outcome::entity_id): "model/<id>", or for a version
// "model/<id>/version/<number>".
std::string ModelEntity(int32_t model_id, int32_t version = 0);

Result<Decision> DecideCommand(const DecisionState& state, const CreateModel& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateModel& command,
                               const CommandMeta& meta);
// With its versions.
Result<Decision> DecideCommand(const DecisionState& state, const DeleteModel& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const RegisterModelVersion& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateModelVersion& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DeleteModelVersion& command,
                               const CommandMeta& meta);

// Who may: create a model or register a version, whoever may create work in the model's
// workspace (an Editor), registering only a checkpoint whose experiment they may see; change or
// delete a model or a version, its owner and the workspace's admins (and cluster admins). A
// command about a model that does not exist is let through, for the decider to answer NotFound.
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateModel& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateModel& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteModel& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const RegisterModelVersion& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const UpdateModelVersion& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const DeleteModelVersion& command);

}  // namespace cairn::commands
