// Logging in and out as Determined's CLI does, and who the caller is.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "api/call.h"

namespace cairn::api {

net::Response Login(Call& call);   // POST /api/v1/auth/login
net::Response Logout(Call& call);  // POST /api/v1/auth/logout
net::Response Me(Call& call);      // GET /api/v1/me

// A session started for a user whose password checked out.
struct LoggedIn {
  std::string token;
  User user;
  uint64_t offset = 0;
};
// Checks `cli_hash` (base/password.h's CLI form) against the user's and starts a session lasting
// `lifetime_micros` (0: security.session_lifetime_hours). Every refusal is PermissionDenied
// "invalid credentials", so it does not tell which names exist; ResourceExhausted when the
// name's failed logins are throttled. Failures are recorded (LoginFailed).
Result<LoggedIn> LogIn(Call& call, const std::string& username, const std::string& cli_hash,
                       int64_t lifetime_micros = 0);

// The password of a body as `password` + `isHashed` (Determined's CLI hashes it client-side,
// base/password.h), brought to the CLI's hashed form; path names the field in errors. A
// password is never echoed in an error.
Result<std::string> PasswordFromBody(const nlohmann::json& body, const std::string& path);

}  // namespace cairn::api
