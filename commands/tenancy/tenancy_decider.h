// The tenancy domain's decisions (commands/tenancy/tenancy_commands.h): workspaces, projects,
// role assignments and pool bindings, and who may run each (MayRun). Also what every other
// domain asks of tenancy: who the acting user is, whether a user may change a job or an
// experiment, and where a workspace's work may run. Pure, like the rest of the write side.
#pragma once

#include <string>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/tenancy/tenancy_commands.h"

namespace cairn::commands {

// The user an actor ("user:NAME") names, or nullptr for other actors and unknown users.
const UserRecord* ActingUser(const DecisionState& state, const CommandMeta& meta);

// Whether `user` owns work recorded with `owner` (a username).
bool OwnsWork(const UserRecord& user, const std::string& owner);
// OK when `user` may change `job` (its owner with the right to change such work in the job's
// workspace, or whoever may change anyone's); `what` names the change in a refusal.
Status AuthorizeJobChange(const DecisionState& state, const UserRecord& user, const JobRecord& job,
                          const std::string& what);
// The same for an experiment; an unknown experiment passes (its decider answers NotFound).
Status AuthorizeExperimentChange(const DecisionState& state, const UserRecord& user,
                                 int64_t experiment_id);

// The pool new work of `workspace_id` runs in: `requested`, or the workspace's default (aux or
// compute), or the cluster's. InvalidArgument when the pool is bound to other workspaces; whether
// it exists is the caller's to check (each names it in its own terms).
Result<std::string> ResolveWorkspacePool(const DecisionState& state, int32_t workspace_id,
                                         const std::string& requested, bool aux);
// OK when new work may be created in `workspace_id` (it exists and is not archived).
Status CheckWorkspaceTakesWork(const DecisionState& state, int32_t workspace_id);
// Why `pool` does not take work from `workspace_id`, or "" when it does.
std::string PoolRefusal(const DecisionState& state, const std::string& pool, int32_t workspace_id);

Result<Decision> DecideCommand(const DecisionState& state, const CreateWorkspace& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateWorkspace& command,
                               const CommandMeta& meta);
// Only a workspace without experiments, models and live OpenPAI jobs; its live commands,
// notebooks, shells and TensorBoards are killed (commands/decider.cpp adds the kills) and its
// empty projects go with it, as in Determined.
Result<Decision> DecideCommand(const DecisionState& state, const DeleteWorkspace& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const PinWorkspace& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const CreateProject& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateProject& command,
                               const CommandMeta& meta);
// Only a project without experiments.
Result<Decision> DecideCommand(const DecisionState& state, const DeleteProject& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const MoveExperiment& command,
                               const CommandMeta& meta);
// All or none of the assignments are applied.
Result<Decision> DecideCommand(const DecisionState& state, const ChangeRoles& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const SetPoolBindings& command,
                               const CommandMeta& meta);
// User groups: names as for workspaces (unique, ignoring case), members existing users; deleting a
// group removes its role assignments first (RoleRemoved), so replay and the audit trail see them
// go. Cluster admins only (PERMISSION_TYPE_UPDATE_GROUP).
Result<Decision> DecideCommand(const DecisionState& state, const CreateGroup& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateGroup& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DeleteGroup& command,
                               const CommandMeta& meta);
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateGroup& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateGroup& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteGroup& command);
// Only the master records it, as it starts (master/master.cpp).
Result<Decision> DecideCommand(const DecisionState& state, const ConfigureAuthz& command,
                               const CommandMeta& meta);

// Creating a workspace is open to every user; the rest takes the workspace's (or the cluster's)
// permission named in the refusal.
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateWorkspace& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateWorkspace& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteWorkspace& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const PinWorkspace& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateProject& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateProject& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteProject& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const MoveExperiment& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ChangeRoles& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const SetPoolBindings& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ConfigureAuthz& command);
// Cluster admins only. InvalidArgument for an empty message or one over 250 characters, an end
// before its start or not after now.
Result<Decision> DecideCommand(const DecisionState& state, const SetClusterMessage& command,
                               const CommandMeta& meta);
Status MayRun(const DecisionState& state, const UserRecord& user, const SetClusterMessage& command);
// Cluster admins only.
Result<Decision> DecideCommand(const DecisionState& state, const ChangeMasterLogLevel& command,
                               const CommandMeta& meta);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const ChangeMasterLogLevel& command);

}  // namespace cairn::commands
