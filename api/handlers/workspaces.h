// Workspaces, projects, experiment moves and resource-pool bindings (`det workspace …`,
// `det project …`, `det experiment move`, `det resource-pool bindings …`): Determined's REST
// shapes over the tenancy projection; changes are commands the decider authorizes by role.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ListWorkspaces(Call& call);         // GET /api/v1/workspaces
net::Response CreateWorkspaceRoute(Call& call);   // POST /api/v1/workspaces
net::Response GetWorkspace(Call& call);           // GET /api/v1/workspaces/{id}
net::Response PatchWorkspace(Call& call);         // PATCH /api/v1/workspaces/{id}
net::Response DeleteWorkspaceRoute(Call& call);   // DELETE /api/v1/workspaces/{id}
net::Response ArchiveWorkspace(Call& call);       // POST /api/v1/workspaces/{id}/archive
net::Response UnarchiveWorkspace(Call& call);     // POST /api/v1/workspaces/{id}/unarchive
net::Response PinWorkspaceRoute(Call& call);      // POST /api/v1/workspaces/{id}/pin
net::Response UnpinWorkspace(Call& call);         // POST /api/v1/workspaces/{id}/unpin
net::Response ListWorkspaceProjects(Call& call);  // GET /api/v1/workspaces/{id}/projects
net::Response CreateProjectRoute(Call& call);     // POST /api/v1/workspaces/{id}/projects
net::Response WorkspacePools(Call& call);  // GET /api/v1/workspaces/{id}/available-resource-pools
net::Response GetProject(Call& call);      // GET /api/v1/projects/{id}
net::Response PatchProject(Call& call);    // PATCH /api/v1/projects/{id}
net::Response DeleteProjectRoute(Call& call);   // DELETE /api/v1/projects/{id}
net::Response ArchiveProject(Call& call);       // POST /api/v1/projects/{id}/archive
net::Response UnarchiveProject(Call& call);     // POST /api/v1/projects/{id}/unarchive
net::Response MoveExperimentRoute(Call& call);  // POST /api/v1/experiments/{id}/move
// /api/v1/resource-pools/{name}/workspace-bindings: GET lists, POST adds, DELETE removes, PUT
// replaces.
net::Response ListPoolBindings(Call& call);
net::Response AddPoolBindings(Call& call);
net::Response RemovePoolBindings(Call& call);
net::Response ReplacePoolBindings(Call& call);

// Usernames by id, for owner fields.
std::map<int32_t, std::string> UsernamesById(Call& call);

}  // namespace cairn::api
