// Users in Determined's v1User shape.
#pragma once

#include <nlohmann/json.hpp>

#include "api/auth.h"
#include "views.pb.h"

namespace cairn::api {

nlohmann::json UserJson(const views::UserView& user);
nlohmann::json UserJson(const User& user);

}  // namespace cairn::api
