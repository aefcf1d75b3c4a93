// Users and their sessions, on the write side: the state the identity events fold into, and the
// pure decisions over it. Passwords reach here already hashed (base/password.h): hashing is slow
// and salted, so the edge does it, and the decider only records the result. A login's password
// is checked at the edge against the hash this state holds; the decider then starts the session
// only if that hash is still the user's (a change in between refuses the login).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "events.pb.h"

namespace cairn::commands {

// A Unix account on the agents that tasks run as (events::AgentUserGroup).
struct AgentUser {
  int32_t uid = 0;
  int32_t gid = 0;
  std::string user;
  std::string group;
  bool operator==(const AgentUser&) const = default;
};
AgentUser AgentUserOf(const events::AgentUserGroup& linked);
events::AgentUserGroup AgentUserGroupOf(const AgentUser& account);
// InvalidArgument unless uid and gid are 0-2^31 and user and group are Unix names (1-32 of
// [a-z0-9_-], not starting with '-').
Status CheckAgentUser(const AgentUser& account);

// A workspace's link: each field it sets replaces the task owner's (Determined's merge).
struct PartialAgentUser {
  std::optional<int32_t> uid;
  std::optional<int32_t> gid;
  std::optional<std::string> user;
  std::optional<std::string> group;
  bool operator==(const PartialAgentUser&) const = default;
};
PartialAgentUser PartialAgentUserOf(const events::WorkspaceAgentUser& linked);
events::WorkspaceAgentUser WorkspaceAgentUserOf(const PartialAgentUser& account);
// As CheckAgentUser for the fields that are set; at least one must be.
Status CheckPartialAgentUser(const PartialAgentUser& account);

struct UserRecord {
  int32_t id = 0;
  std::string username;
  std::string display_name;
  bool admin = false;
  bool active = true;
  std::string password_hash;  // argon2id (base/password.h)
  // The Unix account the user's tasks run as (det user link-with-agent-user); none: the agent's.
  std::optional<AgentUser> agent_user{};
};

struct SessionRecord {
  int32_t user_id = 0;
  int64_t expires_unix_micros = 0;
};

// A long-lived access token; `revoked` ones stay, so edits can tell them from unknown ids.
struct AccessTokenRecord {
  int32_t id = 0;
  int32_t user_id = 0;
  std::string token_sha256;
  int64_t expires_unix_micros = 0;
  std::string description;
  bool revoked = false;

  bool ActiveAt(int64_t now) const { return !revoked && expires_unix_micros > now; }
};

// How many failed logins within a window stop further attempts for a username (Determined has
// no throttle; Slurm sites get it from PAM). Refused attempts do not extend the window.
struct LoginThrottle {
  int max_failures = 5;
  int64_t window_micros = int64_t{5} * 60 * 1'000'000;
};
// The longest window master.yaml allows (security.failed_login_window_seconds <= 86400):
// failures older than this are forgotten whatever the configured window.
inline constexpr int64_t kLongestFailureWindowMicros = int64_t{86400} * 1'000'000;

struct IdentityState {
  std::map<int32_t, UserRecord> users;
  std::map<std::string, int32_t> user_ids;              // by username
  std::map<std::string, SessionRecord> sessions;        // live sessions, by token SHA-256
  std::map<std::string, std::deque<int64_t>> failures;  // username -> times of failed logins
  int32_t last_user_id = 0;
  std::map<int32_t, AccessTokenRecord> access_tokens;  // by id, revoked and expired ones too
  std::map<std::string, int32_t> access_token_ids;     // by token SHA-256
  int32_t last_access_token_id = 0;

