// Logging in and out as Determined's CLI does, and who the caller is.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "api/call.h"

namespace cairn::api {

http::Response Login(Call& call);   // POST /api/v1/auth/login
http::Response Logout(Call& call);  // POST /api/v1/auth/logout
http::Response Me(Call& call);      // GET /api/v1/me

// The password of a body as `password` + `isHashed` (Determined's CLI hashes it client-side,
// base/password.h), brought to the CLI's hashed form; path names the field in errors. A
// password is never echoed in an error.
Result<std::string> PasswordFromBody(const nlohmann::json& body, const std::string& path);

}  // namespace cairn::api
