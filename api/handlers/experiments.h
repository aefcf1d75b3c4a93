// Experiments (`det experiment create/list/describe/pause/activate/cancel/kill/set ...`): created
// from Determined's YAML and a model directory, read from the experiments projection.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response CreateExperiment(Call& call);  // POST /api/v1/experiments
// POST /api/v1/preview-hp-search {config} -> {summary: {config: <the searcher, defaults filled>,
// trials: [{count, unit: {maxLength: true} | {maxLength: false, name, value}}]}}: what the search
// would train (det preview-search), with nothing created.
net::Response PreviewSearchRoute(Call& call);
net::Response ListExperiments(Call& call);  // GET /api/v1/experiments[?users=]
net::Response GetExperiment(Call& call);    // GET /api/v1/experiments/{id}
net::Response PatchExperiment(Call& call);  // PATCH /api/v1/experiments/{id}
// GET /experiments/{id}/preview_gc?save_experiment_best=N&save_trial_best=N&save_trial_latest=N
// -> {checkpoints: [the ended trials' checkpoints that policy would collect, with Determined's
// Go field names], metric_name}: nothing is changed (det experiment set gc-policy asks first).
net::Response PreviewGcRoute(Call& call);
// det experiment delete-tb-files: DELETE /api/v1/experiments/{id}/tensorboard-files -> {}; the
// files written so far go in the background (master/checkpoint_collector.h).
net::Response DeleteTensorboardFilesRoute(Call& call);
net::Response ExperimentTrials(Call& call);         // GET /api/v1/experiments/{id}/trials
net::Response ExperimentCheckpoints(Call& call);    // GET /api/v1/experiments/{id}/checkpoints
net::Response ActivateExperiment(Call& call);       // POST /api/v1/experiments/{id}/activate
net::Response PauseExperiment(Call& call);          // POST /api/v1/experiments/{id}/pause
net::Response CancelExperiment(Call& call);         // POST /api/v1/experiments/{id}/cancel
net::Response KillExperiment(Call& call);           // POST /api/v1/experiments/{id}/kill
net::Response ArchiveExperiment(Call& call);        // POST /api/v1/experiments/{id}/archive
net::Response UnarchiveExperiment(Call& call);      // POST /api/v1/experiments/{id}/unarchive
net::Response DeleteExperiment(Call& call);         // DELETE /api/v1/experiments/{id}
net::Response ContinueExperimentRoute(Call& call);  // POST /api/v1/experiments/continue
net::Response ExperimentModelDef(Call& call);       // GET /api/v1/experiments/{id}/model_def

}  // namespace cairn::api
