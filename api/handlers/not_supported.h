// Determined endpoints whose features Cairn does not have answer 501 with a sentence naming the
// feature, never a 404 or a pretence.
#pragma once

#include "api/call.h"

namespace cairn::api {

// Model version metrics and the other /api/v1/models/{name}/... paths Cairn does not have.
http::Response ModelPathNotSupported(Call& call);
http::Response ShellsNotSupported(Call& call);        // /api/v1/shells...
http::Response NotebooksNotSupported(Call& call);     // /api/v1/notebooks...
http::Response TensorboardsNotSupported(Call& call);  // /api/v1/tensorboards...
// Workspace and project settings Cairn does not have (namespace bindings, quotas, notes).
http::Response WorkspacesNotSupported(Call& call);    // /api/v1/{workspaces,projects}/{id}/...
http::Response PoolBindingsNotSupported(Call& call);  // /api/v1/resource-pools/{name}/...
// Other /api/v1/experiments/{id}/{what}, /api/v1/trials/..., /api/v1/templates/... paths.
http::Response ExperimentActionNotSupported(Call& call);
http::Response ExperimentPathNotSupported(Call& call);

}  // namespace cairn::api
