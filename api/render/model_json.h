// The registry projection's views in Determined's REST shapes (v1Model, v1ModelVersion). Pure
// functions; a version's checkpoint (a v1Checkpoint) is rendered by the caller, who reads it.
#pragma once

#include <nlohmann/json.hpp>

#include "views.pb.h"

namespace cairn::api {

// v1Model.
nlohmann::json ModelJson(const views::ModelView& model);

// v1ModelVersion of `model`, embedding `checkpoint`.
nlohmann::json ModelVersionJson(const views::ModelVersionView& version,
                                const views::ModelView& model, nlohmann::json checkpoint);

}  // namespace cairn::api
