#include "api/handlers/users.h"

#include <algorithm>

#include "api/handlers/auth.h"
#include "api/render/user_json.h"
#include "api/rest_util.h"
#include "base/document_limits.h"
#include "base/password.h"

namespace cairn::api {

using nlohmann::json;

Result<commands::PartialAgentUser> ReadAgentUserGroup(const json& body, const char* key) {
  const std::string path = std::string(key) + ".";
  const json& linked = body.at(key);
  if (!linked.is_object())
    return Status::InvalidArgument(std::string(key) + ": expected an object");
  CAIRN_RETURN_IF_ERROR(
      CheckKnownKeys(linked, path, {"agentUid", "agentGid", "agentUser", "agentGroup"}));
  commands::PartialAgentUser account;
  CAIRN_ASSIGN_OR_RETURN(account.uid, GetInt32(linked, "agentUid", path + "agentUid"));
  CAIRN_ASSIGN_OR_RETURN(account.gid, GetInt32(linked, "agentGid", path + "agentGid"));
  CAIRN_ASSIGN_OR_RETURN(auto user, OptionalString(linked, "agentUser"));
  CAIRN_ASSIGN_OR_RETURN(auto group, OptionalString(linked, "agentGroup"));
  account.user = std::move(user);
  account.group = std::move(group);
  return account;
}

namespace {

Result<int32_t> UserIdParam(const Call& call) { return ParseInt32Id(call.Param("userId"), "user"); }

// The user as the projections show it once `offset` is applied.
net::Response AnswerUser(Call& call, int32_t user_id, uint64_t offset) {
  if (Status waited = call.WaitFor(offset); !waited.ok()) return Error(waited);
  auto user = call.services().projections->GetUser(user_id);
  if (!user.ok()) return Error(user.status());
  if (!*user) return Error(Status::NotFound("user " + std::to_string(user_id) + " not found"));
  return Ok({{"user", UserJson(**user)}}, offset);
}

// Determined's fields Cairn does not have: accepted only when they ask for nothing.
Status CheckUnsupportedFields(const json& object, const std::string& path) {
  if (Present(object, "remote") && object.at("remote") != false) {
    return Status::NotSupported(path +
                                "remote: users signed on by a remote identity provider "
                                "are not supported");
  }
  return Status::Ok();
}

// A user's link: all four fields, as the CLI sends them.
Result<commands::AgentUser> ReadAgentUser(const json& body) {
  CAIRN_ASSIGN_OR_RETURN(auto linked, ReadAgentUserGroup(body, "agentUserGroup"));
  for (const auto& [key, present] : {std::pair{"agentUid", linked.uid.has_value()},
                                     std::pair{"agentGid", linked.gid.has_value()},
                                     std::pair{"agentUser", linked.user.has_value()},
                                     std::pair{"agentGroup", linked.group.has_value()}}) {
    if (!present)
      return Status::InvalidArgument(std::string("agentUserGroup.") + key + ": required");
  }
  return commands::AgentUser{*linked.uid, *linked.gid, *linked.user, *linked.group};
}

// The body's `password` (+ `isHashed`) as it is stored: argon2id of the CLI's form.
Result<std::string> StoredPasswordHash(const json& body) {
  CAIRN_ASSIGN_OR_RETURN(std::string cli_hash, PasswordFromBody(body, "password"));
  return HashPassword(cli_hash);
}

}  // namespace

net::Response ListUsers(Call& call) {
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto users = call.services().projections->ListUsers();
  if (!users.ok()) return Error(users.status());
  // Filters as Determined's GetUsers: active, admin, name (in the username or display name).
  const net::Request& request = call.request();
  std::vector<views::UserView> kept;
  for (auto& user : *users) {
    bool keep = true;
    for (const auto& [flag, value] :
         {std::pair{"active", user.active()}, std::pair{"admin", user.admin()}}) {
      const std::string wanted = request.QueryParam(flag);
      if (!wanted.empty() && wanted != (value ? "true" : "false")) keep = false;
    }
    const std::string name = request.QueryParam("name");
    if (!name.empty() && user.username().find(name) == std::string::npos &&
        user.display_name().find(name) == std::string::npos) {
      keep = false;
    }
    if (keep) kept.push_back(std::move(user));
  }
  if (request.QueryParam("sortBy") == "SORT_BY_USER_NAME" ||
      request.QueryParam("sortBy") == "SORT_BY_DISPLAY_NAME") {
    const bool by_username = request.QueryParam("sortBy") == "SORT_BY_USER_NAME";
    std::stable_sort(kept.begin(), kept.end(), [&](const auto& a, const auto& b) {
      return by_username ? a.username() < b.username() : a.display_name() < b.display_name();
    });
  }
  if (request.QueryParam("orderBy") == "ORDER_BY_DESC") std::reverse(kept.begin(), kept.end());
  auto [page, pagination] = Page(std::move(kept), *paging);
  json list = json::array();
  for (const auto& user : page) list.push_back(UserJson(user));
  return Ok({{"users", list}, {"pagination", pagination}});
}

net::Response GetUser(Call& call) {
  auto id = UserIdParam(call);
  if (!id.ok()) return Error(id.status());
  auto user = call.services().projections->GetUser(*id);
  if (!user.ok()) return Error(user.status());
  if (!*user) return Error(Status::NotFound("user " + std::to_string(*id) + " not found"));
  return Ok({{"user", UserJson(**user)}});
}

net::Response GetUserByName(Call& call) {
  const std::string& username = call.Param("username");
  auto user = call.services().projections->GetUserByName(username);
  if (!user.ok()) return Error(user.status());
  if (!*user) return Error(Status::NotFound("user " + username + " not found"));
  return Ok({{"user", UserJson(**user)}});
}

// Body: {"user": {"username", "admin", "active", "displayName"}, "password", "isHashed"}. A
// user created without a password has a blank one, as in Determined.
net::Response CreateUser(Call& call) {
  if (Status admin = call.RequireAdmin("create users"); !admin.ok()) return Error(admin);
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"user", "password", "isHashed"}); !known.ok()) {
    return Error(known);
  }
  if (!Present(*body, "user") || !body->at("user").is_object()) {
    return Error(Status::InvalidArgument("user: required, an object with a username"));
  }
  const json& user = body->at("user");
  if (Status known = CheckKnownKeys(user, "user",
                                    {"username", "admin", "active", "displayName", "id",
                                     "lastAuthAt", "modifiedAt", "remote", "agentUserGroup"});
      !known.ok()) {
    return Error(known);
  }
  if (Present(user, "agentUserGroup")) {
    return Error(Status::NotSupported(
        "user.agentUserGroup: link the user once created (det user link-with-agent-user)"));
  }
  if (Status unsupported = CheckUnsupportedFields(user, "user."); !unsupported.ok()) {
    return Error(unsupported);
  }
  commands::CreateUser command;
  auto username = GetString(user, "username", "user.username", true);
  if (!username.ok()) return Error(username.status());
  command.username = *username;
  auto display_name = GetString(user, "displayName", "user.displayName", false);
  if (!display_name.ok()) return Error(display_name.status());
  command.display_name = *display_name;
  auto admin = OptionalBool(user, "admin");
  if (!admin.ok()) return Error(admin.status());
  command.admin = admin->value_or(false);
  auto active = OptionalBool(user, "active");
  if (!active.ok()) return Error(active.status());
  command.active = active->value_or(true);
  if (Status name = commands::CheckUsername(command.username); !name.ok()) return Error(name);
  auto hash = StoredPasswordHash(*body);
  if (!hash.ok()) return Error(hash.status());
  command.password_hash = *hash;
  auto outcome = call.Execute(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  auto created = call.services().writer->FindUser(*username);
  if (!created) return Error(Status::Internal("user " + *username + " vanished"));
  return AnswerUser(call, created->id, outcome->offset);
}

