// Who a request comes from. A bearer token is a session (base/password.h: only its SHA-256 is
// kept); the write side answers for it in memory (commands::Writer::Authenticate), so a logout,
// deactivation or password change refuses the token as soon as it is acknowledged. Sessions
// are started and ended by the handlers in api/handlers/auth.cpp.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "commands/identity/identity.h"

namespace cairn::api {

// The caller as handlers see it: never the password hash.
struct User {
  int id = 0;
  std::string username;
  bool admin = false;
  bool active = true;
  std::string display_name;
};

User UserFrom(const commands::UserRecord& record);

// The Authorization header's token: "Bearer <token>" -> "<token>"; "" when absent.
// InvalidArgument-free: a malformed header is Unauthenticated.
Result<std::string> BearerToken(const std::string& authorization_header);

// The cookie a browser reaches a notebook's or TensorBoard's /proxy/{id}/ with: the user's
// session token, set by POST /api/v1/tasks/{id}/proxy-cookie for that path only.
inline constexpr const char* kProxyCookieName = "cairn_proxy_token";
// Calls `visit` with each cookie of a Cookie header ("a=1; b=2"): its name and the whole "a=1".
void ForEachCookie(
    std::string_view cookie_header,
    const std::function<void(std::string_view name, std::string_view cookie)>& visit);
// The value of cookie `name` in a Cookie header, or "".
std::string CookieValue(const std::string& cookie_header, const std::string& name);

}  // namespace cairn::api
