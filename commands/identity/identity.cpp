#include "commands/identity/identity.h"

#include <algorithm>

#include "base/encoding.h"

namespace cairn::commands {
namespace {

using events::Envelope;

// Failed logins remembered per username: enough for any sane throttle, bounded against floods.
constexpr size_t kFailuresKept = 64;

Envelope SessionEndedEvent(const std::string& token_sha256, int32_t user_id,
                           const std::string& reason) {
  Envelope event;
  auto* ended = event.mutable_session_ended();
  ended->set_token_sha256(token_sha256);
  ended->set_user_id(user_id);
  ended->set_reason(reason);
  return event;
}

// Ends every live session of `user_id`, oldest token first (map order: deterministic).
void EndSessionsOf(const IdentityState& state, int32_t user_id, const std::string& reason,
                   std::vector<Envelope>& events) {
  for (const auto& [token_sha256, session] : state.sessions) {
    if (session.user_id == user_id)
      events.push_back(SessionEndedEvent(token_sha256, user_id, reason));
  }
}

Envelope TokenRevokedEvent(const AccessTokenRecord& token, const std::string& reason) {
  Envelope event;
  auto* updated = event.mutable_access_token_updated();
  updated->set_token_id(token.id);
  updated->set_user_id(token.user_id);
  updated->set_revoked(true);
  updated->set_reason(reason);
  return event;
}

int ActiveAdmins(const IdentityState& state) {
  int admins = 0;
  for (const auto& [id, user] : state.users) admins += user.admin && user.active ? 1 : 0;
  return admins;
}

}  // namespace

const UserRecord* IdentityState::FindUser(int32_t user_id) const {
  auto it = users.find(user_id);
  return it == users.end() ? nullptr : &it->second;
}

const UserRecord* IdentityState::FindUser(const std::string& username) const {
  auto it = user_ids.find(username);
  return it == user_ids.end() ? nullptr : FindUser(it->second);
}

const AccessTokenRecord* IdentityState::FindAccessToken(int32_t token_id) const {
  auto it = access_tokens.find(token_id);
  return it == access_tokens.end() ? nullptr : &it->second;
}

const UserRecord* IdentityState::SessionUser(const std::string& token_sha256, int64_t now) const {
  int32_t user_id = 0;
  if (auto it = sessions.find(token_sha256); it != sessions.end()) {
    if (it->second.expires_unix_micros <= now) return nullptr;
    user_id = it->second.user_id;
  } else if (auto id = access_token_ids.find(token_sha256); id != access_token_ids.end()) {
    const AccessTokenRecord* token = FindAccessToken(id->second);
    if (token == nullptr || !token->ActiveAt(now)) return nullptr;
    user_id = token->user_id;
  } else {
    return nullptr;
  }
  const UserRecord* user = FindUser(user_id);
  return user != nullptr && user->active ? user : nullptr;
}

bool IdentityState::Throttled(const std::string& username, int64_t now,
                              const LoginThrottle& throttle) const {
  auto it = failures.find(username);
  if (it == failures.end() || throttle.max_failures <= 0) return false;
  int recent = 0;
  for (int64_t time : it->second) recent += time > now - throttle.window_micros ? 1 : 0;
  return recent >= throttle.max_failures;
}

void ApplyIdentity(IdentityState& state, const Envelope& event) {
  switch (event.payload_case()) {
    case Envelope::kUserCreated: {
      const auto& created = event.user_created();
      UserRecord& user = state.users[created.user_id()];
      user = UserRecord{created.user_id(), created.username(), created.display_name(),
                        created.admin(),   created.active(),   created.password_hash()};
      state.user_ids[created.username()] = created.user_id();
      state.last_user_id = std::max(state.last_user_id, created.user_id());
      break;
    }
    case Envelope::kUserUpdated: {
      const auto& updated = event.user_updated();
      auto it = state.users.find(updated.user_id());
      if (it == state.users.end()) break;
      UserRecord& user = it->second;
      if (updated.has_username()) {
        state.user_ids.erase(user.username);
        user.username = updated.username();
        state.user_ids[user.username] = user.id;
      }
      if (updated.has_display_name()) user.display_name = updated.display_name();
      if (updated.has_admin()) user.admin = updated.admin();
      if (updated.has_active()) user.active = updated.active();
      if (updated.has_agent_user_group()) user.agent_user = AgentUserOf(updated.agent_user_group());
      break;
    }
    case Envelope::kUserPasswordChanged: {
      auto it = state.users.find(event.user_password_changed().user_id());
      if (it != state.users.end()) {
        it->second.password_hash = event.user_password_changed().password_hash();
      }
      break;
    }
    case Envelope::kSessionStarted: {
      const auto& started = event.session_started();
      // Forget the sessions that expired by now: the state holds only what can still be used.
      std::erase_if(state.sessions, [&](const auto& entry) {
        return entry.second.expires_unix_micros <= event.time_unix_micros();
      });
      state.sessions[started.token_sha256()] =
          SessionRecord{started.user_id(), started.expires_unix_micros()};
      if (const UserRecord* user = state.FindUser(started.user_id())) {
        state.failures.erase(user->username);
      }
      break;
    }
    case Envelope::kSessionEnded:
      state.sessions.erase(event.session_ended().token_sha256());
      break;
    case Envelope::kAccessTokenCreated: {
      const auto& created = event.access_token_created();
      state.access_tokens[created.token_id()] =
          AccessTokenRecord{created.token_id(),     created.user_id(),
                            created.token_sha256(), created.expires_unix_micros(),
                            created.description(),  false};
      state.access_token_ids[created.token_sha256()] = created.token_id();
      state.last_access_token_id = std::max(state.last_access_token_id, created.token_id());
      break;
    }
    case Envelope::kAccessTokenUpdated: {
      const auto& updated = event.access_token_updated();
      auto it = state.access_tokens.find(updated.token_id());
      if (it == state.access_tokens.end()) break;
      if (updated.has_description()) it->second.description = updated.description();
      if (updated.revoked()) it->second.revoked = true;
      break;
    }
    case Envelope::kLoginFailed: {
      if (event.login_failed().throttled()) break;
      // Forget failures older than any throttling window can reach: a flood of made-up names
      // must not grow the state (and every replay) without bound.
      const int64_t oldest_kept = event.time_unix_micros() - kLongestFailureWindowMicros;
      std::erase_if(state.failures,
                    [&](const auto& entry) { return entry.second.back() < oldest_kept; });
      auto& times = state.failures[event.login_failed().username()];
      times.push_back(event.time_unix_micros());
      while (times.size() > kFailuresKept) times.pop_front();
      break;
    }
    default:
      break;
  }
}

AgentUser AgentUserOf(const events::AgentUserGroup& linked) {
  return AgentUser{linked.uid(), linked.gid(), linked.user(), linked.group()};
}

events::AgentUserGroup AgentUserGroupOf(const AgentUser& account) {
  events::AgentUserGroup linked;
  linked.set_uid(account.uid);
  linked.set_gid(account.gid);
  linked.set_user(account.user);
  linked.set_group(account.group);
  return linked;
}

Status SetRunAs(const IdentityState& identity, const PartialAgentUser* workspace_link,
                events::TaskSpec& spec) {
  spec.clear_run_as();
  const UserRecord* owner = identity.FindUser(spec.user());
  const bool user_linked = owner != nullptr && owner->agent_user;
  if (!user_linked && workspace_link == nullptr) return Status::Ok();
  PartialAgentUser merged;
  if (user_linked) {
    const AgentUser& own = *owner->agent_user;
    merged = PartialAgentUser{own.uid, own.gid, own.user, own.group};
  }
  if (workspace_link != nullptr) {
    if (workspace_link->uid) merged.uid = workspace_link->uid;
    if (workspace_link->gid) merged.gid = workspace_link->gid;
    if (workspace_link->user) merged.user = workspace_link->user;
    if (workspace_link->group) merged.group = workspace_link->group;
  }
  std::string missing;
  for (const auto& [name, present] : {std::pair{"agent uid", merged.uid.has_value()},
                                      std::pair{"agent gid", merged.gid.has_value()},
                                      std::pair{"agent user", merged.user.has_value()},
                                      std::pair{"agent group", merged.group.has_value()}}) {
    if (!present) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  if (!missing.empty()) {
    return Status::FailedPrecondition(
        "the workspace links only part of an agent account and user " + spec.user() +
        " is not linked to complete it (missing: " + missing +
        "); set them on the workspace or link the user (det user link-with-agent-user)");
  }
  *spec.mutable_run_as() =
      AgentUserGroupOf(AgentUser{*merged.uid, *merged.gid, *merged.user, *merged.group});
  return Status::Ok();
}

PartialAgentUser PartialAgentUserOf(const events::WorkspaceAgentUser& linked) {
  PartialAgentUser account;
  if (linked.has_uid()) account.uid = linked.uid();
  if (linked.has_gid()) account.gid = linked.gid();
  if (linked.has_user()) account.user = linked.user();
  if (linked.has_group()) account.group = linked.group();
  return account;
}

events::WorkspaceAgentUser WorkspaceAgentUserOf(const PartialAgentUser& account) {
  events::WorkspaceAgentUser linked;
  if (account.uid) linked.set_uid(*account.uid);
  if (account.gid) linked.set_gid(*account.gid);
  if (account.user) linked.set_user(*account.user);
  if (account.group) linked.set_group(*account.group);
  return linked;
}

namespace {

Status CheckAgentId(const char* what, int32_t id) {
  if (id < 0) return Status::InvalidArgument(std::string(what) + " must not be negative");
  return Status::Ok();
}

Status CheckUnixName(const char* what, const std::string& name) {
  const bool valid =
      !name.empty() && name.size() <= 32 && name.front() != '-' &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
      });
  if (valid) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + " '" + name +
                                 "' is not a Unix name (1-32 of a-z, 0-9, _ and -, not "
                                 "starting with -)");
}

}  // namespace

