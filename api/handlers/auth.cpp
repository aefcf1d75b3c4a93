#include "api/handlers/auth.h"

#include <cmath>

#include "api/render/user_json.h"
#include "api/rest_util.h"
#include "base/clock.h"
#include "base/password.h"

namespace cairn::api {

using nlohmann::json;

Result<std::string> PasswordFromBody(const json& body, const std::string& path) {
  CAIRN_ASSIGN_OR_RETURN(std::string password, GetString(body, "password", path, false));
  bool is_hashed = false;
  if (Present(body, "isHashed")) {
    if (!body.at("isHashed").is_boolean()) {
      return Status::InvalidArgument("isHashed: expected true or false");
    }
    is_hashed = body.at("isHashed").get<bool>();
  }
  // The CLI sends a blank password as "" even with isHashed.
  if (is_hashed && !password.empty()) {
    if (password.size() != 128 ||
        password.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Status::InvalidArgument(path + ": a hashed password is 128 lowercase hex digits");
    }
    return password;
  }
  if (password.size() > 1024) return Status::InvalidArgument(path + ": longer than 1024 bytes");
  return CliPasswordHash(password);
}

// POST /api/v1/auth/login. The password is checked here, outside the writer (argon2id is slow by
// design); the writer then starts the session only if the user's hash is still the one checked.
// As in Determined, a wrong password or an unknown name is 401 "invalid credentials", one answer
// for both so it does not tell which names exist; a deactivated user who gives the right password
// is 403 "user is not active" (only the password's holder learns it).
Result<LoggedIn> LogIn(Call& call, const std::string& username, const std::string& cli_hash,
                       int64_t lifetime_micros) {
  const int64_t now = NowUnixMicros();
  auto subject = call.services().writer->DescribeLogin(username, now);
  auto refuse = [&](const std::string& reason, bool throttled) -> Status {
    // Recorded for the audit trail and the throttle; a failure to record does not change the
    // answer.
    (void)call.ExecuteAs(commands::RecordLoginFailure{username, reason, throttled},
                         "anonymous:login");
    if (throttled) {
      return Status::ResourceExhausted("too many failed logins for " + username +
                                       "; try again in a few minutes");
    }
    return Status::Unauthenticated("invalid credentials");
  };
  if (subject.throttled) return refuse("too many recent failures", true);
  if (!subject.user) {
    // As slow as a wrong password, so that the answer's time does not tell which names exist.
    static const std::string kDummyHash = [] {
      Result<std::string> hash = HashPassword(CliPasswordHash(""));
      return hash.ok() ? *hash : std::string();
    }();
    (void)VerifyPassword(kDummyHash, cli_hash);
    return refuse("no such user", false);
  }
  if (!VerifyPassword(subject.user->password_hash, cli_hash)) {
    return refuse(subject.user->active ? "wrong password" : "user deactivated", false);
  }
  if (!subject.user->active) {
    (void)refuse("user deactivated", false);
    return Status::PermissionDenied("user is not active");
  }

  LoggedIn logged_in;
  logged_in.token = NewSessionToken();
  commands::StartSession start;
  start.user_id = subject.user->id;
  start.token_sha256 = SessionTokenSha256(logged_in.token);
  start.checked_password_hash = subject.user->password_hash;
  start.expires_unix_micros =
      now + (lifetime_micros > 0 ? lifetime_micros : call.services().facts.session_lifetime_micros);
  CAIRN_ASSIGN_OR_RETURN(auto outcome, call.ExecuteAs(start, "user:" + subject.user->username));
  logged_in.user = UserFrom(*subject.user);
  logged_in.offset = outcome.offset;
  return logged_in;
}

net::Response Login(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto username = GetString(*body, "username", "username", true);
  if (!username.ok()) return Error(username.status());
  auto cli_hash = PasswordFromBody(*body, "password");
  if (!cli_hash.ok()) return Error(cli_hash.status());
  auto logged_in = LogIn(call, *username, *cli_hash);
  if (!logged_in.ok()) {
    net::Response response = Error(logged_in.status());
    // 429 Too Many Requests, not ResourceExhausted's usual 413: the request was fine.
    if (logged_in.status().code() == StatusCode::kResourceExhausted) {
      response.status = 429;
      response.headers.emplace_back("Retry-After", "60");
    }
    return response;
  }
  return Ok({{"token", logged_in->token}, {"user", UserJson(logged_in->user)}}, logged_in->offset);
}

// POST /api/v1/auth/logout: ends the caller's session; the token is refused from now on.
net::Response Logout(Call& call) {
  if (call.token().empty()) return Ok(json::object());
  auto outcome = call.Execute(commands::EndSession{SessionTokenSha256(call.token()), "logout"});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response Me(Call& call) { return Ok({{"user", UserJson(call.user())}}); }

}  // namespace cairn::api
