// Workspaces, projects, roles and resource-pool bindings on the write side: the state their
// events fold into, and who may do what there. Pure: the decider and the edge ask the same
// questions of the same state (the edge of the copy the writer publishes after each batch).
//
// Roles (Determined's built-in ones): a Viewer reads a workspace's work; an Editor also creates
// work there; a WorkspaceAdmin also changes anyone's work, the workspace itself and its roles; a
// ClusterAdmin (or a user with the admin flag) does everything. A role is held in one workspace
// or, with workspace 0, in every workspace. The owner of a piece of work may always change it.
// Every user is an Editor of the built-in Uncategorized workspace unless a role assigned there
// says otherwise, so a cluster without workspaces works as before.
//
// Under security.authz.type basic (Determined's open-source model, AuthorizationConfigured),
// roles do not apply: every active user sees everything and creates work, projects, models and
// templates anywhere; changing someone else's work, a workspace or a project (a workspace's owner
// changes its projects), and every cluster-wide permission, takes the admin flag.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "commands/identity/identity.h"
#include "events.pb.h"
#include "events/workspace_defaults.h"

namespace cairn::commands {

inline constexpr int32_t kEveryWorkspace = 0;  // the scope of a cluster-wide role

// What a role allows, by Determined's PERMISSION_TYPE_* names (PermissionName).
enum class Permission {
  kViewWorkspace,
  kViewModelRegistry,  // the workspace's models and versions
  kCreateExperiment,
  kUpdateExperiment,  // anyone's; owners change their own without it
  kCreateNsc,         // commands (and later notebooks, shells, TensorBoards)
  kUpdateNsc,
  kCreateProject,
  kUpdateProject,
  kUpdateTemplates,
  kCreateModels,     // models in the registry, and their versions
  kUpdateModels,     // anyone's models and versions; owners change their own without it
  kUpdateWorkspace,  // rename, archive, delete, default pools
  kAssignRoles,
  kViewWebhooks,  // the workspace's webhooks (and every global one)
  kEditWebhooks,  // create, change, delete, test the workspace's webhooks
  // Cluster admins' only:
  kUpdateAgents,           // enable, disable
  kModifyPoolBindings,     // bind pools to workspaces
  kAssignClusterRoles,     // roles held in every workspace
  kUpdateMasterConfig,     // the cluster message, the master's log level
  kUpdateGroups,           // create, rename, delete user groups and change their members
  kSetWorkspaceAgentUser,  // link a workspace's tasks to a Unix account on the agents
};

const char* PermissionName(Permission permission);  // "PERMISSION_TYPE_UPDATE_EXPERIMENT"
// Every permission `role` grants, in enum order. Viewer, Editor, WorkspaceAdmin and ClusterAdmin
// each grant the one before's and more; ModelRegistryViewer grants kViewModelRegistry alone,
// which every other role grants too.
std::vector<Permission> PermissionsOf(events::Role role);
bool Grants(events::Role role, Permission permission);
const char* RoleName(events::Role role);  // "Viewer", "Editor", "WorkspaceAdmin", ...
// A role by Determined's name ("Editor"); nullopt for an unknown one.
std::optional<events::Role> ParseRoleName(std::string_view name);
// The built-in roles, least to most (ModelRegistryViewer first): Determined's role ids are these
// numbers.
std::vector<events::Role> AllRoles();

struct WorkspaceRecord {
  int32_t id = 0;
  std::string name;
  int32_t owner_user_id = 0;
  bool archived = false;
  bool immutable = false;            // the built-in Uncategorized workspace
  std::string default_compute_pool;  // "" = the cluster's
  std::string default_aux_pool;
  std::set<int32_t> pinned_by;                 // user ids
  std::optional<PartialAgentUser> agent_user;  // laid over its tasks' owners' links (SetRunAs)
  // Its experiments' checkpoint storage when they name none; "" = the master's.
  std::string checkpoint_storage_json;
};

struct ProjectRecord {
  int32_t id = 0;
  int32_t workspace_id = 0;
  std::string name;
  std::string description;
  int32_t owner_user_id = 0;
  bool archived = false;
  bool immutable = false;  // the built-in Uncategorized project
};

// A user group: its members hold the group's roles (TenancyState::group_roles).
struct GroupRecord {
  int32_t id = 0;
  std::string name;
  std::set<int32_t> members;  // user ids
  bool operator==(const GroupRecord&) const = default;
};

// One scope's config policies for one kind of work (ConfigPoliciesSet).
struct ConfigPolicyRecord {
  std::string invariant_config_json;  // "" = none
  std::optional<int32_t> priority_limit;
  std::optional<int32_t> max_slots;
  bool operator==(const ConfigPolicyRecord&) const = default;
};

struct TenancyState {
  TenancyState();  // holds the built-in Uncategorized workspace and project

