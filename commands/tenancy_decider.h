// Internal to the write side: who may run each command (authorization, from the roles of
// commands/tenancy.h), the decisions of the workspace, project, role and pool-binding commands,
// and where a workspace's work may run. Pure, like the rest of the decider.
#pragma once

#include <string>

#include "commands/commands.h"
#include "commands/decider.h"
#include "commands/decision_state.h"

namespace cairn::commands {

// OK when the command's actor may run it. Users are checked against their roles (and ownership
// of the work the command changes); agents, allocations and the system act only through the
// routes made for them, so they are not. A refusal is PermissionDenied naming the permission.
Status AuthorizeCommand(const DecisionState& state, const Command& command,
                        const CommandMeta& meta);

// The pool new work of `workspace_id` runs in: `requested`, or the workspace's default (aux or
// compute), or the cluster's. InvalidArgument when the pool is bound to other workspaces; whether
// it exists is the caller's to check (each names it in its own terms).
Result<std::string> ResolveWorkspacePool(const DecisionState& state, int32_t workspace_id,
                                         const std::string& requested, bool aux);
// OK when new work may be created in `workspace_id` (it exists and is not archived).
Status CheckWorkspaceTakesWork(const DecisionState& state, int32_t workspace_id);
// Why `pool` does not take work from `workspace_id`, or "" when it does.
std::string PoolRefusal(const DecisionState& state, const std::string& pool, int32_t workspace_id);

// `actor` is the user who asked (nullptr: the system).
Result<Decision> DecideCreateWorkspace(const DecisionState& state, const CreateWorkspace& command,
                                       const UserRecord* actor);
Result<Decision> DecideUpdateWorkspace(const DecisionState& state, const UpdateWorkspace& command);
Result<Decision> DecideDeleteWorkspace(const DecisionState& state, const DeleteWorkspace& command);
Result<Decision> DecidePinWorkspace(const DecisionState& state, const PinWorkspace& command,
                                    const UserRecord* actor);
Result<Decision> DecideCreateProject(const DecisionState& state, const CreateProject& command,
                                     const UserRecord* actor);
Result<Decision> DecideUpdateProject(const DecisionState& state, const UpdateProject& command);
Result<Decision> DecideDeleteProject(const DecisionState& state, const DeleteProject& command);
Result<Decision> DecideMoveExperiment(const DecisionState& state, const MoveExperiment& command);
Result<Decision> DecideChangeRoles(const DecisionState& state, const ChangeRoles& command);
Result<Decision> DecideSetPoolBindings(const DecisionState& state, const SetPoolBindings& command);

// The user an actor ("user:NAME") names, or nullptr for other actors and unknown users.
const UserRecord* ActingUser(const DecisionState& state, const CommandMeta& meta);

}  // namespace cairn::commands
