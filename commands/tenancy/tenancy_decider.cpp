#include "commands/tenancy/tenancy_decider.h"

#include <algorithm>

#include "base/encoding.h"
#include "events/limits.h"

namespace cairn::commands {
namespace {

using events::Envelope;

std::string WorkspaceEntity(int32_t workspace_id) {
  return "workspace/" + std::to_string(workspace_id);
}

std::string ProjectEntity(int32_t project_id) { return "project/" + std::to_string(project_id); }

Result<const WorkspaceRecord*> FindWorkspace(const DecisionState& state, int32_t workspace_id) {
  const WorkspaceRecord* workspace = state.tenancy.FindWorkspace(workspace_id);
  if (workspace == nullptr) {
    return Status::NotFound("workspace " + std::to_string(workspace_id) + " not found");
  }
  return workspace;
}

Result<const ProjectRecord*> FindProject(const DecisionState& state, int32_t project_id) {
  const ProjectRecord* project = state.tenancy.FindProject(project_id);
  if (project == nullptr) {
    return Status::NotFound("project " + std::to_string(project_id) + " not found");
  }
  return project;
}

// A workspace's default pool: "" (the cluster's), or one that exists and takes its work.
Status CheckDefaultPool(const DecisionState& state, const std::string& pool, int32_t workspace_id,
                        const char* field) {
  if (pool.empty()) return Status::Ok();
  if (state.FindPool(pool) == nullptr) {
    return Status::InvalidArgument(std::string(field) + ": resource pool " + pool +
                                   " does not exist");
  }
  if (std::string refusal = PoolRefusal(state, pool, workspace_id); !refusal.empty()) {
    return Status::InvalidArgument(std::string(field) + ": " + refusal);
  }
  return Status::Ok();
}

}  // namespace

bool OwnsWork(const UserRecord& user, const std::string& owner) { return owner == user.username; }

Permission UpdatePermissionFor(const JobRecord& job) {
  return job.type == events::TASK_TYPE_TRIAL ? Permission::kUpdateExperiment
                                             : Permission::kUpdateNsc;
}

// An unknown experiment passes: the decider then says it is not found.
Status AuthorizeExperimentChange(const DecisionState& state, const UserRecord& user,
                                 int64_t experiment_id) {
  const ExperimentRecord* experiment = state.FindExperiment(experiment_id);
  if (experiment == nullptr) return Status::Ok();
  return AuthorizeChange(state.tenancy, user, Permission::kUpdateExperiment,
                         experiment->workspace_id, OwnsWork(user, experiment->owner),
                         "change experiment " + std::to_string(experiment_id));
}

Status AuthorizeJobChange(const DecisionState& state, const UserRecord& user, const JobRecord& job,
                          const std::string& what) {
  return AuthorizeChange(state.tenancy, user, UpdatePermissionFor(job), job.workspace_id,
                         OwnsWork(user, job.user), what);
}

const UserRecord* ActingUser(const DecisionState& state, const CommandMeta& meta) {
  constexpr std::string_view kUserPrefix = "user:";
  if (meta.actor.rfind(kUserPrefix, 0) != 0) return nullptr;
  return state.identity.FindUser(meta.actor.substr(kUserPrefix.size()));
}

std::string PoolRefusal(const DecisionState& state, const std::string& pool, int32_t workspace_id) {
  if (state.tenancy.PoolAllows(pool, workspace_id)) return "";
  return "resource pool " + pool + " is not available to workspace id " +
         std::to_string(workspace_id) +
         " (it is bound to other workspaces: det resource-pool bindings list-workspaces " + pool +
         ")";
}

Result<std::string> ResolveWorkspacePool(const DecisionState& state, int32_t workspace_id,
                                         const std::string& requested, bool aux) {
  std::string pool = requested;
  if (pool.empty()) {
    if (const WorkspaceRecord* workspace = state.tenancy.FindWorkspace(workspace_id)) {
      pool = aux ? workspace->default_aux_pool : workspace->default_compute_pool;
    }
  }
  if (pool.empty()) {
    pool = aux ? state.pools_config.default_aux_pool() : state.pools_config.default_compute_pool();
  }
  if (std::string refusal = PoolRefusal(state, pool, workspace_id); !refusal.empty()) {
    return Status::InvalidArgument(refusal);
  }
  return pool;
}

Status CheckWorkspaceTakesWork(const DecisionState& state, int32_t workspace_id) {
  CAIRN_ASSIGN_OR_RETURN(const WorkspaceRecord* workspace, FindWorkspace(state, workspace_id));
  // Determined's answer (404) to work launched into an archived workspace, with the reason.
  if (workspace->archived) {
    return Status::NotFound("workspace '" + std::to_string(workspace_id) + "' not found: " +
                            workspace->name + " is archived; unarchive it to add work");
  }
  return Status::Ok();
}

Result<Decision> DecideCommand(const DecisionState& state, const CreateWorkspace& command,
                               const CommandMeta& meta) {
  const UserRecord* actor = ActingUser(state, meta);
  CAIRN_RETURN_IF_ERROR(CheckTenancyName("workspace", command.name));
  if (const WorkspaceRecord* taken = state.tenancy.FindWorkspaceIgnoringCase(command.name)) {
    return Status::AlreadyExists("a workspace named " + taken->name + " already exists");
  }
  const int32_t workspace_id = state.tenancy.last_workspace_id + 1;
  CAIRN_RETURN_IF_ERROR(
      CheckDefaultPool(state, command.default_compute_pool, workspace_id, "defaultComputePool"));
  CAIRN_RETURN_IF_ERROR(
      CheckDefaultPool(state, command.default_aux_pool, workspace_id, "defaultAuxPool"));
  Decision decision;
  decision.entity_id = WorkspaceEntity(workspace_id);
  auto* created = decision.events.emplace_back().mutable_workspace_created();
  created->set_workspace_id(workspace_id);
  created->set_name(command.name);
  created->set_owner_user_id(actor != nullptr ? actor->id : 0);
  created->set_default_compute_pool(command.default_compute_pool);
  created->set_default_aux_pool(command.default_aux_pool);
  if (command.agent_user) {
    CAIRN_RETURN_IF_ERROR(CheckPartialAgentUser(*command.agent_user));
    *created->mutable_agent_user() = WorkspaceAgentUserOf(*command.agent_user);
  }
  created->set_checkpoint_storage_json(command.checkpoint_storage_json);
  // Determined's workspace_creator_assign_role: the creator administers what they made.
  if (actor != nullptr && !actor->admin) {
    auto* assigned = decision.events.emplace_back().mutable_role_assigned();
    assigned->set_user_id(actor->id);
    assigned->set_workspace_id(workspace_id);
    assigned->set_role(events::ROLE_WORKSPACE_ADMIN);
  }
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateWorkspace& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const WorkspaceRecord* workspace,
                         FindWorkspace(state, command.workspace_id));
  if (workspace->immutable) {
    return Status::FailedPrecondition("the built-in workspace " + workspace->name +
                                      " cannot be changed");
  }
  Envelope event;
  auto* updated = event.mutable_workspace_updated();
  updated->set_workspace_id(workspace->id);
  bool changed = false;
  const bool only_unarchive = !command.name && !command.default_compute_pool &&
                              !command.default_aux_pool && !command.agent_user &&
                              !command.checkpoint_storage_json && command.archived == false;
  if (workspace->archived && !only_unarchive && command.archived != false) {
    return Status::FailedPrecondition("workspace " + workspace->name +
                                      " is archived; unarchive it first");
  }
  if (command.name && *command.name != workspace->name) {
    CAIRN_RETURN_IF_ERROR(CheckTenancyName("workspace", *command.name));
    if (const WorkspaceRecord* taken = state.tenancy.FindWorkspaceIgnoringCase(*command.name);
        taken != nullptr && taken->id != workspace->id) {
      return Status::AlreadyExists("a workspace named " + taken->name + " already exists");
    }
    updated->set_name(*command.name);
    changed = true;
  }
  if (command.archived && *command.archived != workspace->archived) {
    updated->set_archived(*command.archived);
    changed = true;
  }
  if (command.default_compute_pool &&
      *command.default_compute_pool != workspace->default_compute_pool) {
    CAIRN_RETURN_IF_ERROR(CheckDefaultPool(state, *command.default_compute_pool, workspace->id,
                                           "defaultComputePool"));
    updated->set_default_compute_pool(*command.default_compute_pool);
    changed = true;
  }
  if (command.default_aux_pool && *command.default_aux_pool != workspace->default_aux_pool) {
    CAIRN_RETURN_IF_ERROR(
        CheckDefaultPool(state, *command.default_aux_pool, workspace->id, "defaultAuxPool"));
    updated->set_default_aux_pool(*command.default_aux_pool);
    changed = true;
  }
  if (command.agent_user && command.agent_user != workspace->agent_user) {
    CAIRN_RETURN_IF_ERROR(CheckPartialAgentUser(*command.agent_user));
    *updated->mutable_agent_user() = WorkspaceAgentUserOf(*command.agent_user);
    changed = true;
  }
  if (command.checkpoint_storage_json &&
      *command.checkpoint_storage_json != workspace->checkpoint_storage_json) {
    updated->set_checkpoint_storage_json(*command.checkpoint_storage_json);
    changed = true;
  }
  if (!changed) return NoChange(WorkspaceEntity(workspace->id));
  return Decision{{std::move(event)}, WorkspaceEntity(workspace->id)};
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteWorkspace& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const WorkspaceRecord* workspace,
                         FindWorkspace(state, command.workspace_id));
  if (workspace->immutable) {
    return Status::FailedPrecondition("the built-in workspace " + workspace->name +
                                      " cannot be deleted");
  }
  for (const auto& [id, experiment] : state.experiments) {
    if (experiment.workspace_id == workspace->id && !experiment.deleted) {
      return Status::FailedPrecondition("workspace " + workspace->name +
                                        " still holds experiments (experiment " +
                                        std::to_string(id) + "); move or delete them first");
    }
  }
  for (const auto& [id, model] : state.registry.models) {
    if (model.workspace_id == workspace->id) {
      return Status::FailedPrecondition("workspace " + workspace->name + " still holds model " +
                                        model.name + "; move or delete it first");
    }
  }
  // Live commands, notebooks, shells and TensorBoards are killed with it (commands/decider.cpp
  // adds the kills); an OpenPAI job's attempts have a controller of their own, so it is stopped
  // first.
  for (const auto& [job_id, job] : state.jobs) {
    if (job.workspace_id != workspace->id || !job.accepts_changes()) continue;
    if (job.type == events::TASK_TYPE_TRIAL ||
        std::any_of(job.tasks.begin(), job.tasks.end(), [&](const TaskRecord* task) {
          return state.pai_task_to_job.count(task->task_id) > 0;
        })) {
      return Status::FailedPrecondition("workspace " + workspace->name +
                                        " still has live work (job " + std::string(job_id) +
                                        "); stop it first");
    }
  }
  Envelope event;
  event.mutable_workspace_deleted()->set_workspace_id(workspace->id);
  return Decision{{std::move(event)}, WorkspaceEntity(workspace->id)};
}