Status CheckAgentUser(const AgentUser& account) {
  CAIRN_RETURN_IF_ERROR(CheckAgentId("agent uid", account.uid));
  CAIRN_RETURN_IF_ERROR(CheckAgentId("agent gid", account.gid));
  CAIRN_RETURN_IF_ERROR(CheckUnixName("agent user", account.user));
  return CheckUnixName("agent group", account.group);
}

Status CheckPartialAgentUser(const PartialAgentUser& account) {
  if (!account.uid && !account.gid && !account.user && !account.group) {
    return Status::InvalidArgument(
        "an agent user link sets at least one of agent uid, gid, user and group");
  }
  if (account.uid) CAIRN_RETURN_IF_ERROR(CheckAgentId("agent uid", *account.uid));
  if (account.gid) CAIRN_RETURN_IF_ERROR(CheckAgentId("agent gid", *account.gid));
  if (account.user) CAIRN_RETURN_IF_ERROR(CheckUnixName("agent user", *account.user));
  if (account.group) CAIRN_RETURN_IF_ERROR(CheckUnixName("agent group", *account.group));
  return Status::Ok();
}

Status CheckUsername(const std::string& username) {
  if (username.empty()) return Status::InvalidArgument("username: must not be empty");
  if (username.size() > 128) return Status::InvalidArgument("username: longer than 128 characters");
  for (unsigned char c : username) {
    if (c <= ' ' || c == 0x7f || c == '/') {
      return Status::InvalidArgument("username: '" + username +
                                     "' holds whitespace, a control character or '/'");
    }
  }
  return Status::Ok();
}

