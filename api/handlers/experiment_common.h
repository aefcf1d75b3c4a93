// Shared by the experiment, trial and checkpoint routes: ids from paths, and loading an
// experiment or trial from the experiments projection.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "api/call.h"
#include "views.pb.h"

namespace cairn::api {

Result<views::ExperimentView> LoadExperiment(Call& call, const std::string& id_text);
Result<views::TrialView> LoadTrial(Call& call, const std::string& id_text);
// v1Experiment with its trial count.
Result<nlohmann::json> ExperimentWithTrials(Call& call, const views::ExperimentView& experiment);

}  // namespace cairn::api
