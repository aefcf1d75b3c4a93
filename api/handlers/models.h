// The model registry (`det model ...`): models and their versions in Determined's REST shapes,
// read from the registry projection; every change is a command the decider authorizes. A model
// is addressed by name or, when the path segment is a number, by id.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response CreateModel(Call& call);        // POST /api/v1/models
net::Response ListModels(Call& call);         // GET /api/v1/models
net::Response GetModel(Call& call);           // GET /api/v1/models/{modelName}
net::Response PatchModel(Call& call);         // PATCH /api/v1/models/{modelName}
net::Response ArchiveModel(Call& call);       // POST /api/v1/models/{modelName}/archive
net::Response UnarchiveModel(Call& call);     // POST /api/v1/models/{modelName}/unarchive
net::Response DeleteModelRoute(Call& call);   // DELETE /api/v1/models/{modelName}
net::Response ListModelVersions(Call& call);  // GET /api/v1/models/{modelName}/versions
// POST /api/v1/models/{modelName}/versions
net::Response RegisterModelVersion(Call& call);
// GET, PATCH, DELETE /api/v1/models/{modelName}/versions/{modelVersionNum}
net::Response GetModelVersion(Call& call);
net::Response PatchModelVersion(Call& call);
net::Response DeleteModelVersionRoute(Call& call);
net::Response ModelLabels(Call& call);  // GET /api/v1/model/labels

}  // namespace cairn::api
