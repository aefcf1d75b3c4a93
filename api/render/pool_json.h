// Resource pools in Determined's REST shape (v1ResourcePool). Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "views.pb.h"

namespace cairn::api {

nlohmann::json PoolJson(const views::PoolView& pool, const std::string& cluster_name);

}  // namespace cairn::api
