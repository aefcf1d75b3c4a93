// User groups (`det user-group`, `det rbac assign-role -g`): a group's roles are held by its
// members (commands/tenancy/tenancy.h). Every user reads groups and their members, as Determined
// shows them; only cluster admins create, change and delete them. Each change is an event with
// its actor.
#pragma once

#include "api/call.h"

namespace cairn::api {

// POST /api/v1/groups/search {limit, offset?, name?, userId?} -> {groups: [{group: {groupId,
// name}, numMembers}], pagination}.
net::Response SearchGroups(Call& call);
// GET /api/v1/groups/{groupId} -> {group: {groupId, name, users: [v1User]}}.
net::Response GetGroupRoute(Call& call);
// POST /api/v1/groups {name, addUsers?} -> {group}.
net::Response CreateGroupRoute(Call& call);
// PUT /api/v1/groups/{groupId} {groupId, name?, addUsers?, removeUsers?} -> {group}.
net::Response UpdateGroupRoute(Call& call);
// DELETE /api/v1/groups/{groupId} -> {}.
net::Response DeleteGroupRoute(Call& call);
// GET /api/v1/roles/search/by-group/{groupId} -> {roles: [v1Role], assignments: [{roleId,
// scopeWorkspaceIds, scopeCluster}]}, one assignment summary per role.
net::Response RolesOfGroup(Call& call);

}  // namespace cairn::api
