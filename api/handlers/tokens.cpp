#include "api/handlers/tokens.h"

#include <algorithm>

#include "api/rest_util.h"
#include "base/clock.h"
#include "base/password.h"

namespace cairn::api {

using nlohmann::json;

namespace {

json TokenInfoJson(const views::AccessTokenView& token) {
  return {{"id", token.id()},
          {"userId", token.user_id()},
          {"createdAt", FormatRfc3339(token.created_unix_micros())},
          {"expiry", FormatRfc3339(token.expires_unix_micros())},
          {"description", token.description()},
          {"revoked", token.revoked()},
          {"tokenType", "TOKEN_TYPE_ACCESS_TOKEN"}};
}

// A user's own tokens are theirs to manage; anyone's are an admin's.
Status MayManageTokensOf(const Call& call, int32_t user_id) {
  if (call.user().admin || call.user().id == user_id) return Status::Ok();
  return Status::PermissionDenied("only admins may manage other users' access tokens (you are " +
                                  call.user().username + ")");
}

// The lifespan Determined's CLI sends: absent or null (the default), "-1" (the longest allowed),
// or a positive Go duration no longer than the longest allowed.
Result<int64_t> LifespanOf(const Call& call, const json& body) {
  const MasterFacts& facts = call.services().facts;
  CAIRN_ASSIGN_OR_RETURN(auto text, OptionalString(body, "lifespan"));
  if (!text || text->empty()) return facts.access_token_default_lifespan_micros;
  if (*text == "-1") return facts.access_token_max_lifespan_micros;
  auto lifespan = ParseGoDuration(*text);
  if (!lifespan.ok()) {
    return Status::InvalidArgument("failed to parse lifespan " + text->substr(0, 40) + ": " +
                                   lifespan.status().message());
  }
  if (*lifespan <= 0) {
    return Status::InvalidArgument(
        "lifespan must be a Go-formatted duration string with a positive value");
  }
  if (*lifespan > facts.access_token_max_lifespan_micros) {
    return Status::InvalidArgument(
        "token lifespan must be less than the max token lifespan (" +
        std::to_string(facts.access_token_max_lifespan_micros / (int64_t{24} * 3600 * 1'000'000)) +
        " days, security.token.max_lifespan_days)");
  }
  return *lifespan;
}

Result<views::AccessTokenView> FindToken(Call& call, int32_t token_id) {
  CAIRN_ASSIGN_OR_RETURN(auto token, call.services().projections->GetAccessToken(token_id));
  if (!token)
    return Status::NotFound("Token with id: {" + std::to_string(token_id) + "} not found");
  return std::move(*token);
}

}  // namespace

net::Response CreateAccessTokenRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto user_id = GetInt32(*body, "userId", "userId");
  if (!user_id.ok()) return Error(user_id.status());
  if (!*user_id) return Error(Status::InvalidArgument("userId: required"));
  if (Status may = MayManageTokensOf(call, **user_id); !may.ok()) return Error(may);
  auto lifespan = LifespanOf(call, *body);
  if (!lifespan.ok()) return Error(lifespan.status());
  auto description = OptionalString(*body, "description");
  if (!description.ok()) return Error(description.status());

  const std::string token = NewSessionToken();
  commands::CreateAccessToken create;
  create.user_id = **user_id;
  create.token_sha256 = SessionTokenSha256(token);
  create.expires_unix_micros = NowUnixMicros() + *lifespan;
  create.description = description->value_or("");
  auto outcome = call.ExecuteAndShow(std::move(create));
  if (!outcome.ok()) return Error(outcome.status());
  // The decision's entity is "token/<id>".
  const std::string& entity = outcome->entity_id;
  const int32_t token_id = std::atoi(entity.substr(entity.find('/') + 1).c_str());
  return Ok({{"token", token}, {"tokenId", token_id}}, outcome->offset);
}

net::Response ListAccessTokensRoute(Call& call) {
  const net::Request& request = call.request();
  const bool show_inactive = request.QueryParam("showInactive") == "true";
  std::optional<int32_t> only_user;
  if (const std::string username = request.QueryParam("username"); !username.empty()) {
    auto user = call.services().projections->GetUserByName(username);
    if (!user.ok()) return Error(user.status());
    if (!*user) return Error(Status::NotFound("user " + username + " not found"));
    only_user = (*user)->id();
  }
  // Everyone's for an admin; a user sees their own (and asking for another's is refused).
  if (only_user) {
    if (Status may = MayManageTokensOf(call, *only_user); !may.ok()) return Error(may);
  } else if (!call.user().admin) {
    only_user = call.user().id;
  }
  std::vector<int32_t> ids;
  for (const std::string& text : request.QueryParams("tokenIds")) {
    auto id = ParseInt32Id(text, "tokenIds");
    if (!id.ok()) return Error(id.status());
    ids.push_back(*id);
  }
  auto tokens = call.services().projections->ListAccessTokens();
  if (!tokens.ok()) return Error(tokens.status());
  const int64_t now = NowUnixMicros();
  json infos = json::array();
  for (const views::AccessTokenView& token : *tokens) {
    if (only_user && token.user_id() != *only_user) continue;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), token.id()) == ids.end()) continue;
    const bool active = !token.revoked() && token.expires_unix_micros() > now;
    if (!active && !show_inactive) continue;
    infos.push_back(TokenInfoJson(token));
  }
  if (request.QueryParam("orderBy") == "ORDER_BY_DESC") {
    std::reverse(infos.begin(), infos.end());
  }
  const int total = static_cast<int>(infos.size());
  return Ok({{"tokenInfo", std::move(infos)},
             {"pagination",
              {{"offset", 0},
               {"limit", total},
               {"startIndex", 0},
               {"endIndex", total},
               {"total", total}}}});
}

net::Response PatchAccessTokenRoute(Call& call) {
  auto token_id = ParseInt32Id(call.Param("tokenId"), "token");
  if (!token_id.ok()) return Error(token_id.status());
  auto body = call.Body(true);
  if (!body.ok()) return Error(body.status());
  auto token = FindToken(call, *token_id);
  if (!token.ok()) return Error(token.status());
  if (Status may = MayManageTokensOf(call, token->user_id()); !may.ok()) return Error(may);
  auto description = OptionalString(*body, "description");
  if (!description.ok()) return Error(description.status());
  auto set_revoked = OptionalBool(*body, "setRevoked");
  if (!set_revoked.ok()) return Error(set_revoked.status());
  const bool revoke = set_revoked->value_or(false);
  commands::UpdateAccessToken update;
  update.token_id = *token_id;
  // Determined's CLI sends "" for "unchanged".
  if (*description && !(*description)->empty()) update.description = **description;
  update.revoke = revoke;
  // Answered with the view as this change leaves it.
  auto outcome = call.ExecuteAndShow(std::move(update));
  if (!outcome.ok()) return Error(outcome.status());
  auto changed = FindToken(call, *token_id);
  if (!changed.ok()) return Error(changed.status());
  return Ok({{"tokenInfo", TokenInfoJson(*changed)}}, outcome->offset);
}

}  // namespace cairn::api
