#include "commands/identity/identity_snapshot.h"

#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(UserRecord, 7);
CAIRN_SNAPSHOT_COVERS(SessionRecord, 2);
CAIRN_SNAPSHOT_COVERS(AccessTokenRecord, 6);
CAIRN_SNAPSHOT_COVERS(IdentityState, 8);

void EncodeIdentity(const IdentityState& identity, snapshot::Identity& out) {
  for (const auto& [id, user] : identity.users) {
    auto* stored = out.add_users();
    stored->set_id(user.id);
    stored->set_username(user.username);
    stored->set_display_name(user.display_name);
    stored->set_admin(user.admin);
    stored->set_active(user.active);
    stored->set_password_hash(user.password_hash);
    if (user.agent_user) *stored->mutable_agent_user() = AgentUserGroupOf(*user.agent_user);
  }
  for (const auto& [token, session] : identity.sessions) {
    auto* stored = out.add_sessions();
    stored->set_token_sha256(token);
    stored->set_user_id(session.user_id);
    stored->set_expires_unix_micros(session.expires_unix_micros);
  }
  for (const auto& [username, times] : identity.failures) {
    auto* stored = out.add_failures();
    stored->set_username(username);
    for (int64_t time : times) stored->add_times_unix_micros(time);
  }
  out.set_last_user_id(identity.last_user_id);
  for (const auto& [id, token] : identity.access_tokens) {
    auto* stored = out.add_access_tokens();
    stored->set_id(token.id);
    stored->set_user_id(token.user_id);
    stored->set_token_sha256(token.token_sha256);
    stored->set_expires_unix_micros(token.expires_unix_micros);
    stored->set_description(token.description);
    stored->set_revoked(token.revoked);
  }
  out.set_last_access_token_id(identity.last_access_token_id);
}

void DecodeIdentity(const snapshot::Identity& in, IdentityState& identity) {
  for (const auto& user : in.users()) {
    UserRecord& record = identity.users[user.id()];
    record = UserRecord{user.id(),    user.username(), user.display_name(),
                        user.admin(), user.active(),   user.password_hash()};
    if (user.has_agent_user()) record.agent_user = AgentUserOf(user.agent_user());
    identity.user_ids[user.username()] = user.id();
  }
  for (const auto& session : in.sessions()) {
    identity.sessions[session.token_sha256()] =
        SessionRecord{session.user_id(), session.expires_unix_micros()};
  }
  for (const auto& failures : in.failures()) {
    identity.failures[failures.username()].assign(failures.times_unix_micros().begin(),
                                                  failures.times_unix_micros().end());
  }
  identity.last_user_id = in.last_user_id();
  for (const auto& token : in.access_tokens()) {
    identity.access_tokens[token.id()] = AccessTokenRecord{
        token.id(),          token.user_id(), token.token_sha256(), token.expires_unix_micros(),
        token.description(), token.revoked()};
    identity.access_token_ids[token.token_sha256()] = token.id();
  }
  identity.last_access_token_id = in.last_access_token_id();
}

}  // namespace cairn::commands
