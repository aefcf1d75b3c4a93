#include "projections/user_projector.h"

#include <charconv>
#include <cstdio>
#include <functional>

#include "projections/view_reads.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kUserPrefix = "user/";
constexpr std::string_view kUsernamePrefix = "username/";
constexpr std::string_view kSessionPrefix = "session/";
constexpr std::string_view kAccessTokenPrefix = "token/";

// Zero-padded, so a scan returns users (and tokens) in id order.
std::string IdKey(std::string_view prefix, int32_t id) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%010d", id);
  return std::string(prefix) + digits;
}

std::string UserKey(int32_t user_id) { return IdKey(kUserPrefix, user_id); }

std::string AccessTokenKey(int32_t token_id) { return IdKey(kAccessTokenPrefix, token_id); }

std::string UsernameKey(const std::string& username) {
  return std::string(kUsernamePrefix) + username;
}

std::string SessionKey(const std::string& token_sha256) {
  return std::string(kSessionPrefix) + token_sha256;
}

// Reads the user `user_id`, lets `change` edit it, and writes it back stamped with the event's
// time. A user the projection does not know is left alone (the decider never names one).
Status UpdateUser(ViewStore& store, int32_t user_id, const Envelope& event,
                  const std::function<void(views::UserView&)>& change) {
  views::UserView user;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(UserKey(user_id), &user));
  if (!found) return Status::Ok();
  change(user);
  user.set_modified_unix_micros(event.time_unix_micros());
  return store.PutMessage(UserKey(user_id), user);
}

}  // namespace

Status UserProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kUserCreated: {
      const auto& created = event.user_created();
      views::UserView user;
      user.set_id(created.user_id());
      user.set_username(created.username());
      user.set_display_name(created.display_name());
      user.set_admin(created.admin());
      user.set_active(created.active());
      user.set_created_unix_micros(event.time_unix_micros());
      user.set_modified_unix_micros(event.time_unix_micros());
      CAIRN_RETURN_IF_ERROR(store.PutMessage(UserKey(created.user_id()), user));
      return store.Put(UsernameKey(created.username()), std::to_string(created.user_id()));
    }
    case Envelope::kUserUpdated: {
      const auto& updated = event.user_updated();
      std::string old_username;
      CAIRN_RETURN_IF_ERROR(UpdateUser(store, updated.user_id(), event, [&](views::UserView& user) {
        old_username = user.username();
        if (updated.has_username()) user.set_username(updated.username());
        if (updated.has_display_name()) user.set_display_name(updated.display_name());
        if (updated.has_admin()) user.set_admin(updated.admin());
        if (updated.has_active()) user.set_active(updated.active());
        if (updated.has_agent_user_group()) {
          *user.mutable_agent_user_group() = updated.agent_user_group();
        }
      }));
      if (!updated.has_username() || old_username.empty()) return Status::Ok();
      CAIRN_RETURN_IF_ERROR(store.Delete(UsernameKey(old_username)));
      return store.Put(UsernameKey(updated.username()), std::to_string(updated.user_id()));
    }
    case Envelope::kUserPasswordChanged:
      return UpdateUser(store, event.user_password_changed().user_id(), event,
                        [&](views::UserView& user) {
                          user.set_password_changed_unix_micros(event.time_unix_micros());
                        });
    case Envelope::kSessionStarted: {
      views::SessionView session;
      session.set_user_id(event.session_started().user_id());
      session.set_started_unix_micros(event.time_unix_micros());
      session.set_expires_unix_micros(event.session_started().expires_unix_micros());
      return store.PutMessage(SessionKey(event.session_started().token_sha256()), session);
    }
    case Envelope::kSessionEnded: {
      const std::string key = SessionKey(event.session_ended().token_sha256());
      views::SessionView session;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &session));
      if (!found) return Status::Ok();
      session.set_ended(true);
      session.set_ended_unix_micros(event.time_unix_micros());
      session.set_ended_reason(event.session_ended().reason());
      return store.PutMessage(key, session);
    }
    case Envelope::kAccessTokenCreated: {
      const auto& created = event.access_token_created();
      views::AccessTokenView token;
      token.set_id(created.token_id());
      token.set_user_id(created.user_id());
      token.set_created_unix_micros(event.time_unix_micros());
      token.set_expires_unix_micros(created.expires_unix_micros());
      token.set_description(created.description());
      return store.PutMessage(AccessTokenKey(created.token_id()), token);
    }
    case Envelope::kAccessTokenUpdated: {
      const auto& updated = event.access_token_updated();
      const std::string key = AccessTokenKey(updated.token_id());
      views::AccessTokenView token;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &token));
      if (!found) return Status::Ok();
      if (updated.has_description()) token.set_description(updated.description());
      if (updated.revoked() && !token.revoked()) {
        token.set_revoked(true);
        token.set_revoked_unix_micros(event.time_unix_micros());
        token.set_revoked_reason(updated.reason());
      }
      return store.PutMessage(key, token);
    }
    default:
      return Status::Ok();
  }
}

Result<std::vector<views::AccessTokenView>> ReadAccessTokens(ViewReader& reader) {
  return ScanViews<views::AccessTokenView>(reader, kAccessTokenPrefix);
}

Result<std::optional<views::AccessTokenView>> ReadAccessToken(ViewReader& reader,
                                                              int32_t token_id) {
  return ReadView<views::AccessTokenView>(reader, AccessTokenKey(token_id));
}

Result<std::optional<views::UserView>> ReadUser(ViewReader& reader, int32_t user_id) {
  return ReadView<views::UserView>(reader, UserKey(user_id));
}

Result<std::optional<views::UserView>> ReadUserByName(ViewReader& reader,
                                                      const std::string& username) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> id, reader.Get(UsernameKey(username)));
  if (!id) return std::optional<views::UserView>();
  int32_t user_id = 0;
  auto [end, error] = std::from_chars(id->data(), id->data() + id->size(), user_id);
  if (error != std::errc() || end != id->data() + id->size()) {
    return Status::Corruption("users: the id of username " + username + " is '" + *id + "'");
  }
  return ReadUser(reader, user_id);
}

Result<std::vector<views::UserView>> ReadUsers(ViewReader& reader) {
  return ScanViews<views::UserView>(reader, kUserPrefix);
}

}  // namespace cairn::projections
