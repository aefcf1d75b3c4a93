// Passwords and session tokens. A password arrives as Determined's CLI sends it, or in clear, and
// is brought to one form: the CLI's hash (hex SHA-512 of a fixed salt and the password). What is
// stored is only a slow, salted argon2id hash of that form (libsodium, ~19 MiB and 2 passes), so
// a copy of the log does not give passwords away cheaply. A session token is 32 random bytes;
// only its SHA-256 is ever stored. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

// What the CLI sends for `password` with isHashed: hex SHA-512 of its salt and the password.
std::string CliPasswordHash(std::string_view password);

// argon2id of `cli_hash` with a fresh salt, in libsodium's self-describing string form.
Result<std::string> HashPassword(std::string_view cli_hash);
// Whether `cli_hash` matches `stored` (a HashPassword result). Takes tens of milliseconds.
bool VerifyPassword(std::string_view stored, std::string_view cli_hash);

// A new bearer token: "cairn-" and 64 hex digits of randomness.
std::string NewSessionToken();
// The form a token is stored and looked up in.
std::string SessionTokenSha256(std::string_view token);

// The token a task's own process presents for its allocation's harness endpoints:
// "cairn-alloc-" and the hex HMAC-SHA-256 of `allocation_id` under the agent token. The agent
// that launches the task and the master both derive it, so it is never sent or stored, and a task
// cannot derive another allocation's token from its own.
std::string AllocationToken(std::string_view agent_token, std::string_view allocation_id);

// One agent's own credential: "cairn-agent.<agent id>.<hex HMAC-SHA-256 of the id under the
// agent token>". Agents present it instead of the shared agent token, so the master knows which
// agent is calling and takes reports, logs and registrations only for what that agent holds.
std::string AgentCredential(std::string_view agent_token, std::string_view agent_id);
// The agent id `token` is a valid credential of (under `agent_token`); nullopt for anything else.
std::optional<std::string> AgentOfCredential(std::string_view agent_token, std::string_view token);

// The session token of a process running Determined's package (its DET_SESSION_TOKEN):
// "cairn-task.<allocation id>.<hex HMAC-SHA-256 of "task:" + the id under the agent token>". It
// names its allocation, so Determined's trial routes, keyed by trial, know whose run calls.
std::string TaskSessionToken(std::string_view agent_token, std::string_view allocation_id);
// The allocation `token` is a valid task session token of; nullopt for anything else.
std::optional<std::string> AllocationOfTaskSession(std::string_view agent_token,
                                                   std::string_view token);

// A token kept in a file (the agent token): its content without trailing whitespace.
// InvalidArgument when the file cannot be read or holds no token; the message never holds it.
Result<std::string> ReadTokenFile(const std::string& path);

// Whether two secrets are equal, in time that does not depend on where they differ.
bool SecretsEqual(std::string_view a, std::string_view b);

}  // namespace cairn
