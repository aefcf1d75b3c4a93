// Experiments (`det experiment create/list/describe/pause/activate/cancel/kill/set ...`): created
// from Determined's YAML and a model directory, read from the experiments projection.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response CreateExperiment(Call& call);         // POST /api/v1/experiments
http::Response ListExperiments(Call& call);          // GET /api/v1/experiments[?users=]
http::Response GetExperiment(Call& call);            // GET /api/v1/experiments/{id}
http::Response PatchExperiment(Call& call);          // PATCH /api/v1/experiments/{id}
http::Response ExperimentTrials(Call& call);         // GET /api/v1/experiments/{id}/trials
http::Response ExperimentCheckpoints(Call& call);    // GET /api/v1/experiments/{id}/checkpoints
http::Response ActivateExperiment(Call& call);       // POST /api/v1/experiments/{id}/activate
http::Response PauseExperiment(Call& call);          // POST /api/v1/experiments/{id}/pause
http::Response CancelExperiment(Call& call);         // POST /api/v1/experiments/{id}/cancel
http::Response KillExperiment(Call& call);           // POST /api/v1/experiments/{id}/kill
http::Response ArchiveExperiment(Call& call);        // POST /api/v1/experiments/{id}/archive
http::Response UnarchiveExperiment(Call& call);      // POST /api/v1/experiments/{id}/unarchive
http::Response DeleteExperiment(Call& call);         // DELETE /api/v1/experiments/{id}
http::Response ContinueExperimentRoute(Call& call);  // POST /api/v1/experiments/continue
http::Response ExperimentModelDef(Call& call);       // GET /api/v1/experiments/{id}/model_def

}  // namespace cairn::api