Result<Decision> DecideCommand(const DecisionState& state, const PinWorkspace& command,
                               const CommandMeta& meta) {
  const UserRecord* actor = ActingUser(state, meta);
  CAIRN_ASSIGN_OR_RETURN(const WorkspaceRecord* workspace,
                         FindWorkspace(state, command.workspace_id));
  if (actor == nullptr) return Status::InvalidArgument("only a user can pin a workspace");
  if (workspace->pinned_by.count(actor->id) == (command.pinned ? 1u : 0u)) {
    return NoChange(WorkspaceEntity(workspace->id));
  }
  Envelope event;
  auto* pinned = event.mutable_workspace_pinned();
  pinned->set_workspace_id(workspace->id);
  pinned->set_user_id(actor->id);
  pinned->set_pinned(command.pinned);
  return Decision{{std::move(event)}, WorkspaceEntity(workspace->id)};
}

Result<Decision> DecideCommand(const DecisionState& state, const CreateProject& command,
                               const CommandMeta& meta) {
  const UserRecord* actor = ActingUser(state, meta);
  CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, command.workspace_id));
  CAIRN_RETURN_IF_ERROR(CheckTenancyName("project", command.name));
  if (state.tenancy.FindProject(command.workspace_id, command.name) != nullptr) {
    return Status::AlreadyExists("workspace " + std::to_string(command.workspace_id) +
                                 " already has a project named " + command.name);
  }
  if (command.description.size() > kMaxProjectDescriptionLength) {
    return Status::InvalidArgument("a project description has at most " +
                                   std::to_string(kMaxProjectDescriptionLength) + " characters");
  }
  Envelope event;
  auto* created = event.mutable_project_created();
  created->set_project_id(state.tenancy.last_project_id + 1);
  created->set_workspace_id(command.workspace_id);
  created->set_name(command.name);
  created->set_description(command.description);
  created->set_owner_user_id(actor != nullptr ? actor->id : 0);
  return Decision{{std::move(event)}, ProjectEntity(created->project_id())};
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateProject& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const ProjectRecord* project, FindProject(state, command.project_id));
  if (project->immutable) {
    return Status::FailedPrecondition("the built-in project " + project->name +
                                      " cannot be changed");
  }
  const bool only_unarchive = !command.name && !command.description && command.archived == false;
  if (project->archived && !only_unarchive && command.archived != false) {
    return Status::FailedPrecondition("project " + project->name +
                                      " is archived; unarchive it first");
  }
  Envelope event;
  auto* updated = event.mutable_project_updated();
  updated->set_project_id(project->id);
  bool changed = false;
  if (command.name && *command.name != project->name) {
    CAIRN_RETURN_IF_ERROR(CheckTenancyName("project", *command.name));
    if (state.tenancy.FindProject(project->workspace_id, *command.name) != nullptr) {
      return Status::AlreadyExists("the workspace already has a project named " + *command.name);
    }
    updated->set_name(*command.name);
    changed = true;
  }
  if (command.description && *command.description != project->description) {
    if (command.description->size() > kMaxProjectDescriptionLength) {
      return Status::InvalidArgument("a project description has at most " +
                                     std::to_string(kMaxProjectDescriptionLength) + " characters");
    }
    updated->set_description(*command.description);
    changed = true;
  }
  if (command.archived && *command.archived != project->archived) {
    updated->set_archived(*command.archived);
    changed = true;
  }
  if (!changed) return NoChange(ProjectEntity(project->id));
  return Decision{{std::move(event)}, ProjectEntity(project->id)};
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteProject& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const ProjectRecord* project, FindProject(state, command.project_id));
  if (project->immutable) {
    return Status::FailedPrecondition("the built-in project " + project->name +
                                      " cannot be deleted");
  }
  for (const auto& [id, experiment] : state.experiments) {
    if (experiment.project_id == project->id && !experiment.deleted) {
      return Status::FailedPrecondition("project " + project->name +
                                        " still holds experiments (experiment " +
                                        std::to_string(id) + "); move them first");
    }
  }
  Envelope event;
  event.mutable_project_deleted()->set_project_id(project->id);
  return Decision{{std::move(event)}, ProjectEntity(project->id)};
}

