// Determined endpoints whose features Cairn does not have answer 501 with a sentence naming the
// feature, never a 404 or a pretence.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response ModelRegistryNotSupported(Call& call);     // /api/v1/models...
http::Response ShellsNotSupported(Call& call);            // /api/v1/shells...
http::Response NotebooksNotSupported(Call& call);         // /api/v1/notebooks...
http::Response TensorboardsNotSupported(Call& call);      // /api/v1/tensorboards...
http::Response CheckpointsNotSupported(Call& call);       // /api/v1/checkpoints...
http::Response ExperimentDeleteNotSupported(Call& call);  // DELETE /api/v1/experiments/{id}
// Other /api/v1/experiments/{id}/{what}, /api/v1/trials/..., /api/v1/templates/... paths.
http::Response ExperimentActionNotSupported(Call& call);
http::Response ExperimentPathNotSupported(Call& call);

}  // namespace cairn::api
