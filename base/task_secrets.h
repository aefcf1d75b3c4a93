// Per-task secrets (a notebook's token, a shell's SSH key seed) derived from the cluster's secret
// instead of generated and stored: the master and every agent hold the agent token, so each
// derives the same secret for a task on its own, and nothing secret ever has to travel in an
// event, a placement or a log line. Pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace cairn {

// HMAC-SHA-256 (RFC 2104) of `data` under `key`, any lengths: 32 raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

// The secret of `task_id` for `purpose` (e.g. "ssh", "jupyter"): HMAC-SHA-256 under
// `cluster_secret` of `purpose`, a NUL byte and `task_id`; 32 raw bytes. The NUL keeps
// ("ab", "c") apart from ("a", "bc"), and the purpose keeps one task's secrets independent: a
// notebook's token says nothing about its SSH key.
std::string DeriveTaskSecret(std::string_view cluster_secret, std::string_view purpose,
                             std::string_view task_id);

// The same secret as 32 lowercase hex digits (its first 16 bytes), for tokens that go into URLs
// and headers (Jupyter's token).
std::string DeriveTaskToken(std::string_view cluster_secret, std::string_view purpose,
                            std::string_view task_id);

// The purposes of the secrets interactive tasks use (one per secret, so that none tells
// anything about another): Jupyter's token, the shell's sshd host key and its owner's key pair.
inline constexpr std::string_view kJupyterTokenPurpose = "jupyter-token";
inline constexpr std::string_view kShellHostKeyPurpose = "shell-host-key";
inline constexpr std::string_view kShellUserKeyPurpose = "shell-user-key";
// An idempotent request's fingerprint in the log (its body may hold a credential).
inline constexpr std::string_view kRequestFingerprintPurpose = "request-fingerprint";

}  // namespace cairn
