#include "api/handlers/groups.h"

#include <map>

#include "api/render/tenancy_json.h"
#include "api/render/user_json.h"
#include "api/rest_util.h"
#include "commands/tenancy/tenancy.h"

namespace cairn::api {

using nlohmann::json;

namespace {

Result<views::GroupView> FindGroupView(Call& call, int32_t group_id) {
  CAIRN_ASSIGN_OR_RETURN(auto groups, call.services().projections->ListGroups());
  for (auto& group : groups) {
    if (group.group_id() == group_id) return std::move(group);
  }
  return Status::NotFound("group " + std::to_string(group_id) + " not found");
}

Result<int32_t> GroupIdParam(Call& call) { return ParseInt32Id(call.Param("groupId"), "group"); }

// v1GroupDetails: the group with its members as users.
Result<json> GroupDetailsJson(Call& call, const views::GroupView& group) {
  CAIRN_ASSIGN_OR_RETURN(auto users, call.services().projections->ListUsers());
  std::map<int32_t, const views::UserView*> by_id;
  for (const auto& user : users) by_id[user.id()] = &user;
  json members = json::array();
  for (int32_t user_id : group.user_ids()) {
    if (auto it = by_id.find(user_id); it != by_id.end()) members.push_back(UserJson(*it->second));
  }
  return json{{"groupId", group.group_id()}, {"name", group.name()}, {"users", members}};
}

net::Response AnswerGroup(Call& call, int32_t group_id, uint64_t offset) {
  auto group = FindGroupView(call, group_id);
  if (!group.ok()) return Error(group.status());
  auto details = GroupDetailsJson(call, *group);
  if (!details.ok()) return Error(details.status());
  return Ok({{"group", *details}}, offset);
}

// A list of user ids under `key` ("addUsers"); empty when absent.
Result<std::vector<int32_t>> UserIds(const json& body, const char* key) {
  std::vector<int32_t> ids;
  if (!Present(body, key)) return ids;
  const json& list = body.at(key);
  if (!list.is_array()) return Status::InvalidArgument(std::string(key) + ": expected a list");
  for (const json& id : list) {
    if (!id.is_number_integer() || id.get<int64_t>() <= 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Status::InvalidArgument(std::string(key) + ": expected user ids");
    }
    ids.push_back(id.get<int32_t>());
  }
  return ids;
}

}  // namespace

net::Response SearchGroups(Call& call) {
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  if (auto known = CheckKnownKeys(*body, "", {"limit", "offset", "name", "userId"}); !known.ok()) {
    return Error(known);
  }
  auto name = GetString(*body, "name", "name", false);
  if (!name.ok()) return Error(name.status());
  auto user_id = GetInt32(*body, "userId", "userId");
  if (!user_id.ok()) return Error(user_id.status());
  Paging paging;
  for (const auto& [key, target] :
       {std::pair{"offset", &paging.offset}, std::pair{"limit", &paging.limit}}) {
    auto value = GetInt(*body, key, key);
    if (!value.ok()) return Error(value.status());
    if (value->has_value() && **value < 0) {
      return Error(Status::InvalidArgument(std::string(key) + ": must not be negative"));
    }
    if (value->has_value()) *target = static_cast<size_t>(**value);
  }
  auto groups = call.services().projections->ListGroups();
  if (!groups.ok()) return Error(groups.status());
  std::vector<views::GroupView> found;
  for (auto& group : *groups) {
    if (!name->empty() && group.name() != *name) continue;
    if (user_id->has_value() && std::find(group.user_ids().begin(), group.user_ids().end(),
                                          **user_id) == group.user_ids().end()) {
      continue;
    }
    found.push_back(std::move(group));
  }
  auto [page, pagination] = Page(std::move(found), paging);
  json results = json::array();
  for (const auto& group : page) {
    results.push_back({{"group", {{"groupId", group.group_id()}, {"name", group.name()}}},
                       {"numMembers", group.user_ids_size()}});
  }
  return Ok({{"groups", results}, {"pagination", pagination}});
}

net::Response GetGroupRoute(Call& call) {
  auto group_id = GroupIdParam(call);
  if (!group_id.ok()) return Error(group_id.status());
  return AnswerGroup(call, *group_id, 0);
}

net::Response CreateGroupRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (auto known = CheckKnownKeys(*body, "", {"name", "addUsers"}); !known.ok()) {
    return Error(known);
  }
  commands::CreateGroup create;
  auto name = GetString(*body, "name", "name", true);
  if (!name.ok()) return Error(name.status());
  create.name = *name;
  auto users = UserIds(*body, "addUsers");
  if (!users.ok()) return Error(users.status());
  create.user_ids = std::move(*users);
  auto outcome = call.ExecuteAndShow(create);
  if (!outcome.ok()) return Error(outcome.status());
  auto group_id =
      ParseInt32Id(outcome->entity_id.substr(outcome->entity_id.find('/') + 1), "group");
  if (!group_id.ok()) return Error(group_id.status());
  return AnswerGroup(call, *group_id, outcome->offset);
}