Result<Decision> DecideCommand(const DecisionState& state, const MoveExperiment& command,
                               const CommandMeta&) {
  const ExperimentRecord* experiment = state.FindExperiment(command.experiment_id);
  if (experiment == nullptr || experiment->deleted) {
    return Status::NotFound("experiment " + std::to_string(command.experiment_id) + " not found");
  }
  CAIRN_ASSIGN_OR_RETURN(const ProjectRecord* project, FindProject(state, command.project_id));
  const std::string entity = std::to_string(experiment->experiment_id);
  if (project->id == experiment->project_id) return NoChange(entity);
  if (project->archived) {
    return Status::FailedPrecondition("project " + project->name + " is archived");
  }
  CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, project->workspace_id));
  if (const JobRecord* job = state.FindJob(experiment->job_id)) {
    if (std::string refusal = PoolRefusal(state, job->resource_pool, project->workspace_id);
        !refusal.empty()) {
      return Status::FailedPrecondition("experiment " + entity + " runs in " + refusal);
    }
  }
  Envelope event;
  auto* moved = event.mutable_experiment_moved();
  moved->set_experiment_id(experiment->experiment_id);
  moved->set_project_id(project->id);
  moved->set_workspace_id(project->workspace_id);
  moved->set_from_project_id(experiment->project_id);
  moved->set_from_workspace_id(experiment->workspace_id);
  moved->set_job_id(experiment->job_id);
  return Decision{{std::move(event)}, entity};
}

