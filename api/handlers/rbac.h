// Roles (`det rbac …`): Determined's RBAC endpoints over the built-in roles of
// commands/tenancy.h. Assignments are commands the decider authorizes (cluster-wide ones by
// cluster admins, a workspace's by its admins). User groups are not supported (501).
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response SearchRoles(Call& call);            // POST /api/v1/roles/search
http::Response SearchAssignableRoles(Call& call);  // POST /api/v1/roles/search/by-assignability
http::Response RolesByIds(Call& call);             // POST /api/v1/roles/search/by-ids
http::Response RolesOfUser(Call& call);            // GET /api/v1/roles/search/by-user/{userId}
http::Response WorkspaceMembers(Call& call);       // GET /api/v1/roles/workspace/{id}
http::Response AddRoleAssignments(Call& call);     // POST /api/v1/roles/add-assignments
http::Response RemoveRoleAssignments(Call& call);  // POST /api/v1/roles/remove-assignments
http::Response PermissionsSummary(Call& call);     // GET /api/v1/permissions/summary
http::Response GroupsNotSupported(Call& call);     // /api/v1/groups...

}  // namespace cairn::api
