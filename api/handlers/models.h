// The model registry (`det model ...`): models and their versions in Determined's REST shapes,
// read from the registry projection; every change is a command the decider authorizes. A model
// is addressed by name or, when the path segment is a number, by id.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response CreateModel(Call& call);        // POST /api/v1/models
http::Response ListModels(Call& call);         // GET /api/v1/models
http::Response GetModel(Call& call);           // GET /api/v1/models/{modelName}
http::Response PatchModel(Call& call);         // PATCH /api/v1/models/{modelName}
http::Response ArchiveModel(Call& call);       // POST /api/v1/models/{modelName}/archive
http::Response UnarchiveModel(Call& call);     // POST /api/v1/models/{modelName}/unarchive
http::Response DeleteModelRoute(Call& call);   // DELETE /api/v1/models/{modelName}
http::Response ListModelVersions(Call& call);  // GET /api/v1/models/{modelName}/versions
// POST /api/v1/models/{modelName}/versions
http::Response RegisterModelVersion(Call& call);
// GET, PATCH, DELETE /api/v1/models/{modelName}/versions/{modelVersionNum}
http::Response GetModelVersion(Call& call);
http::Response PatchModelVersion(Call& call);
http::Response DeleteModelVersionRoute(Call& call);
http::Response ModelLabels(Call& call);  // GET /api/v1/model/labels

}  // namespace cairn::api
