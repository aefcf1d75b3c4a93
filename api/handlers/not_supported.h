// Determined endpoints whose features Cairn does not have answer 501 with a sentence naming the
// feature, never a 404 or a pretence.
#pragma once

#include "api/call.h"

namespace cairn::api {

// Model version metrics and the other /api/v1/models/{name}/... paths Cairn does not have.
net::Response ModelPathNotSupported(Call& call);
net::Response ShellsNotSupported(Call& call);        // /api/v1/shells...
net::Response NotebooksNotSupported(Call& call);     // /api/v1/notebooks...
net::Response TensorboardsNotSupported(Call& call);  // /api/v1/tensorboards...
// Workspace and project settings Cairn does not have (namespace bindings, quotas, notes).
net::Response WorkspacesNotSupported(Call& call);    // /api/v1/{workspaces,projects}/{id}/...
net::Response PoolBindingsNotSupported(Call& call);  // /api/v1/resource-pools/{name}/...
// Other /api/v1/experiments/{id}/{what}, /api/v1/trials/..., /api/v1/templates/... paths.
net::Response ExperimentActionNotSupported(Call& call);
net::Response ExperimentPathNotSupported(Call& call);

}  // namespace cairn::api