net::Response UpdateGroupRoute(Call& call) {
  auto group_id = GroupIdParam(call);
  if (!group_id.ok()) return Error(group_id.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (auto known = CheckKnownKeys(*body, "", {"groupId", "name", "addUsers", "removeUsers"});
      !known.ok()) {
    return Error(known);
  }
  auto in_body = GetInt32(*body, "groupId", "groupId");
  if (!in_body.ok()) return Error(in_body.status());
  if (in_body->has_value() && **in_body != *group_id) {
    return Error(Status::InvalidArgument("groupId in the body (" + std::to_string(**in_body) +
                                         ") differs from the path's (" + std::to_string(*group_id) +
                                         ")"));
  }
  commands::UpdateGroup update;
  update.group_id = *group_id;
  auto name = OptionalString(*body, "name");
  if (!name.ok()) return Error(name.status());
  update.name = *name;
  auto added = UserIds(*body, "addUsers");
  if (!added.ok()) return Error(added.status());
  update.add_user_ids = std::move(*added);
  auto removed = UserIds(*body, "removeUsers");
  if (!removed.ok()) return Error(removed.status());
  update.remove_user_ids = std::move(*removed);
  auto outcome = call.ExecuteAndShow(update);
  if (!outcome.ok()) return Error(outcome.status());
  return AnswerGroup(call, *group_id, outcome->offset);
}

net::Response DeleteGroupRoute(Call& call) {
  auto group_id = GroupIdParam(call);
  if (!group_id.ok()) return Error(group_id.status());
  auto outcome = call.ExecuteAndShow(commands::DeleteGroup{.group_id = *group_id});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response RolesOfGroup(Call& call) {
  auto group_id = GroupIdParam(call);
  if (!group_id.ok()) return Error(group_id.status());
  if (auto group = FindGroupView(call, *group_id); !group.ok()) return Error(group.status());
  auto assignments = call.services().projections->ListRoleAssignments();
  if (!assignments.ok()) return Error(assignments.status());
  // Determined's shape: roles[i] goes with assignments[i], one summary per role.
  std::map<events::Role, json> summaries;
  for (const auto& assignment : *assignments) {
    if (assignment.group_id() != *group_id) continue;
    json& summary = summaries[assignment.role()];
    if (summary.is_null()) {
      summary = {{"roleId", static_cast<int>(assignment.role())},
                 {"scopeWorkspaceIds", json::array()},
                 {"scopeCluster", false}};
    }
    if (assignment.workspace_id() == commands::kEveryWorkspace) {
      summary["scopeCluster"] = true;
    } else if (call.CanView(assignment.workspace_id())) {
      summary["scopeWorkspaceIds"].push_back(assignment.workspace_id());
    }
  }
  json roles = json::array();
  json summary_list = json::array();
  for (auto& [role, summary] : summaries) {
    if (!summary["scopeCluster"].get<bool>() && summary["scopeWorkspaceIds"].empty()) continue;
    roles.push_back(RoleJson(role));
    summary_list.push_back(std::move(summary));
  }
  return Ok({{"roles", roles}, {"assignments", summary_list}});
}

}  // namespace cairn::api
