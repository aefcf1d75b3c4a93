// Roles (`det rbac …`): Determined's RBAC endpoints over the built-in roles of
// commands/tenancy/tenancy.h. Assignments are commands the decider authorizes (cluster-wide ones by
// cluster admins, a workspace's by its admins). User groups are not supported (501).
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response SearchRoles(Call& call);            // POST /api/v1/roles/search
net::Response SearchAssignableRoles(Call& call);  // POST /api/v1/roles/search/by-assignability
net::Response RolesByIds(Call& call);             // POST /api/v1/roles/search/by-ids
net::Response RolesOfUser(Call& call);            // GET /api/v1/roles/search/by-user/{userId}
net::Response WorkspaceMembers(Call& call);       // GET /api/v1/roles/workspace/{id}
net::Response AddRoleAssignments(Call& call);     // POST /api/v1/roles/add-assignments
net::Response RemoveRoleAssignments(Call& call);  // POST /api/v1/roles/remove-assignments
net::Response PermissionsSummary(Call& call);     // GET /api/v1/permissions/summary

}  // namespace cairn::api
