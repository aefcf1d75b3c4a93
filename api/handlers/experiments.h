// Experiments (`det experiment create/list/describe/pause/activate/cancel/kill/set ...`): created
// from Determined's YAML and a model directory, read from the experiments projection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/call.h"

namespace cairn::api {

http::Response CreateExperiment(Call& call);       // POST /api/v1/experiments
http::Response ListExperiments(Call& call);        // GET /api/v1/experiments[?users=]
http::Response GetExperiment(Call& call);          // GET /api/v1/experiments/{id}
http::Response PatchExperiment(Call& call);        // PATCH /api/v1/experiments/{id}
http::Response ExperimentTrials(Call& call);       // GET /api/v1/experiments/{id}/trials
http::Response ExperimentCheckpoints(Call& call);  // GET /api/v1/experiments/{id}/checkpoints
http::Response ActivateExperiment(Call& call);     // POST /api/v1/experiments/{id}/activate
http::Response PauseExperiment(Call& call);        // POST /api/v1/experiments/{id}/pause
http::Response CancelExperiment(Call& call);       // POST /api/v1/experiments/{id}/cancel
http::Response KillExperiment(Call& call);         // POST /api/v1/experiments/{id}/kill

// One page of an experiment's checkpoints (trial_id unset) or one trial's.
http::Response ListCheckpointsOf(Call& call, const std::string& experiment_id,
                                 std::optional<int64_t> trial_id);

}  // namespace cairn::api
