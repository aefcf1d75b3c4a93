// The model registry's decisions (commands/registry/registry_commands.h) and who may run them.
// Names are unique cluster-wide (as Determined's); a version points at a checkpoint that exists
// and was not garbage-collected. Pure, like the rest of the write side.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/registry/registry_commands.h"

namespace cairn::commands {

// The entity of a registry decision (Outcome::entity_id): "model/<id>", or for a version
// "model/<id>/version/<number>".
std::string ModelEntity(int32_t model_id, int32_t version = 0);

// The registry's commands (registry_commands.h), each decided here and authorised below; defined
// for exactly these types.
template <typename T>
concept RegistryCommand = std::is_same_v<T, CreateModel> || std::is_same_v<T, UpdateModel> ||
    std::is_same_v<T, DeleteModel> || std::is_same_v<T, RegisterModelVersion> ||
    std::is_same_v<T, UpdateModelVersion> || std::is_same_v<T, DeleteModelVersion>;

// A model's name is unique cluster-wide; a version points at a checkpoint that exists and was not
// garbage-collected; deleting a model deletes its versions.
template <RegistryCommand T>
Result<Decision> DecideCommand(const DecisionState& state, const T& command,
                               const CommandMeta& meta);

// Who may: create a model or register a version, whoever may create work in the model's
// workspace (an Editor), registering only a checkpoint whose experiment they may see; change or
// delete a model or a version, its owner and the workspace's admins (and cluster admins). A
// command about a model that does not exist is let through, for the decider to answer NotFound.
template <RegistryCommand T>
Status MayRun(const DecisionState& state, const UserRecord& user, const T& command);

}  // namespace cairn::commands
