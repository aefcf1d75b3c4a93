// Internal to the write side: the decisions of the model registry's commands and who may run
// them. Names are unique cluster-wide (as Determined's); a version points at a checkpoint that
// exists and was not garbage-collected. Pure, like the rest of the decider.
#pragma once

#include <string>
#include <type_traits>

#include "commands/commands.h"
#include "commands/decider.h"
#include "commands/decision_state.h"

namespace cairn::commands {

template <typename T>
inline constexpr bool IsRegistryCommand =
    std::is_same_v<T, CreateModel> || std::is_same_v<T, UpdateModel> ||
    std::is_same_v<T, DeleteModel> || std::is_same_v<T, RegisterModelVersion> ||
    std::is_same_v<T, UpdateModelVersion> || std::is_same_v<T, DeleteModelVersion>;

// The entity of a registry decision (Outcome::entity_id): "model/<id>", or for a version
// "model/<id>/version/<number>".
std::string ModelEntity(int32_t model_id, int32_t version = 0);

// Decides a registry command (T is one of IsRegistryCommand's); `actor` is the user who asked
// (nullptr: the system). Defined for those types only.
template <typename T>
Result<Decision> DecideRegistryCommand(const DecisionState& state, const T& command,
                                       const UserRecord* actor);

// Who may: create a model or register a version, whoever may create work in the model's
// workspace (an Editor), registering only a checkpoint whose experiment they may see; change or
// delete a model or a version, its owner and the workspace's admins (and cluster admins). A
// command about a model that does not exist is let through, for the decider to answer NotFound.
template <typename T>
Status AuthorizeRegistryCommand(const DecisionState& state, const UserRecord& user,
                                const T& command);

}  // namespace cairn::commands
