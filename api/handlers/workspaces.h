// Workspaces, projects, experiment moves and resource-pool bindings (`det workspace …`,
// `det project …`, `det experiment move`, `det resource-pool bindings …`): Determined's REST
// shapes over the tenancy projection; changes are commands the decider authorizes by role.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response ListWorkspaces(Call& call);         // GET /api/v1/workspaces
http::Response CreateWorkspaceRoute(Call& call);   // POST /api/v1/workspaces
http::Response GetWorkspace(Call& call);           // GET /api/v1/workspaces/{id}
http::Response PatchWorkspace(Call& call);         // PATCH /api/v1/workspaces/{id}
http::Response DeleteWorkspaceRoute(Call& call);   // DELETE /api/v1/workspaces/{id}
http::Response ArchiveWorkspace(Call& call);       // POST /api/v1/workspaces/{id}/archive
http::Response UnarchiveWorkspace(Call& call);     // POST /api/v1/workspaces/{id}/unarchive
http::Response PinWorkspaceRoute(Call& call);      // POST /api/v1/workspaces/{id}/pin
http::Response UnpinWorkspace(Call& call);         // POST /api/v1/workspaces/{id}/unpin
http::Response ListWorkspaceProjects(Call& call);  // GET /api/v1/workspaces/{id}/projects
http::Response CreateProjectRoute(Call& call);     // POST /api/v1/workspaces/{id}/projects
http::Response WorkspacePools(Call& call);  // GET /api/v1/workspaces/{id}/available-resource-pools
http::Response GetProject(Call& call);      // GET /api/v1/projects/{id}
http::Response PatchProject(Call& call);    // PATCH /api/v1/projects/{id}
http::Response DeleteProjectRoute(Call& call);   // DELETE /api/v1/projects/{id}
http::Response ArchiveProject(Call& call);       // POST /api/v1/projects/{id}/archive
http::Response UnarchiveProject(Call& call);     // POST /api/v1/projects/{id}/unarchive
http::Response MoveExperimentRoute(Call& call);  // POST /api/v1/experiments/{id}/move
// /api/v1/resource-pools/{name}/workspace-bindings: GET lists, POST adds, DELETE removes, PUT
// replaces.
http::Response ListPoolBindings(Call& call);
http::Response AddPoolBindings(Call& call);
http::Response RemovePoolBindings(Call& call);
http::Response ReplacePoolBindings(Call& call);

// Usernames by id, for owner fields.
std::map<int32_t, std::string> UsernamesById(Call& call);

}  // namespace cairn::api