Result<Decision> DecideCommand(const DecisionState& state, const ChangeRoles& command,
                               const CommandMeta&) {
  if (!state.tenancy.RolesApply()) {
    return Status::FailedPrecondition(
        "roles do not apply under security.authz.type: basic; set it to rbac in master.yaml to "
        "assign them");
  }
  if (command.assignments.empty()) return Status::InvalidArgument("no role assignment given");
  Decision decision;
  // Users' and groups' roles, as the assignments before this one leave them.
  std::map<std::pair<int32_t, int32_t>, events::Role> after = state.tenancy.roles;
  std::map<std::pair<int32_t, int32_t>, events::Role> after_groups = state.tenancy.group_roles;
  for (const auto& assignment : command.assignments) {
    const bool group = assignment.group_id != 0;
    if (group && state.tenancy.FindGroup(assignment.group_id) == nullptr) {
      return Status::NotFound("group " + std::to_string(assignment.group_id) + " not found");
    }
    if (!group && state.identity.FindUser(assignment.user_id) == nullptr) {
      return Status::NotFound("user " + std::to_string(assignment.user_id) + " not found");
    }
    if (assignment.workspace_id != kEveryWorkspace) {
      CAIRN_RETURN_IF_ERROR(FindWorkspace(state, assignment.workspace_id).status());
    }
    if (assignment.role == events::ROLE_UNSPECIFIED) {
      return Status::InvalidArgument(
          "no role named (Viewer, Editor, WorkspaceAdmin, "
          "ClusterAdmin)");
    }
    if (assignment.role == events::ROLE_CLUSTER_ADMIN &&
        assignment.workspace_id != kEveryWorkspace) {
      return Status::InvalidArgument("ClusterAdmin is assigned cluster-wide, not in a workspace");
    }
    auto& held_roles = group ? after_groups : after;
    const std::pair key{group ? assignment.group_id : assignment.user_id, assignment.workspace_id};
    auto held = held_roles.find(key);
    if (command.remove) {
      if (held == held_roles.end() || held->second != assignment.role) {
        return Status::NotFound((group ? "group " : "user ") + std::to_string(key.first) +
                                " does not hold " + RoleName(assignment.role) +
                                (assignment.workspace_id == kEveryWorkspace
                                     ? std::string(" cluster-wide")
                                     : " in workspace " + std::to_string(assignment.workspace_id)));
      }
      held_roles.erase(held);
      auto* removed = decision.events.emplace_back().mutable_role_removed();
      removed->set_user_id(group ? 0 : assignment.user_id);
      removed->set_group_id(assignment.group_id);
      removed->set_workspace_id(assignment.workspace_id);
      removed->set_role(assignment.role);
    } else {
      if (held != held_roles.end() && held->second == assignment.role) continue;
      held_roles[key] = assignment.role;
      auto* assigned = decision.events.emplace_back().mutable_role_assigned();
      assigned->set_user_id(group ? 0 : assignment.user_id);
      assigned->set_group_id(assignment.group_id);
      assigned->set_workspace_id(assignment.workspace_id);
      assigned->set_role(assignment.role);
    }
  }
  const auto& first = command.assignments.front();
  decision.entity_id = first.group_id != 0 ? "group/" + std::to_string(first.group_id)
                                           : "user/" + std::to_string(first.user_id);
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const SetPoolBindings& command,
                               const CommandMeta&) {
  if (state.FindPool(command.pool_name) == nullptr) {
    return Status::NotFound("resource pool " + command.pool_name + " does not exist");
  }
  std::set<int32_t> bound;
  if (auto it = state.tenancy.pool_bindings.find(command.pool_name);
      it != state.tenancy.pool_bindings.end()) {
    bound = it->second;
  }
  std::set<int32_t> after =
      command.mode == SetPoolBindings::Mode::kReplace ? std::set<int32_t>{} : bound;
  for (int32_t workspace_id : command.workspace_ids) {
    CAIRN_RETURN_IF_ERROR(FindWorkspace(state, workspace_id).status());
    if (command.mode == SetPoolBindings::Mode::kRemove) {
      if (!bound.count(workspace_id)) {
        return Status::NotFound("resource pool " + command.pool_name +
                                " is not bound to workspace " + std::to_string(workspace_id));
      }
      after.erase(workspace_id);
    } else {
      after.insert(workspace_id);
    }
  }
  const std::string entity = "pool/" + command.pool_name;
  if (after == bound) return NoChange(entity);
  Envelope event;
  auto* changed = event.mutable_pool_bindings_changed();
  changed->set_pool_name(command.pool_name);
  for (int32_t workspace_id : after) changed->add_workspace_ids(workspace_id);
  return Decision{{std::move(event)}, entity};
}

