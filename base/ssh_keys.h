// An Ed25519 SSH key pair made from a 32-byte seed, in the formats OpenSSH reads: the private key
// as an unencrypted "openssh-key-v1" file (OpenSSH's PROTOCOL.key), the public key as an
// authorized_keys line. With the seed derived per task (base/task_secrets.h), the master and the
// agent produce the same pair for a task without storing or sending it. Deterministic: the same
// seed and comment always give the same bytes. Pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

struct SshKeyPair {
  // "-----BEGIN OPENSSH PRIVATE KEY-----\n" ... "-----END OPENSSH PRIVATE KEY-----\n": cipher
  // and KDF "none", as `ssh -i` and `ssh-keygen -y` read it (from a file of mode 0600).
  std::string private_key;
  // "ssh-ed25519 AAAA... comment" on one line without a newline: an authorized_keys line.
  std::string public_key;
};

// The pair whose private key is `seed32` (RFC 8032's 32-byte secret). `comment` goes into both
// forms; it must be one line. InvalidArgument for a seed of another size or a comment with a
// line break.
Result<SshKeyPair> SshKeyPairFromSeed(std::string_view seed32, std::string_view comment);

// A shell task's key pair for `purpose` (kShellHostKeyPurpose or kShellUserKeyPurpose of
// base/task_secrets.h), derived from the agent token as the master and the agent both derive it;
// commented "cairn-host-<task id>" or "cairn-shell-<task id>".
Result<SshKeyPair> TaskSshKeyPair(std::string_view agent_token, std::string_view purpose,
                                  std::string_view task_id);

}  // namespace cairn
