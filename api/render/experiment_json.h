// The experiments projection's views in Determined's REST shapes (grpc-gateway JSON: camelCase,
// enums by name, RFC 3339 times), with Cairn's extra facts under "cairn". Pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "events/redaction.h"
#include "views.pb.h"

namespace cairn::api {

// v1Experiment. `num_trials` is the experiment's trial count (view.trial_ids_size()).
// `audience` (events/redaction.h) decides which secrets of its configs show.
nlohmann::json ExperimentJson(const views::ExperimentView& experiment, int64_t num_trials,
                              Audience audience);

// trialv1Trial. A trial of an active experiment whose run has started shows STATE_RUNNING.
nlohmann::json TrialJson(const views::TrialView& trial);

// One entry of GET /api/v1/trials/{id}/workloads: {"training": …}, {"validation": …} or
// {"checkpoint": …}.
nlohmann::json WorkloadJson(const views::WorkloadView& workload);

// Where a checkpoint came from, for its training metadata: its experiment's configuration (as
// ExperimentConfigJson renders it for the reader; Determined's CLI needs it to find the files)
// and its trial (hparams). Either may be null, and then what it would give is left out. A list
// renders the configuration once for all its checkpoints.
struct CheckpointOrigin {
  const nlohmann::json* experiment_config = nullptr;
  const views::TrialView* trial = nullptr;
};

// The experiment's effective configuration as `audience` may see it, with the job queue's changes
// of its resources (v1Experiment.config, v1CheckpointTrainingMetadata.experimentConfig).
nlohmann::json ExperimentConfigJson(const views::ExperimentView& experiment, Audience audience);

// A JSON object's text as an object; anything else (empty, unparsable, not an object) as {}.
nlohmann::json JsonObjectOf(const std::string& text);

// v1Checkpoint.
nlohmann::json CheckpointJson(const views::CheckpointView& checkpoint,
                              const CheckpointOrigin& origin = {});

// "STATE_ACTIVE", "STATE_PAUSED", "STATE_STOPPING_CANCELED", … (Determined's experiment and
// trial states).
std::string ExperimentStateJson(events::ExperimentState state);

}  // namespace cairn::api