  const UserRecord* FindUser(int32_t user_id) const;
  const UserRecord* FindUser(const std::string& username) const;
  const AccessTokenRecord* FindAccessToken(int32_t token_id) const;
  // The user of the live session or the active access token whose SHA-256 this is; nullptr when
  // the token is unknown, ended, revoked or expired by `now`, or its user is deactivated.
  const UserRecord* SessionUser(const std::string& token_sha256, int64_t now) const;
  // Whether logins as `username` are refused at `now` for too many recent failures.
  bool Throttled(const std::string& username, int64_t now, const LoginThrottle& throttle) const;
};

// Sets spec.run_as to the linked account of its owner (spec.user) with `workspace_link` (the
// task's workspace's, or nullptr) laid over it field by field, or clears it when neither links
// one: no submitter chooses its own account. FailedPrecondition, naming what is missing, when
// the workspace links part of an account and the owner's link does not complete it.
Status SetRunAs(const IdentityState& identity, const PartialAgentUser* workspace_link,
                events::TaskSpec& spec);

// Folds an identity event into the state; other events are ignored. Sessions expired by the
// event's time are forgotten, so the state holds only live sessions.
void ApplyIdentity(IdentityState& state, const events::Envelope& event);

// --- Commands ---------------------------------------------------------------------------------

struct CreateUser {
  static constexpr const char* kName = "CreateUser";
  std::string username;
  std::string display_name;
  bool admin = false;
  bool active = true;
  std::string password_hash;
};

// Changes what is set. Deactivating a user or changing their password ends their sessions;
// deactivating also revokes their access tokens.
struct UpdateUser {
  static constexpr const char* kName = "UpdateUser";
  int32_t user_id = 0;
  std::optional<std::string> username{};
  std::optional<std::string> display_name{};
  std::optional<bool> admin{};
  std::optional<bool> active{};
  std::optional<std::string> password_hash{};
  std::optional<AgentUser> agent_user{};  // links the user (admins only, at the edge)
};

struct StartSession {
  static constexpr const char* kName = "StartSession";
  int32_t user_id = 0;
  std::string token_sha256;
  std::string checked_password_hash;  // the hash the edge verified the password against
  int64_t expires_unix_micros = 0;
};

struct EndSession {
  static constexpr const char* kName = "EndSession";
  std::string token_sha256;
  std::string reason;
};

struct RecordLoginFailure {
  static constexpr const char* kName = "RecordLoginFailure";
  std::string username;
  std::string reason;
  bool throttled = false;
};

// A new access token for `user_id`, whose SHA-256 the edge made (the token never reaches here).
struct CreateAccessToken {
  static constexpr const char* kName = "CreateAccessToken";
  int32_t user_id = 0;
  std::string token_sha256;
  int64_t expires_unix_micros = 0;
  std::string description;
};

// Changes an active token's description, or revokes it.
struct UpdateAccessToken {
  static constexpr const char* kName = "UpdateAccessToken";
  int32_t token_id = 0;
  std::optional<std::string> description{};
  bool revoke = false;
};

// A refused change, for the audit trail (AccessDenied).
struct RecordAccessDenied {
  static constexpr const char* kName = "RecordAccessDenied";
  std::string method;
  std::string path;
  std::string reason;
};

// Each returns the events to append, or why the command is refused.
Result<std::vector<events::Envelope>> DecideCreateUser(const IdentityState& state,
                                                       const CreateUser& command);
Result<std::vector<events::Envelope>> DecideUpdateUser(const IdentityState& state,
                                                       const UpdateUser& command);
Result<std::vector<events::Envelope>> DecideStartSession(const IdentityState& state,
                                                         const StartSession& command, int64_t now);
Result<std::vector<events::Envelope>> DecideEndSession(const IdentityState& state,
                                                       const EndSession& command);
// NotFound for an unknown user or token; FailedPrecondition for a deactivated user, an expiry not
// after `now`, or a change to a token revoked or expired by `now` (Determined's "inactive").
Result<std::vector<events::Envelope>> DecideCreateAccessToken(const IdentityState& state,
                                                              const CreateAccessToken& command,
                                                              int64_t now);
Result<std::vector<events::Envelope>> DecideUpdateAccessToken(const IdentityState& state,
                                                              const UpdateAccessToken& command,
                                                              int64_t now);
std::vector<events::Envelope> DecideRecordLoginFailure(const RecordLoginFailure& command);
std::vector<events::Envelope> DecideRecordAccessDenied(const RecordAccessDenied& command);

// A username Determined's CLI and Cairn's keys can carry: 1-128 characters, no whitespace, no
// control characters, no '/'.
Status CheckUsername(const std::string& username);

}  // namespace cairn::commands
