// User groups (det user-group): their names, members and deletion. A group's roles are assigned
// with ChangeRoles (tenancy_decider.cpp); TenancyState::RoleIn gives members the group's roles.
#include <algorithm>
#include <set>

#include "base/encoding.h"
#include "commands/tenancy/tenancy_decider.h"

namespace cairn::commands {
namespace {

std::string GroupEntity(int32_t group_id) { return "group/" + std::to_string(group_id); }

// OK when no group but `except` is named `name`, ignoring case (Determined's CLI finds groups by
// name, so two may not differ only by case).
Status CheckGroupNameFree(const TenancyState& tenancy, const std::string& name, int32_t except) {
  CAIRN_RETURN_IF_ERROR(CheckTenancyName("group", name));
  const std::string wanted = AsciiLower(name);
  for (const auto& [id, group] : tenancy.groups) {
    if (id != except && AsciiLower(group.name) == wanted) {
      return Status::AlreadyExists("a group named " + group.name + " already exists");
    }
  }
  return Status::Ok();
}

// The users, ascending and each once; NotFound naming the first unknown one.
Result<std::vector<int32_t>> KnownUsers(const DecisionState& state,
                                        const std::vector<int32_t>& user_ids) {
  std::set<int32_t> unique;
  for (int32_t user_id : user_ids) {
    if (state.identity.FindUser(user_id) == nullptr) {
      return Status::NotFound("user " + std::to_string(user_id) + " not found");
    }
    unique.insert(user_id);
  }
  return std::vector<int32_t>(unique.begin(), unique.end());
}

Result<const GroupRecord*> FindGroup(const DecisionState& state, int32_t group_id) {
  const GroupRecord* group = state.tenancy.FindGroup(group_id);
  if (group == nullptr) {
    return Status::NotFound("group " + std::to_string(group_id) + " not found");
  }
  return group;
}

Status MayChangeGroups(const DecisionState& state, const UserRecord& user,
                       const std::string& what) {
  return Authorize(state.tenancy, user, Permission::kUpdateGroups, kEveryWorkspace, what);
}

}  // namespace

Result<Decision> DecideCommand(const DecisionState& state, const CreateGroup& command,
                               const CommandMeta&) {
  CAIRN_RETURN_IF_ERROR(CheckGroupNameFree(state.tenancy, command.name, 0));
  CAIRN_ASSIGN_OR_RETURN(std::vector<int32_t> members, KnownUsers(state, command.user_ids));
  const int32_t group_id = state.tenancy.last_group_id + 1;
  Decision decision;
  decision.entity_id = GroupEntity(group_id);
  auto* created = decision.events.emplace_back().mutable_group_created();
  created->set_group_id(group_id);
  created->set_name(command.name);
  for (int32_t user_id : members) created->add_user_ids(user_id);
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateGroup& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const GroupRecord* group, FindGroup(state, command.group_id));
  if (command.name)
    CAIRN_RETURN_IF_ERROR(CheckGroupNameFree(state.tenancy, *command.name, group->id));
  CAIRN_ASSIGN_OR_RETURN(std::vector<int32_t> added, KnownUsers(state, command.add_user_ids));
  CAIRN_ASSIGN_OR_RETURN(std::vector<int32_t> removed, KnownUsers(state, command.remove_user_ids));
  for (int32_t user_id : added) {
    if (std::binary_search(removed.begin(), removed.end(), user_id)) {
      return Status::InvalidArgument("user " + std::to_string(user_id) +
                                     " is both added to and removed from group " + group->name);
    }
  }
  for (int32_t user_id : removed) {
    if (group->members.count(user_id) == 0) {
      return Status::NotFound("user " + std::to_string(user_id) + " is not a member of group " +
                              group->name);
    }
  }
  std::erase_if(added, [&](int32_t user_id) { return group->members.count(user_id) > 0; });
  const bool renamed = command.name && *command.name != group->name;
  Decision decision;
  decision.entity_id = GroupEntity(group->id);
  if (!renamed && added.empty() && removed.empty()) return decision;  // nothing changes
  auto* updated = decision.events.emplace_back().mutable_group_updated();
  updated->set_group_id(group->id);
  if (renamed) updated->set_name(*command.name);
  for (int32_t user_id : added) updated->add_added_user_ids(user_id);
  for (int32_t user_id : removed) updated->add_removed_user_ids(user_id);
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteGroup& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const GroupRecord* group, FindGroup(state, command.group_id));
  Decision decision;
  decision.entity_id = GroupEntity(group->id);
  for (const auto& [key, role] : state.tenancy.group_roles) {
    if (key.first != group->id) continue;
    auto* removed = decision.events.emplace_back().mutable_role_removed();
    removed->set_group_id(group->id);
    removed->set_workspace_id(key.second);
    removed->set_role(role);
  }
  decision.events.emplace_back().mutable_group_deleted()->set_group_id(group->id);
  return decision;
}

Status MayRun(const DecisionState& state, const UserRecord& user, const CreateGroup& command) {
  return MayChangeGroups(state, user, "create group " + command.name);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateGroup& command) {
  return MayChangeGroups(state, user, "change group " + std::to_string(command.group_id));
}

Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteGroup& command) {
  return MayChangeGroups(state, user, "delete group " + std::to_string(command.group_id));
}

}  // namespace cairn::commands