// Body: v1PatchUser — any of username, displayName, admin, active, password (+ isHashed).
net::Response PatchUser(Call& call) {
  auto id = UserIdParam(call);
  if (!id.ok()) return Error(id.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "",
                                    {"username", "displayName", "admin", "active", "password",
                                     "isHashed", "remote", "agentUserGroup"});
      !known.ok()) {
    return Error(known);
  }
  if (Status unsupported = CheckUnsupportedFields(*body, ""); !unsupported.ok()) {
    return Error(unsupported);
  }
  const bool self = *id == call.user().id;
  commands::UpdateUser command;
  command.user_id = *id;
  if (Present(*body, "username")) {
    if (Status admin = call.RequireAdmin("rename users"); !admin.ok()) return Error(admin);
    auto username = GetString(*body, "username", "username", true);
    if (!username.ok()) return Error(username.status());
    command.username = *username;
  }
  if (Present(*body, "displayName")) {
    if (!self) {
      if (Status admin = call.RequireAdmin("change another user's display name"); !admin.ok())
        return Error(admin);
    }
    auto display_name = GetString(*body, "displayName", "displayName", false);
    if (!display_name.ok()) return Error(display_name.status());
    command.display_name = *display_name;
  }
  for (const char* flag : {"admin", "active"}) {
    auto value = OptionalBool(*body, flag);
    if (!value.ok()) return Error(value.status());
    if (!*value) continue;
    std::string what =
        std::string(flag) == "admin" ? "change who is an admin" : "activate or deactivate users";
    if (Status admin = call.RequireAdmin(what); !admin.ok()) return Error(admin);
    (std::string(flag) == "admin" ? command.admin : command.active) = **value;
  }
  if (Present(*body, "password")) {
    if (!self) {
      if (Status admin = call.RequireAdmin("change another user's password"); !admin.ok())
        return Error(admin);
    }
    auto hash = StoredPasswordHash(*body);
    if (!hash.ok()) return Error(hash.status());
    command.password_hash = *hash;
  }
  if (Present(*body, "agentUserGroup")) {
    // Which Unix account a user's code runs as on every agent: admins only, as in Determined.
    if (Status admin = call.RequireAdmin("link users with agent users"); !admin.ok()) {
      return Error(admin);
    }
    auto account = ReadAgentUser(*body);
    if (!account.ok()) return Error(account.status());
    command.agent_user = *account;
  }
  auto outcome = call.Execute(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  return AnswerUser(call, *id, outcome->offset);
}

// The older route: the body is the CLI-hashed password as a JSON string, or {"password": ...}.
net::Response SetUserPassword(Call& call) {
  auto id = UserIdParam(call);
  if (!id.ok()) return Error(id.status());
  if (*id != call.user().id) {
    if (Status admin = call.RequireAdmin("change another user's password"); !admin.ok())
      return Error(admin);
  }
  auto parsed = ParseJsonDocument(call.request().body, kRequestBodyLimits, "body");
  if (!parsed.ok()) {
    return Error(Status::InvalidArgument("body: expected the password as a JSON string"));
  }
  const json& body = *parsed;
  json password_body = body.is_string() ? json{{"password", body}, {"isHashed", true}} : body;
  if (!password_body.is_object()) {
    return Error(Status::InvalidArgument("body: expected the password as a JSON string"));
  }
  auto hash = StoredPasswordHash(password_body);
  if (!hash.ok()) return Error(hash.status());
  commands::UpdateUser command;
  command.user_id = *id;
  command.password_hash = *hash;
  auto outcome = call.Execute(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  return AnswerUser(call, *id, outcome->offset);
}

}  // namespace cairn::api