Status MayRun(const DecisionState& state, const UserRecord& user, const CreateWorkspace& command) {
  // Open to every user (they become its WorkspaceAdmin); linking it to an agent account is not.
  if (!command.agent_user) return Status::Ok();
  return Authorize(state.tenancy, user, Permission::kSetWorkspaceAgentUser, kEveryWorkspace,
                   "create a workspace linked to an agent user");
}

namespace {

// Under basic a workspace's owner changes it and its projects; under RBAC the owner's
// WorkspaceAdmin role decides (an admin may take it away).
bool OwnsWorkspaceUnderBasic(const DecisionState& state, const UserRecord& user,
                             int32_t workspace_id) {
  const WorkspaceRecord* workspace = state.tenancy.FindWorkspace(workspace_id);
  return !state.tenancy.RolesApply() && workspace != nullptr && !workspace->immutable &&
         workspace->owner_user_id == user.id;
}

Status MayChangeWorkspace(const DecisionState& state, const UserRecord& user,
                          int32_t workspace_id) {
  return AuthorizeChange(state.tenancy, user, Permission::kUpdateWorkspace, workspace_id,
                         OwnsWorkspaceUnderBasic(state, user, workspace_id),
                         "change workspace " + std::to_string(workspace_id));
}

}  // namespace

Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateWorkspace& command) {
  CAIRN_RETURN_IF_ERROR(MayChangeWorkspace(state, user, command.workspace_id));
  if (!command.agent_user) return Status::Ok();
  return Authorize(state.tenancy, user, Permission::kSetWorkspaceAgentUser, command.workspace_id,
                   "link workspace " + std::to_string(command.workspace_id) + " to an agent user");
}

Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteWorkspace& command) {
  return MayChangeWorkspace(state, user, command.workspace_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const PinWorkspace& command) {
  return Authorize(state.tenancy, user, Permission::kViewWorkspace, command.workspace_id,
                   "pin workspace " + std::to_string(command.workspace_id));
}

Status MayRun(const DecisionState& state, const UserRecord& user, const CreateProject& command) {
  return Authorize(state.tenancy, user, Permission::kCreateProject, command.workspace_id,
                   "create a project");
}

namespace {

Status MayChangeProject(const DecisionState& state, const UserRecord& user, int32_t project_id) {
  const ProjectRecord* project = state.tenancy.FindProject(project_id);
  if (project == nullptr) return Status::Ok();
  // Under basic the workspace's owner may too, as in Determined.
  return AuthorizeChange(state.tenancy, user, Permission::kUpdateProject, project->workspace_id,
                         project->owner_user_id == user.id ||
                             OwnsWorkspaceUnderBasic(state, user, project->workspace_id),
                         "change project " + std::to_string(project_id));
}

}  // namespace

Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateProject& command) {
  return MayChangeProject(state, user, command.project_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteProject& command) {
  return MayChangeProject(state, user, command.project_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const MoveExperiment& command) {
  const ExperimentRecord* experiment = state.FindExperiment(command.experiment_id);
  const ProjectRecord* project = state.tenancy.FindProject(command.project_id);
  if (experiment == nullptr || project == nullptr) return Status::Ok();
  const std::string what = "move experiment " + std::to_string(command.experiment_id);
  CAIRN_RETURN_IF_ERROR(AuthorizeChange(state.tenancy, user, Permission::kUpdateExperiment,
                                        experiment->workspace_id, OwnsWork(user, experiment->owner),
                                        what));
  return Authorize(state.tenancy, user, Permission::kCreateExperiment, project->workspace_id,
                   what + " into project " + project->name);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const ChangeRoles& command) {
  for (const auto& assignment : command.assignments) {
    const bool everywhere = assignment.workspace_id == kEveryWorkspace;
    CAIRN_RETURN_IF_ERROR(Authorize(
        state.tenancy, user,
        everywhere ? Permission::kAssignClusterRoles : Permission::kAssignRoles,
        assignment.workspace_id,
        everywhere ? std::string("assign cluster-wide roles")
                   : "assign roles in workspace " + std::to_string(assignment.workspace_id)));
  }
  return Status::Ok();
}

Status MayRun(const DecisionState& state, const UserRecord& user, const SetPoolBindings& command) {
  return Authorize(state.tenancy, user, Permission::kModifyPoolBindings, kEveryWorkspace,
                   "bind resource pool " + command.pool_name + " to workspaces");
}

Status MayRun(const DecisionState&, const UserRecord& user, const ConfigureAuthz&) {
  return Status::PermissionDenied("user " + user.username +
                                  " may not change the authorization model: master.yaml sets it");
}

Status MayRun(const DecisionState& state, const UserRecord& user, const SetClusterMessage&) {
  return Authorize(state.tenancy, user, Permission::kUpdateMasterConfig, kEveryWorkspace,
                   "set the cluster message");
}

Result<Decision> DecideCommand(const DecisionState&, const SetClusterMessage& command,
                               const CommandMeta& meta) {
  events::Envelope event;
  if (command.clear) {
    event.mutable_cluster_message_cleared();
    return Decision{{std::move(event)}, "cluster-message"};
  }
  // Determined counts characters (runes), not bytes.
  size_t characters = 0;
  for (unsigned char c : command.message) characters += (c & 0xC0) != 0x80 ? 1 : 0;
  if (characters == 0) return Status::InvalidArgument("message must not be empty");
  if (characters > 250) {
    return Status::InvalidArgument("message must be at most 250 characters; got " +
                                   std::to_string(characters));
  }
  if (command.end_unix_micros != 0) {
    if (command.end_unix_micros < command.start_unix_micros) {
      return Status::InvalidArgument("end time must be after start time");
    }
    if (command.end_unix_micros <= meta.time_unix_micros) {
      return Status::InvalidArgument("end time must be after current time");
    }
  }
  auto* set = event.mutable_cluster_message_set();
  set->set_message(ValidUtf8Prefix(command.message, 1024));
  set->set_start_unix_micros(command.start_unix_micros);
  set->set_end_unix_micros(command.end_unix_micros);
  return Decision{{std::move(event)}, "cluster-message"};
}

Status MayRun(const DecisionState& state, const UserRecord& user, const ChangeMasterLogLevel&) {
  return Authorize(state.tenancy, user, Permission::kUpdateMasterConfig, kEveryWorkspace,
                   "change the master's log level");
}

Result<Decision> DecideCommand(const DecisionState&, const ChangeMasterLogLevel& command,
                               const CommandMeta&) {
  events::Envelope event;
  event.mutable_master_log_level_changed()->set_master_id(command.master_id);
  event.mutable_master_log_level_changed()->set_level(command.level);
  return Decision{{std::move(event)}, "master/" + command.master_id};
}

Result<Decision> DecideCommand(const DecisionState& state, const ConfigureAuthz& command,
                               const CommandMeta&) {
  if (command.type == events::AUTHZ_TYPE_UNSPECIFIED) {
    return Status::InvalidArgument("an authorization model is basic or rbac");
  }
  if (state.tenancy.authz == command.type) return NoChange("authz");
  events::Envelope event;
  event.mutable_authorization_configured()->set_type(command.type);
  return Decision{{std::move(event)}, "authz"};
}

}  // namespace cairn::commands
