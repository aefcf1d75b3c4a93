#include "commands/tenancy/tenancy.h"

#include <algorithm>

#include "base/encoding.h"

namespace cairn::commands {
namespace {

using events::Envelope;
using events::Role;

// Each role's permissions: a role grants its own and every lesser role's.
Role LeastRoleFor(Permission permission) {
  switch (permission) {
    case Permission::kViewWorkspace:
    case Permission::kViewModelRegistry:
    case Permission::kViewWebhooks:
      return events::ROLE_VIEWER;
    case Permission::kCreateExperiment:
    case Permission::kCreateNsc:
    case Permission::kCreateProject:
    case Permission::kUpdateTemplates:
    case Permission::kCreateModels:
    case Permission::kEditWebhooks:
      return events::ROLE_EDITOR;
    case Permission::kUpdateExperiment:
    case Permission::kUpdateNsc:
    case Permission::kUpdateProject:
    case Permission::kUpdateModels:
    case Permission::kUpdateWorkspace:
    case Permission::kAssignRoles:
      return events::ROLE_WORKSPACE_ADMIN;
    case Permission::kUpdateAgents:
    case Permission::kModifyPoolBindings:
    case Permission::kAssignClusterRoles:
    case Permission::kUpdateMasterConfig:
    case Permission::kUpdateGroups:
    case Permission::kSetWorkspaceAgentUser:
      return events::ROLE_CLUSTER_ADMIN;
  }
  return events::ROLE_CLUSTER_ADMIN;
}

// Under basic, what every active user may do; the rest takes the admin flag (owners change their
// own work through AuthorizeChange).
bool OpenUnderBasic(Permission permission) {
  switch (permission) {
    case Permission::kViewWorkspace:
    case Permission::kViewModelRegistry:
    case Permission::kCreateExperiment:
    case Permission::kCreateNsc:
    case Permission::kCreateProject:
    case Permission::kUpdateTemplates:
    case Permission::kCreateModels:
      return true;
    default:
      return false;
  }
}

constexpr Permission kAllPermissions[] = {Permission::kViewWorkspace,
                                          Permission::kViewModelRegistry,
                                          Permission::kCreateExperiment,
                                          Permission::kUpdateExperiment,
                                          Permission::kCreateNsc,
                                          Permission::kUpdateNsc,
                                          Permission::kCreateProject,
                                          Permission::kUpdateProject,
                                          Permission::kUpdateTemplates,
                                          Permission::kCreateModels,
                                          Permission::kUpdateModels,
                                          Permission::kUpdateWorkspace,
                                          Permission::kAssignRoles,
                                          Permission::kViewWebhooks,
                                          Permission::kEditWebhooks,
                                          Permission::kUpdateAgents,
                                          Permission::kModifyPoolBindings,
                                          Permission::kAssignClusterRoles,
                                          Permission::kUpdateMasterConfig,
                                          Permission::kUpdateGroups,
                                          Permission::kSetWorkspaceAgentUser};

// How strong a role is, for picking the one that decides: ModelRegistryViewer below Viewer.
int Strength(Role role) {
  switch (role) {
    case events::ROLE_MODEL_REGISTRY_VIEWER:
      return 1;
    case events::ROLE_VIEWER:
      return 2;
    case events::ROLE_EDITOR:
      return 3;
    case events::ROLE_WORKSPACE_ADMIN:
      return 4;
    case events::ROLE_CLUSTER_ADMIN:
      return 5;
    default:
      return 0;
  }
}

Role Stronger(Role a, Role b) { return Strength(a) >= Strength(b) ? a : b; }

std::string WorkspaceText(const TenancyState& state, int32_t workspace_id) {
  const WorkspaceRecord* workspace = state.FindWorkspace(workspace_id);
  return "workspace " + std::to_string(workspace_id) +
         (workspace != nullptr ? " (" + workspace->name + ")" : "");
}

}  // namespace

const char* PermissionName(Permission permission) {
  switch (permission) {
    case Permission::kViewWorkspace:
      return "PERMISSION_TYPE_VIEW_WORKSPACE";
    case Permission::kViewModelRegistry:
      return "PERMISSION_TYPE_VIEW_MODEL_REGISTRY";
    case Permission::kCreateExperiment:
      return "PERMISSION_TYPE_CREATE_EXPERIMENT";
    case Permission::kUpdateExperiment:
      return "PERMISSION_TYPE_UPDATE_EXPERIMENT";
    case Permission::kCreateNsc:
      return "PERMISSION_TYPE_CREATE_NSC";
    case Permission::kUpdateNsc:
      return "PERMISSION_TYPE_UPDATE_NSC";
    case Permission::kCreateProject:
      return "PERMISSION_TYPE_CREATE_PROJECT";
    case Permission::kUpdateProject:
      return "PERMISSION_TYPE_UPDATE_PROJECT";
    case Permission::kUpdateTemplates:
      return "PERMISSION_TYPE_UPDATE_TEMPLATES";
    case Permission::kCreateModels:
      return "PERMISSION_TYPE_CREATE_MODEL_REGISTRY";
    case Permission::kUpdateModels:
      return "PERMISSION_TYPE_DELETE_OTHER_USER_MODEL_REGISTRY";
    case Permission::kUpdateWorkspace:
      return "PERMISSION_TYPE_UPDATE_WORKSPACE";
    case Permission::kAssignRoles:
      return "PERMISSION_TYPE_ASSIGN_ROLES";
    case Permission::kViewWebhooks:
      return "PERMISSION_TYPE_VIEW_WEBHOOKS";
    case Permission::kEditWebhooks:
      return "PERMISSION_TYPE_EDIT_WEBHOOKS";
    case Permission::kUpdateAgents:
      return "PERMISSION_TYPE_UPDATE_AGENTS";
    case Permission::kModifyPoolBindings:
      return "PERMISSION_TYPE_MODIFY_RP_WORKSPACE_BINDINGS";
    case Permission::kAssignClusterRoles:
      return "PERMISSION_TYPE_UPDATE_ROLES";
    case Permission::kUpdateMasterConfig:
      return "PERMISSION_TYPE_UPDATE_MASTER_CONFIG";
    case Permission::kUpdateGroups:
      return "PERMISSION_TYPE_UPDATE_GROUP";
    case Permission::kSetWorkspaceAgentUser:
      return "PERMISSION_TYPE_SET_WORKSPACE_AGENT_USER_GROUP";
  }
  return "PERMISSION_TYPE_UNSPECIFIED";
}

bool Grants(Role role, Permission permission) {
  if (role == events::ROLE_MODEL_REGISTRY_VIEWER) {
    return permission == Permission::kViewModelRegistry;
  }
  return role != events::ROLE_UNSPECIFIED && Strength(role) >= Strength(LeastRoleFor(permission));
}

std::vector<Permission> PermissionsOf(Role role) {
  std::vector<Permission> granted;
  for (Permission permission : kAllPermissions) {
    if (Grants(role, permission)) granted.push_back(permission);
  }
  return granted;
}

const char* RoleName(Role role) {
  switch (role) {
    case events::ROLE_VIEWER:
      return "Viewer";
    case events::ROLE_EDITOR:
      return "Editor";
    case events::ROLE_WORKSPACE_ADMIN:
      return "WorkspaceAdmin";
    case events::ROLE_CLUSTER_ADMIN:
      return "ClusterAdmin";
    case events::ROLE_MODEL_REGISTRY_VIEWER:
      return "ModelRegistryViewer";
    default:
      return "none";
  }
}

std::optional<Role> ParseRoleName(std::string_view name) {
  for (Role role : AllRoles()) {
    if (name == RoleName(role)) return role;
  }
  return std::nullopt;
}

std::vector<Role> AllRoles() {
  return {events::ROLE_MODEL_REGISTRY_VIEWER, events::ROLE_VIEWER, events::ROLE_EDITOR,
          events::ROLE_WORKSPACE_ADMIN, events::ROLE_CLUSTER_ADMIN};
}

TenancyState::TenancyState() {
  WorkspaceRecord workspace;
  workspace.id = kUncategorizedWorkspace;
  workspace.name = "Uncategorized";
  workspace.immutable = true;
  workspaces[workspace.id] = workspace;
  workspace_ids[workspace.name] = workspace.id;
  ProjectRecord project;
  project.id = kUncategorizedProject;
  project.workspace_id = kUncategorizedWorkspace;
  project.name = "Uncategorized";
  project.immutable = true;
  projects[project.id] = project;
}

const ConfigPolicyRecord* TenancyState::FindConfigPolicies(int32_t workspace_id,
                                                           const std::string& workload_type) const {
  auto it = config_policies.find({workspace_id, workload_type});
  return it == config_policies.end() ? nullptr : &it->second;
}

const WorkspaceRecord* TenancyState::FindWorkspace(int32_t workspace_id) const {
  auto it = workspaces.find(workspace_id);
  return it == workspaces.end() ? nullptr : &it->second;
}

const PartialAgentUser* TenancyState::WorkspaceAgentUser(int32_t workspace_id) const {
  const WorkspaceRecord* workspace =
      FindWorkspace(workspace_id != 0 ? workspace_id : kUncategorizedWorkspace);
  return workspace != nullptr && workspace->agent_user ? &*workspace->agent_user : nullptr;
}

const WorkspaceRecord* TenancyState::FindWorkspace(const std::string& name) const {
  auto it = workspace_ids.find(name);
  return it == workspace_ids.end() ? nullptr : FindWorkspace(it->second);
}

const WorkspaceRecord* TenancyState::FindWorkspaceIgnoringCase(const std::string& name) const {
  const std::string wanted = AsciiLower(name);
  for (const auto& [id, workspace] : workspaces) {
    if (AsciiLower(workspace.name) == wanted) return &workspace;
  }
  return nullptr;
}

const ProjectRecord* TenancyState::FindProject(int32_t project_id) const {
  auto it = projects.find(project_id);
  return it == projects.end() ? nullptr : &it->second;
}

const ProjectRecord* TenancyState::FindProject(int32_t workspace_id,
                                               const std::string& name) const {
  for (const auto& [id, project] : projects) {
    if (project.workspace_id == workspace_id && project.name == name) return &project;
  }
  return nullptr;
}

Role TenancyState::RoleIn(const UserRecord& user, int32_t workspace_id) const {
  if (user.admin) return events::ROLE_CLUSTER_ADMIN;
  Role role = events::ROLE_UNSPECIFIED;
  if (auto global = roles.find({user.id, kEveryWorkspace}); global != roles.end()) {
    role = global->second;
  }
  auto here = roles.find({user.id, workspace_id});
  bool assigned_here = here != roles.end();
  if (assigned_here) role = Stronger(role, here->second);
  for (const auto& [key, group_role] : group_roles) {
    const auto& [group_id, scope] = key;
    if (scope != kEveryWorkspace && scope != workspace_id) continue;
    const GroupRecord* group = FindGroup(group_id);
    if (group == nullptr || group->members.count(user.id) == 0) continue;
    role = Stronger(role, group_role);
    assigned_here = assigned_here || scope == workspace_id;
  }
  if (!assigned_here && workspace_id == kUncategorizedWorkspace) {
    role = Stronger(role, events::ROLE_EDITOR);
  }
  return role;
}

const GroupRecord* TenancyState::FindGroup(int32_t group_id) const {
  auto it = groups.find(group_id);
  return it == groups.end() ? nullptr : &it->second;
}

const GroupRecord* TenancyState::FindGroup(const std::string& name) const {
  for (const auto& [id, group] : groups) {
    if (group.name == name) return &group;
  }
  return nullptr;
}

bool TenancyState::Allows(const UserRecord& user, Permission permission,
                          int32_t workspace_id) const {
  if (!RolesApply()) return user.admin || OpenUnderBasic(permission);
  // The strongest role held there grants whatever a weaker one would (tenancy.h, PermissionsOf).
  return Grants(RoleIn(user, workspace_id), permission);
}

bool TenancyState::PoolAllows(const std::string& pool, int32_t workspace_id) const {
  auto bound = pool_bindings.find(pool);
  return bound == pool_bindings.end() || bound->second.count(workspace_id) > 0;
}

void ApplyTenancy(TenancyState& state, const Envelope& event) {
  switch (event.payload_case()) {
    case Envelope::kWorkspaceCreated: {
      const auto& created = event.workspace_created();
      WorkspaceRecord& workspace = state.workspaces[created.workspace_id()];
      workspace = WorkspaceRecord{};
      workspace.id = created.workspace_id();
      workspace.name = created.name();
      workspace.owner_user_id = created.owner_user_id();
      workspace.default_compute_pool = created.default_compute_pool();
      workspace.default_aux_pool = created.default_aux_pool();
      if (created.has_agent_user()) workspace.agent_user = PartialAgentUserOf(created.agent_user());
      workspace.checkpoint_storage_json = created.checkpoint_storage_json();
      state.workspace_ids[workspace.name] = workspace.id;
      state.last_workspace_id = std::max(state.last_workspace_id, workspace.id);
      break;
    }
    case Envelope::kWorkspaceUpdated: {
      const auto& updated = event.workspace_updated();
      auto it = state.workspaces.find(updated.workspace_id());
      if (it == state.workspaces.end()) break;
      WorkspaceRecord& workspace = it->second;
      if (updated.has_name()) {
        state.workspace_ids.erase(workspace.name);
        workspace.name = updated.name();
        state.workspace_ids[workspace.name] = workspace.id;
      }
      if (updated.has_archived()) workspace.archived = updated.archived();
      if (updated.has_default_compute_pool()) {
        workspace.default_compute_pool = updated.default_compute_pool();
      }
      if (updated.has_default_aux_pool()) workspace.default_aux_pool = updated.default_aux_pool();
      if (updated.has_agent_user()) workspace.agent_user = PartialAgentUserOf(updated.agent_user());
      if (updated.has_checkpoint_storage_json()) {
        workspace.checkpoint_storage_json = updated.checkpoint_storage_json();
      }
      break;
    }
    case Envelope::kConfigPoliciesSet: {
      const auto& set = event.config_policies_set();
      ConfigPolicyRecord& policies =
          state.config_policies[{set.workspace_id(), set.workload_type()}];
      policies.invariant_config_json = set.invariant_config_json();
      policies.priority_limit =
          set.has_priority_limit() ? std::optional<int32_t>(set.priority_limit()) : std::nullopt;
      policies.max_slots =
          set.has_max_slots() ? std::optional<int32_t>(set.max_slots()) : std::nullopt;
      break;
    }
    case Envelope::kConfigPoliciesDeleted:
      state.config_policies.erase({event.config_policies_deleted().workspace_id(),
                                   event.config_policies_deleted().workload_type()});
      break;
    case Envelope::kWorkspaceDeleted: {
      const int32_t workspace_id = event.workspace_deleted().workspace_id();
      std::erase_if(state.config_policies,
                    [&](const auto& entry) { return entry.first.first == workspace_id; });
      auto it = state.workspaces.find(workspace_id);
      if (it == state.workspaces.end()) break;
      state.workspace_ids.erase(it->second.name);
      state.workspaces.erase(it);
      std::erase_if(state.projects,
                    [&](const auto& entry) { return entry.second.workspace_id == workspace_id; });
      std::erase_if(state.roles,
                    [&](const auto& entry) { return entry.first.second == workspace_id; });
      std::erase_if(state.group_roles,
                    [&](const auto& entry) { return entry.first.second == workspace_id; });
      for (auto& [pool, bound] : state.pool_bindings) bound.erase(workspace_id);
      std::erase_if(state.pool_bindings, [](const auto& entry) { return entry.second.empty(); });
      break;
    }
    case Envelope::kWorkspacePinned: {
      const auto& pinned = event.workspace_pinned();
      auto it = state.workspaces.find(pinned.workspace_id());
      if (it == state.workspaces.end()) break;
      if (pinned.pinned()) {
        it->second.pinned_by.insert(pinned.user_id());
      } else {
        it->second.pinned_by.erase(pinned.user_id());
      }
      break;
    }
    case Envelope::kProjectCreated: {
      const auto& created = event.project_created();
      ProjectRecord& project = state.projects[created.project_id()];
      project = ProjectRecord{};
      project.id = created.project_id();
      project.workspace_id = created.workspace_id();
      project.name = created.name();
      project.description = created.description();
      project.owner_user_id = created.owner_user_id();
      state.last_project_id = std::max(state.last_project_id, project.id);
      break;
    }
    case Envelope::kProjectUpdated: {
      const auto& updated = event.project_updated();
      auto it = state.projects.find(updated.project_id());
      if (it == state.projects.end()) break;
      if (updated.has_name()) it->second.name = updated.name();
      if (updated.has_description()) it->second.description = updated.description();
      if (updated.has_archived()) it->second.archived = updated.archived();
      break;
    }
    case Envelope::kProjectDeleted:
      state.projects.erase(event.project_deleted().project_id());
      break;
    case Envelope::kRoleAssigned: {
      const auto& assigned = event.role_assigned();
      if (assigned.group_id() != 0) {
        state.group_roles[{assigned.group_id(), assigned.workspace_id()}] = assigned.role();
      } else {
        state.roles[{assigned.user_id(), assigned.workspace_id()}] = assigned.role();
      }
      break;
    }
    case Envelope::kRoleRemoved: {
      const auto& removed = event.role_removed();
      if (removed.group_id() != 0) {
        state.group_roles.erase({removed.group_id(), removed.workspace_id()});
      } else {
        state.roles.erase({removed.user_id(), removed.workspace_id()});
      }
      break;
    }
    case Envelope::kGroupCreated: {
      const auto& created = event.group_created();
      GroupRecord& group = state.groups[created.group_id()];
      group.id = created.group_id();
      group.name = created.name();
      group.members = {created.user_ids().begin(), created.user_ids().end()};
      state.last_group_id = std::max(state.last_group_id, created.group_id());
      break;
    }
    case Envelope::kGroupUpdated: {
      const auto& updated = event.group_updated();
      auto it = state.groups.find(updated.group_id());
      if (it == state.groups.end()) break;
      if (updated.has_name()) it->second.name = updated.name();
      for (int32_t user_id : updated.added_user_ids()) it->second.members.insert(user_id);
      for (int32_t user_id : updated.removed_user_ids()) it->second.members.erase(user_id);
      break;
    }
    case Envelope::kGroupDeleted: {
      const int32_t group_id = event.group_deleted().group_id();
      state.groups.erase(group_id);
      std::erase_if(state.group_roles,
                    [&](const auto& entry) { return entry.first.first == group_id; });
      break;
    }
    case Envelope::kAuthorizationConfigured:
      state.authz = event.authorization_configured().type();
      break;
    case Envelope::kPoolBindingsChanged: {
      const auto& changed = event.pool_bindings_changed();
      if (changed.workspace_ids_size() == 0) {
        state.pool_bindings.erase(changed.pool_name());
      } else {
        state.pool_bindings[changed.pool_name()] = {changed.workspace_ids().begin(),
                                                    changed.workspace_ids().end()};
      }
      break;
    }
    default:
      break;
  }
}

Status Authorize(const TenancyState& state, const UserRecord& user, Permission permission,
                 int32_t workspace_id, const std::string& what) {
  if (state.Allows(user, permission, workspace_id)) return Status::Ok();
  if (!state.RolesApply()) {
    return Status::PermissionDenied("user " + user.username + " may not " + what +
                                    ": only admins may (security.authz.type: basic)");
  }
  const Role role = state.RoleIn(user, workspace_id);
  const bool cluster = LeastRoleFor(permission) == events::ROLE_CLUSTER_ADMIN;
  return Status::PermissionDenied("user " + user.username + " may not " + what + ": it needs " +
                                  PermissionName(permission) +
                                  (cluster ? " (cluster admins only)"
                                           : " in " + WorkspaceText(state, workspace_id) +
                                                 ", where their role is " + RoleName(role)));
}

Status AuthorizeChange(const TenancyState& state, const UserRecord& user, Permission permission,
                       int32_t workspace_id, bool owns, const std::string& what) {
  if (owns) return Status::Ok();
  Status allowed = Authorize(state, user, permission, workspace_id, what);
  if (allowed.ok()) return allowed;
  if (!state.RolesApply()) {
    return Status::PermissionDenied("user " + user.username + " may not " + what +
                                    ": only its owner or an admin may");
  }
  return Status::PermissionDenied(allowed.message() + "; the owner may change it too");
}

Status CheckTenancyName(const std::string& kind, const std::string& name) {
  if (name.empty() || name.size() > 80) {
    return Status::InvalidArgument(kind + " name must have 1 to 80 characters");
  }
  if (name.find_first_not_of(' ') == std::string::npos) {
    return Status::InvalidArgument(kind + " name must not be only spaces");
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(kind + " name must not contain control characters");
    }
  }
  return Status::Ok();
}

}  // namespace cairn::commands