namespace {

// Determined's rules for a display name: only a name no other user goes by (as username or
// display name, ignoring case), "admin" only for admins, "determined" only for that user.
Status CheckDisplayName(const IdentityState& state, const UserRecord* user, bool admin,
                        const std::string& username, const std::string& name) {
  if (name.empty()) return Status::Ok();
  const std::string lower = AsciiLower(name);
  if (!admin && lower == "admin") {
    return Status::InvalidArgument("Non-admin user cannot be renamed 'admin'");
  }
  if (username != "determined" && lower == "determined") {
    return Status::InvalidArgument("User cannot be renamed 'determined'");
  }
  for (const auto& [id, other] : state.users) {
    if (user != nullptr && id == user->id) continue;
    if (AsciiLower(other.username) == lower || AsciiLower(other.display_name) == lower) {
      return Status::InvalidArgument("can not change display name to " + name +
                                     " found a similar username or display name");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Envelope>> DecideCreateUser(const IdentityState& state,
                                               const CreateUser& command) {
  CAIRN_RETURN_IF_ERROR(CheckUsername(command.username));
  if (state.FindUser(command.username) != nullptr) {
    return Status::AlreadyExists("user " + command.username + " already exists");
  }
  if (command.password_hash.empty()) return Status::Internal("a user needs a password hash");
  Envelope event;
  auto* created = event.mutable_user_created();
  created->set_user_id(state.last_user_id + 1);
  created->set_username(command.username);
  created->set_display_name(command.display_name);
  created->set_admin(command.admin);
  created->set_active(command.active);
  created->set_password_hash(command.password_hash);
  return std::vector<Envelope>{std::move(event)};
}

Result<std::vector<Envelope>> DecideUpdateUser(const IdentityState& state,
                                               const UpdateUser& command) {
  const UserRecord* user = state.FindUser(command.user_id);
  if (user == nullptr) {
    return Status::NotFound("user " + std::to_string(command.user_id) + " not found");
  }
  if (command.username && *command.username != user->username) {
    CAIRN_RETURN_IF_ERROR(CheckUsername(*command.username));
    if (state.FindUser(*command.username) != nullptr) {
      return Status::AlreadyExists("user " + *command.username + " already exists");
    }
  }
  const bool loses_admin =
      user->admin && user->active &&
      ((command.admin && !*command.admin) || (command.active && !*command.active));
  if (loses_admin && ActiveAdmins(state) <= 1) {
    return Status::FailedPrecondition("user " + user->username +
                                      " is the last active admin; make another user admin first");
  }
  std::vector<Envelope> events;
  Envelope event;
  auto* updated = event.mutable_user_updated();
  updated->set_user_id(user->id);
  bool changes = false;
  if (command.username && *command.username != user->username) {
    updated->set_username(*command.username);
    changes = true;
  }
  if (command.display_name && *command.display_name != user->display_name) {
    CAIRN_RETURN_IF_ERROR(CheckDisplayName(state, user, command.admin.value_or(user->admin),
                                           user->username, *command.display_name));
    updated->set_display_name(*command.display_name);
    changes = true;
  }
  if (command.admin && *command.admin != user->admin) {
    updated->set_admin(*command.admin);
    changes = true;
  }
  if (command.active && *command.active != user->active) {
    updated->set_active(*command.active);
    changes = true;
  }
  if (command.agent_user && command.agent_user != user->agent_user) {
    CAIRN_RETURN_IF_ERROR(CheckAgentUser(*command.agent_user));
    *updated->mutable_agent_user_group() = AgentUserGroupOf(*command.agent_user);
    changes = true;
  }
  if (changes) events.push_back(std::move(event));
  if (command.active && !*command.active && user->active) {
    EndSessionsOf(state, user->id, "user deactivated", events);
    for (const auto& [id, token] : state.access_tokens) {
      if (token.user_id == user->id && !token.revoked) {
        events.push_back(TokenRevokedEvent(token, "user deactivated"));
      }
    }
  }
  if (command.password_hash) {
    Envelope changed;
    changed.mutable_user_password_changed()->set_user_id(user->id);
    changed.mutable_user_password_changed()->set_password_hash(*command.password_hash);
    events.push_back(std::move(changed));
    if (!(command.active && !*command.active)) {
      EndSessionsOf(state, user->id, "password changed", events);
    }
  }
  return events;
}

Result<std::vector<Envelope>> DecideStartSession(const IdentityState& state,
                                                 const StartSession& command, int64_t now) {
  const UserRecord* user = state.FindUser(command.user_id);
  // The same answer whether the user is gone, inactive or changed password meanwhile: a login
  // must not tell which usernames exist.
  if (user == nullptr || !user->active || user->password_hash != command.checked_password_hash) {
    return Status::Unauthenticated("invalid credentials");
  }
  if (command.expires_unix_micros <= now) return Status::InvalidArgument("session already expired");
  if (state.sessions.count(command.token_sha256)) return Status::AlreadyExists("token reused");
  Envelope event;
  auto* started = event.mutable_session_started();
  started->set_token_sha256(command.token_sha256);
  started->set_user_id(user->id);
  started->set_expires_unix_micros(command.expires_unix_micros);
  return std::vector<Envelope>{std::move(event)};
}

Result<std::vector<Envelope>> DecideEndSession(const IdentityState& state,
                                               const EndSession& command) {
  auto it = state.sessions.find(command.token_sha256);
  // Ending an ended session is done already (logout is safe to repeat).
  if (it == state.sessions.end()) return std::vector<Envelope>{};
  return std::vector<Envelope>{
      SessionEndedEvent(command.token_sha256, it->second.user_id, command.reason)};
}

Result<std::vector<Envelope>> DecideCreateAccessToken(const IdentityState& state,
                                                      const CreateAccessToken& command,
                                                      int64_t now) {
  const UserRecord* user = state.FindUser(command.user_id);
  if (user == nullptr) {
    return Status::NotFound("user " + std::to_string(command.user_id) + " not found");
  }
  if (!user->active) {
    return Status::FailedPrecondition("user " + user->username + " is not active");
  }
  if (command.token_sha256.size() != 64 || state.access_token_ids.count(command.token_sha256) ||
      state.sessions.count(command.token_sha256)) {
    return Status::InvalidArgument("token_sha256: not a new token's SHA-256");
  }
  if (command.expires_unix_micros <= now) {
    return Status::InvalidArgument("lifespan: the token would expire before it is made");
  }
  if (command.description.size() > 1024) {
    return Status::InvalidArgument("description: longer than 1024 bytes");
  }
  Envelope event;
  auto* created = event.mutable_access_token_created();
  created->set_token_id(state.last_access_token_id + 1);
  created->set_user_id(user->id);
  created->set_token_sha256(command.token_sha256);
  created->set_expires_unix_micros(command.expires_unix_micros);
  created->set_description(ValidUtf8Prefix(command.description, 1024));
  return std::vector<Envelope>{std::move(event)};
}

Result<std::vector<Envelope>> DecideUpdateAccessToken(const IdentityState& state,
                                                      const UpdateAccessToken& command,
                                                      int64_t now) {
  const AccessTokenRecord* token = state.FindAccessToken(command.token_id);
  if (token == nullptr) {
    return Status::NotFound("Token with id: {" + std::to_string(command.token_id) + "} not found");
  }
  if (!token->ActiveAt(now)) {
    return Status::FailedPrecondition("unable to update inactive token with ID " +
                                      std::to_string(command.token_id));
  }
  if (command.description && command.description->size() > 1024) {
    return Status::InvalidArgument("description: longer than 1024 bytes");
  }
  Envelope event;
  auto* updated = event.mutable_access_token_updated();
  updated->set_token_id(token->id);
  updated->set_user_id(token->user_id);
  if (command.description) updated->set_description(*command.description);
  if (command.revoke) {
    updated->set_revoked(true);
    updated->set_reason("revoked");
  }
  if (!command.description && !command.revoke) return std::vector<Envelope>{};
  return std::vector<Envelope>{std::move(event)};
}

std::vector<Envelope> DecideRecordLoginFailure(const RecordLoginFailure& command) {
  Envelope event;
  auto* failed = event.mutable_login_failed();
  // Whatever name an anonymous caller sent, cut between characters: protobuf refuses to read back
  // a string field that is not UTF-8, so a cut character would make the whole log unreadable.
  failed->set_username(ValidUtf8Prefix(command.username, 128));
  failed->set_reason(command.reason);
  failed->set_throttled(command.throttled);
  return {std::move(event)};
}

std::vector<Envelope> DecideRecordAccessDenied(const RecordAccessDenied& command) {
  Envelope event;
  auto* denied = event.mutable_access_denied();
  // The path is percent-decoded bytes (%FF included) and the reason may quote the caller: made
  // valid UTF-8 for the same reason as a failed login's name.
  denied->set_method(ValidUtf8Prefix(command.method, 16));
  denied->set_path(ValidUtf8Prefix(command.path, 1024));
  denied->set_reason(ValidUtf8Prefix(command.reason, 1024));
  return {std::move(event)};
}

}  // namespace cairn::commands
