#include "api/handlers/rbac.h"

#include <set>

#include "api/handlers/experiment_common.h"
#include "api/render/tenancy_json.h"
#include "api/render/user_json.h"
#include "api/rest_util.h"
#include "commands/tenancy/tenancy.h"

namespace cairn::api {

using nlohmann::json;

namespace {

json RoleList(const std::vector<events::Role>& roles) {
  json list = json::array();
  for (events::Role role : roles) list.push_back(RoleJson(role));
  return list;
}

net::Response AnswerRoles(Call& call, std::vector<events::Role> roles) {
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  Paging from_body = *paging;
  for (const auto& [key, target] :
       {std::pair{"offset", &from_body.offset}, std::pair{"limit", &from_body.limit}}) {
    auto value = GetInt(*body, key, key);
    if (!value.ok()) return Error(value.status());
    if (value->has_value() && **value >= 0) *target = static_cast<size_t>(**value);
  }
  auto [page, pagination] = Page(std::move(roles), from_body);
  return Ok({{"roles", RoleList(page)}, {"pagination", pagination}});
}

// A role id of the request (Determined numbers the built-in roles; Cairn's are 1-5).
Result<events::Role> RoleFromId(const json& value) {
  if (!value.is_number_integer()) return Status::InvalidArgument("roleId: expected an integer");
  const int id = value.get<int>();
  for (events::Role role : commands::AllRoles()) {
    if (static_cast<int>(role) == id) return role;
  }
  return Status::NotFound("role " + std::to_string(id) + " not found (Cairn's roles are 1-5: " +
                          "Viewer, Editor, WorkspaceAdmin, ClusterAdmin, ModelRegistryViewer)");
}

// userRoleAssignments [{userId, roleAssignment}] and groupRoleAssignments [{groupId,
// roleAssignment}], either or both.
Result<commands::ChangeRoles> ReadAssignments(Call& call, bool remove) {
  CAIRN_ASSIGN_OR_RETURN(json body, call.Body());
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(body, "", {"userRoleAssignments", "groupRoleAssignments"}));
  commands::ChangeRoles change;
  change.remove = remove;
  for (const char* list : {"userRoleAssignments", "groupRoleAssignments"}) {
    if (Present(body, list) && !body.at(list).is_array()) {
      return Status::InvalidArgument(std::string(list) + ": expected a list");
    }
  }
  const json none = json::array();
  const json& users = Present(body, "userRoleAssignments") ? body.at("userRoleAssignments") : none;
  const json& groups =
      Present(body, "groupRoleAssignments") ? body.at("groupRoleAssignments") : none;
  if (users.empty() && groups.empty()) {
    return Status::InvalidArgument(
        "userRoleAssignments or groupRoleAssignments: give at least one assignment");
  }
  std::vector<json> items(users.begin(), users.end());
  items.insert(items.end(), groups.begin(), groups.end());
  for (const auto& item : items) {
    const bool group = item.is_object() && item.contains("groupId");
    const char* holder = group ? "groupId" : "userId";
    if (!item.is_object() || !item.contains(holder) || !item[holder].is_number_integer() ||
        !item.contains("roleAssignment") || !item["roleAssignment"].is_object()) {
      return Status::InvalidArgument(
          "role assignments: each needs userId (or groupId) and roleAssignment {role: {roleId}}");
    }
    const json& assignment = item["roleAssignment"];
    if (!assignment.contains("role") || !assignment["role"].is_object() ||
        !assignment["role"].contains("roleId")) {
      return Status::InvalidArgument("roleAssignment.role.roleId: required");
    }
    CAIRN_ASSIGN_OR_RETURN(events::Role role, RoleFromId(assignment["role"]["roleId"]));
    int32_t workspace_id = commands::kEveryWorkspace;
    if (Present(assignment, "scopeWorkspaceId")) {
      if (!assignment["scopeWorkspaceId"].is_number_integer()) {
        return Status::InvalidArgument("scopeWorkspaceId: expected an integer");
      }
      workspace_id = assignment["scopeWorkspaceId"].get<int32_t>();
    }
    if (group) {
      change.assignments.push_back({0, workspace_id, role, item["groupId"].get<int32_t>()});
    } else {
      change.assignments.push_back({item["userId"].get<int32_t>(), workspace_id, role});
    }
  }
  return change;
}

net::Response ChangeAssignments(Call& call, bool remove) {
  auto change = ReadAssignments(call, remove);
  if (!change.ok()) return Error(change.status());
  auto outcome = call.ExecuteAndShow(*change);
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

}  // namespace

net::Response SearchRoles(Call& call) { return AnswerRoles(call, commands::AllRoles()); }

net::Response SearchAssignableRoles(Call& call) {
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  std::vector<events::Role> roles = commands::AllRoles();
  // In a workspace, only the workspace roles can be assigned.
  if (Present(*body, "workspaceId")) std::erase(roles, events::ROLE_CLUSTER_ADMIN);
  return AnswerRoles(call, roles);
}

net::Response RolesByIds(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (!Present(*body, "roleIds") || !body->at("roleIds").is_array()) {
    return Error(Status::InvalidArgument("roleIds: expected a list of role ids"));
  }
  auto assignments = call.services().projections->ListRoleAssignments();
  if (!assignments.ok()) return Error(assignments.status());
  json roles = json::array();
  for (const auto& id : body->at("roleIds")) {
    auto role = RoleFromId(id);
    if (!role.ok()) return Error(role.status());
    roles.push_back(RoleWithAssignmentsJson(*role, *assignments));
  }
  return Ok({{"roles", roles}});
}

net::Response RolesOfUser(Call& call) {
  auto user_id = ParseInt32Id(call.Param("userId"), "user");
  if (!user_id.ok()) return Error(user_id.status());
  auto assignments = call.services().projections->ListRoleAssignments();
  if (!assignments.ok()) return Error(assignments.status());
  // The user's own assignments and those of the groups they belong to.
  std::set<int32_t> groups;
  for (const auto& [id, group] : call.tenancy().groups) {
    if (group.members.count(*user_id)) groups.insert(id);
  }
  std::vector<views::RoleAssignmentView> own;
  for (const auto& assignment : *assignments) {
    const bool held = assignment.group_id() != 0 ? groups.count(assignment.group_id()) > 0
                                                 : assignment.user_id() == *user_id;
    if (held && call.CanView(assignment.workspace_id() == 0 ? kUncategorizedWorkspace
                                                            : assignment.workspace_id())) {
      own.push_back(assignment);
    }
  }
  json roles = json::array();
  for (events::Role role : commands::AllRoles()) {
    auto held = RoleWithAssignmentsJson(role, own);
    if (!held["userRoleAssignments"].empty() || !held["groupRoleAssignments"].empty()) {
      roles.push_back(held);
    }
  }
  return Ok({{"roles", roles}});
}

net::Response WorkspaceMembers(Call& call) {
  auto workspace_id = ParseInt32Id(call.Param("id"), "workspace");
  if (!workspace_id.ok()) return Error(workspace_id.status());
  if (!call.CanView(*workspace_id)) {
    return Error(Status::NotFound("workspace " + call.Param("id") + " not found"));
  }
  auto assignments = call.services().projections->ListRoleAssignments();
  if (!assignments.ok()) return Error(assignments.status());
  auto users = call.services().projections->ListUsers();
  if (!users.ok()) return Error(users.status());
  std::vector<views::RoleAssignmentView> here;
  std::set<int32_t> member_ids;
  std::set<int32_t> group_ids;
  for (const auto& assignment : *assignments) {
    if (assignment.workspace_id() != *workspace_id) continue;
    here.push_back(assignment);
    if (assignment.group_id() != 0) {
      group_ids.insert(assignment.group_id());
    } else {
      member_ids.insert(assignment.user_id());
    }
  }
  json roles = json::array();
  for (events::Role role : commands::AllRoles()) {
    auto held = RoleWithAssignmentsJson(role, here);
    if (!held["userRoleAssignments"].empty() || !held["groupRoleAssignments"].empty()) {
      roles.push_back(held);
    }
  }
  json members = json::array();
  for (const auto& user : *users) {
    if (member_ids.count(user.id())) members.push_back(UserJson(user));
  }
  json groups = json::array();
  for (int32_t group_id : group_ids) {
    if (const commands::GroupRecord* group = call.tenancy().FindGroup(group_id)) {
      groups.push_back({{"groupId", group->id}, {"name", group->name}});
    }
  }
  return Ok({{"assignments", roles}, {"groups", groups}, {"usersAssignedDirectly", members}});
}

net::Response AddRoleAssignments(Call& call) { return ChangeAssignments(call, false); }
net::Response RemoveRoleAssignments(Call& call) { return ChangeAssignments(call, true); }

net::Response PermissionsSummary(Call& call) {
  const commands::TenancyState& tenancy = call.tenancy();
  const commands::UserRecord& me = call.user_record();
  // Under basic no role applies (`det rbac` itself says RBAC is off, from /api/v1/master).
  if (!tenancy.RolesApply()) {
    return Ok({{"roles", json::array()}, {"assignments", json::array()}});
  }
  // The caller's effective role in every workspace, grouped by role.
  std::map<events::Role, std::vector<int32_t>> scopes;
  bool cluster_admin = false;
  // RoleIn counts the admin flag, cluster-wide roles and those of the caller's groups.
  cluster_admin = tenancy.RoleIn(me, commands::kEveryWorkspace) == events::ROLE_CLUSTER_ADMIN;
  json assignments = json::array();
  std::set<events::Role> used;
  if (cluster_admin) {
    assignments.push_back({{"roleId", static_cast<int>(events::ROLE_CLUSTER_ADMIN)},
                           {"scopeCluster", true},
                           {"scopeWorkspaceIds", json::array()}});
    used.insert(events::ROLE_CLUSTER_ADMIN);
  } else {
    for (const auto& [id, workspace] : tenancy.workspaces) {
      events::Role role = tenancy.RoleIn(me, id);
      if (role != events::ROLE_UNSPECIFIED) scopes[role].push_back(id);
    }
    for (const auto& [role, ids] : scopes) {
      assignments.push_back({{"roleId", static_cast<int>(role)},
                             {"scopeCluster", false},
                             {"scopeWorkspaceIds", ids}});
      used.insert(role);
    }
  }
  return Ok({{"roles", RoleList({used.begin(), used.end()})}, {"assignments", assignments}});
}

}  // namespace cairn::api
