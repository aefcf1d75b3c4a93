// Credentials at rest: what a user hands the master as a credential (checkpoint storage keys, a
// registry password, a variable marked secret) is kept in the event log sealed, so that the
// log's files, Kafka's topics and every copy of them hold no credential in the clear. The key
// comes from the cluster secret (the agent token), which the master and every agent already
// hold: the log stays readable without it (startup, replay, projections never need it), and only
// the places that use a credential unseal it (the master's object-store client, a trial's
// description, an agent starting a task). Pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

// What every sealed value begins with; the rest is padded standard base64 of libsodium's
// secretbox (XSalsa20-Poly1305): a 24-byte nonce, then the ciphertext and its tag.
inline constexpr std::string_view kSealedPrefix = "cairn-sealed:v1:";

// Whether `text` is a sealed value (begins with kSealedPrefix).
bool IsSealed(std::string_view text);

class SecretSealer {
 public:
  // No key: Seal gives values back unchanged and UnsealText refuses sealed ones. For tests and
  // tools that never see a credential.
  SecretSealer() = default;
  // The key derived from the cluster secret (the agent token); an empty secret gives no key.
  explicit SecretSealer(std::string_view cluster_secret);

  bool has_key() const { return !key_.empty(); }

  // `plaintext` sealed; deterministic (the nonce is a keyed hash of the plaintext), so the same
  // credential always seals to the same text and a resubmitted config compares equal to the one
  // recorded. A value already sealed, or any value without a key, is given back unchanged.
  std::string Seal(std::string_view plaintext) const;

  // `text` with every sealed value in it replaced by its plaintext ("NAME=<sealed>" gives
  // "NAME=value"); text without one is given back unchanged. FailedPrecondition, naming no
  // value, when a sealed value does not open under this key (sealed under another agent token,
  // or altered).
  Result<std::string> UnsealText(std::string_view text) const;

 private:
  std::string key_;        // secretbox key, 32 bytes
  std::string nonce_key_;  // HMAC key deriving each value's nonce
};

}  // namespace cairn