  std::map<int32_t, WorkspaceRecord> workspaces;
  std::map<std::string, int32_t> workspace_ids;  // by name
  std::map<int32_t, ProjectRecord> projects;
  std::map<std::pair<int32_t, int32_t>, events::Role> roles;  // (user, workspace or 0) -> role
  std::map<int32_t, GroupRecord> groups;
  std::map<std::pair<int32_t, int32_t>, events::Role> group_roles;  // (group, workspace or 0)
  std::map<std::string, std::set<int32_t>> pool_bindings;           // bound pools only
  // (workspace, or kEveryWorkspace for the global ones; "EXPERIMENT" or "NTSC") -> policies
  std::map<std::pair<int32_t, std::string>, ConfigPolicyRecord> config_policies;
  int32_t last_workspace_id = kUncategorizedWorkspace;
  int32_t last_project_id = kUncategorizedProject;
  int32_t last_group_id = 0;
  // UNSPECIFIED (a log from before AuthorizationConfigured) decides as RBAC did.
  events::AuthzType authz = events::AUTHZ_TYPE_UNSPECIFIED;

  bool RolesApply() const { return authz != events::AUTHZ_TYPE_BASIC; }
  const ConfigPolicyRecord* FindConfigPolicies(int32_t workspace_id,
                                               const std::string& workload_type) const;
  const WorkspaceRecord* FindWorkspace(int32_t workspace_id) const;
  const WorkspaceRecord* FindWorkspace(const std::string& name) const;
  // The workspace's agent user link (SetRunAs), or nullptr; 0 is the built-in workspace.
  const PartialAgentUser* WorkspaceAgentUser(int32_t workspace_id) const;
  // A workspace whose name equals `name` ignoring ASCII case (Determined's CLI looks names up
  // both ways, so two names may not differ only by case).
  const WorkspaceRecord* FindWorkspaceIgnoringCase(const std::string& name) const;
  const ProjectRecord* FindProject(int32_t project_id) const;
  const GroupRecord* FindGroup(int32_t group_id) const;
  const GroupRecord* FindGroup(const std::string& name) const;
  // A project of `workspace_id` named `name`, or nullptr.
  const ProjectRecord* FindProject(int32_t workspace_id, const std::string& name) const;

  // The role that decides what `user` may do in `workspace_id`, the strongest they hold there
  // themselves or through a group they belong to (ROLE_UNSPECIFIED: none).
  events::Role RoleIn(const UserRecord& user, int32_t workspace_id) const;
  bool Allows(const UserRecord& user, Permission permission, int32_t workspace_id) const;
  // Whether `pool` takes work from `workspace_id`: a pool bound to no workspace is shared.
  bool PoolAllows(const std::string& pool, int32_t workspace_id) const;
};

// Folds a tenancy event into the state; other events are ignored.
void ApplyTenancy(TenancyState& state, const events::Envelope& event);

// OK when `user` holds `permission` in `workspace_id`; otherwise PermissionDenied naming the
// permission, the workspace and the user's role there. `what` says what was asked ("kill task
// 5f2c").
Status Authorize(const TenancyState& state, const UserRecord& user, Permission permission,
                 int32_t workspace_id, const std::string& what);
// For a change to existing work: its owner (`owns`) may, and so may anyone holding `permission`
// in its workspace (under basic: an admin).
Status AuthorizeChange(const TenancyState& state, const UserRecord& user, Permission permission,
                       int32_t workspace_id, bool owns, const std::string& what);

// A workspace or project name: 1-80 characters, no control characters, not only spaces.
Status CheckTenancyName(const std::string& kind, const std::string& name);

}  // namespace cairn::commands
