#include "api/render/tenancy_json.h"

#include <algorithm>

#include "base/encoding.h"
#include "commands/tenancy/tenancy.h"

namespace cairn::api {

using nlohmann::json;

namespace {

std::string UsernameOf(const Usernames& usernames, int32_t user_id) {
  auto it = usernames.find(user_id);
  return it == usernames.end() ? "" : it->second;
}

// Determined's project key: up to five letters and digits of the name, upper case, then the id.
std::string ProjectKey(const views::ProjectView& project) {
  std::string key;
  for (char c : project.name()) {
    if (key.size() == 5) break;
    if (std::isalnum(static_cast<unsigned char>(c))) {
      key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  return key + std::to_string(project.id());
}

json ScopeMask(bool cluster, bool workspace) {
  return {{"cluster", cluster}, {"workspace", workspace}};
}

}  // namespace

json WorkspaceJson(const views::WorkspaceView& workspace, int32_t viewer_id,
                   const Usernames& usernames) {
  const auto& pinned_by = workspace.pinned_by();
  json out = {
      {"id", workspace.id()},
      {"name", workspace.name()},
      {"archived", workspace.archived()},
      {"errorMessage", ""},
      {"immutable", workspace.immutable()},
      {"numExperiments", workspace.num_experiments()},
      {"numProjects", workspace.project_ids_size()},
      {"pinned", std::find(pinned_by.begin(), pinned_by.end(), viewer_id) != pinned_by.end()},
      {"state", "WORKSPACE_STATE_UNSPECIFIED"},
      {"userId", workspace.owner_user_id()},
      {"username", UsernameOf(usernames, workspace.owner_user_id())},
      {"checkpointStorageConfig", nullptr}};
  if (!workspace.checkpoint_storage_json().empty()) {
    // Credentials masked for every reader (events/redaction.h).
    json config = {{"checkpoint_storage", json::parse(workspace.checkpoint_storage_json(), nullptr,
                                                      /*allow_exceptions=*/false)}};
    RedactConfig(config, Audience::kOwner);
    out["checkpointStorageConfig"] = config["checkpoint_storage"];
  }
  if (!workspace.default_compute_pool().empty()) {
    out["defaultComputePool"] = workspace.default_compute_pool();
  }
  if (!workspace.default_aux_pool().empty()) out["defaultAuxPool"] = workspace.default_aux_pool();
  if (workspace.has_agent_user()) {
    const auto& linked = workspace.agent_user();
    json account = json::object();
    if (linked.has_uid()) account["agentUid"] = linked.uid();
    if (linked.has_gid()) account["agentGid"] = linked.gid();
    if (linked.has_user()) account["agentUser"] = linked.user();
    if (linked.has_group()) account["agentGroup"] = linked.group();
    out["agentUserGroup"] = std::move(account);
  }
  return out;
}

json ProjectJson(const views::ProjectView& project, const std::string& workspace_name,
                 const Usernames& usernames) {
  return {{"id", project.id()},
          {"name", project.name()},
          {"key", ProjectKey(project)},
          {"description", project.description()},
          {"archived", project.archived()},
          {"errorMessage", ""},
          {"immutable", project.immutable()},
          {"notes", json::array()},
          {"numActiveExperiments", project.num_active_experiments()},
          {"numExperiments", project.num_experiments()},
          {"numRuns", 0},
          {"state", "WORKSPACE_STATE_UNSPECIFIED"},
          {"userId", project.owner_user_id()},
          {"username", UsernameOf(usernames, project.owner_user_id())},
          {"workspaceId", project.workspace_id()},
          {"workspaceName", workspace_name}};
}

json RoleJson(events::Role role) {
  const bool cluster_only = role == events::ROLE_CLUSTER_ADMIN;
  json permissions = json::array();
  for (commands::Permission permission : commands::PermissionsOf(role)) {
    std::string name = commands::PermissionName(permission);
    std::string readable = AsciiLower(name.substr(std::string("PERMISSION_TYPE_").size()));
    std::replace(readable.begin(), readable.end(), '_', ' ');
    permissions.push_back(
        {{"id", name}, {"name", readable}, {"scopeTypeMask", ScopeMask(true, !cluster_only)}});
  }
  return {{"roleId", static_cast<int>(role)},
          {"name", commands::RoleName(role)},
          {"permissions", permissions},
          {"scopeTypeMask", ScopeMask(true, !cluster_only)}};
}

json RoleWithAssignmentsJson(events::Role role,
                             const std::vector<views::RoleAssignmentView>& assignments) {
  json users = json::array();
  json groups = json::array();
  for (const auto& assignment : assignments) {
    if (assignment.role() != role) continue;
    json scope = {
        {"role", {{"roleId", static_cast<int>(role)}, {"name", commands::RoleName(role)}}},
        {"scopeCluster", assignment.workspace_id() == 0}};
    if (assignment.workspace_id() != 0) scope["scopeWorkspaceId"] = assignment.workspace_id();
    if (assignment.group_id() != 0) {
      groups.push_back({{"groupId", assignment.group_id()}, {"roleAssignment", scope}});
    } else {
      users.push_back({{"userId", assignment.user_id()}, {"roleAssignment", scope}});
    }
  }
  return {
      {"role", RoleJson(role)}, {"userRoleAssignments", users}, {"groupRoleAssignments", groups}};
}

}  // namespace cairn::api
