#include "api/handlers/auth.h"

#include "api/rest_util.h"

namespace cairn::api {

using nlohmann::json;

namespace {

json UserJson(const User& user) {
  return {{"id", user.id},
          {"username", user.username},
          {"admin", user.admin},
          {"active", true},
          {"displayName", user.username}};
}

}  // namespace

http::Response Login(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto username = GetString(*body, "username", "username", true);
  if (!username.ok()) return Error(username.status());
  auto password = GetString(*body, "password", "password", false);
  if (!password.ok()) return Error(password.status());
  bool is_hashed = Present(*body, "isHashed") && body->at("isHashed").is_boolean() &&
                   body->at("isHashed").get<bool>();
  auto token = call.services().auth->Login(*username, *password, is_hashed);
  if (!token.ok()) return Error(token.status());
  auto user = Authenticator::FindUser(*username);
  if (!user.ok()) return Error(user.status());
  return Ok({{"token", *token}, {"user", UserJson(*user)}});
}

// Tokens are stateless today: there is nothing to end.
http::Response Logout(Call&) { return Ok(json::object()); }

http::Response Me(Call& call) { return Ok({{"user", UserJson(call.user())}}); }

}  // namespace cairn::api
