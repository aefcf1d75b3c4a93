#include "base/password.h"

#include <openssl/sha.h>
#include <sodium.h>

#include <cctype>
#include <cstdlib>

#include "base/encoding.h"
#include "base/files.h"

namespace cairn {
namespace {

// Determined's CLI salts with this before hashing (determined.common.api.salt_and_hash).
constexpr std::string_view kCliSalt = "GubPEmmotfiK9TMD6Zdw";
// OWASP's argon2id minimum: 19 MiB, 2 passes. Enough to make guessing slow, cheap enough that a
// login costs a few tens of milliseconds of one core.
constexpr unsigned long long kPasses = 2;
constexpr size_t kMemoryBytes = size_t{19} << 20;

void InitSodium() {
  // Idempotent and thread-safe; it fails only without a source of randomness.
  if (sodium_init() < 0) std::abort();
}

}  // namespace

std::string CliPasswordHash(std::string_view password) {
  std::string salted = std::string(kCliSalt) + std::string(password);
  unsigned char digest[SHA512_DIGEST_LENGTH];
  SHA512(reinterpret_cast<const unsigned char*>(salted.data()), salted.size(), digest);
  return HexLower(digest, sizeof digest);
}

Result<std::string> HashPassword(std::string_view cli_hash) {
  InitSodium();
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, cli_hash.data(), cli_hash.size(), kPasses, kMemoryBytes,
                            crypto_pwhash_ALG_ARGON2ID13) != 0) {
    return Status::ResourceExhausted("not enough memory to hash a password");
  }
  return std::string(out);
}

bool VerifyPassword(std::string_view stored, std::string_view cli_hash) {
  InitSodium();
  std::string terminated(stored);
  return crypto_pwhash_str_verify(terminated.c_str(), cli_hash.data(), cli_hash.size()) == 0;
}

std::string NewSessionToken() {
  InitSodium();
  unsigned char bytes[32];
  randombytes_buf(bytes, sizeof bytes);
  return "cairn-" + HexLower(bytes, sizeof bytes);
}

namespace {

// Hex HMAC-SHA-256 of `message` under `key`.
std::string HmacHex(std::string_view key, std::string_view message) {
  InitSodium();
  unsigned char key_digest[crypto_auth_hmacsha256_KEYBYTES];
  // HMAC-SHA-256 takes a key of any length; libsodium's one-shot form wants 32 bytes, so the
  // key is hashed to that first.
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), key_digest);
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(message.data()),
                         message.size(), key_digest);
  return HexLower(mac, sizeof mac);
}

// "<prefix><name>.<hex HMAC of purpose + name>": a credential that names what it is for.
std::string NamedCredential(std::string_view agent_token, std::string_view prefix,
                            std::string_view purpose, std::string_view name) {
  return std::string(prefix) + std::string(name) + "." +
         HmacHex(agent_token, std::string(purpose) + std::string(name));
}

std::optional<std::string> NameOfCredential(std::string_view agent_token, std::string_view prefix,
                                            std::string_view purpose, std::string_view token) {
  if (agent_token.empty() || token.substr(0, prefix.size()) != prefix) return std::nullopt;
  const size_t dot = token.rfind('.');
  if (dot == std::string_view::npos || dot <= prefix.size()) return std::nullopt;
  std::string name(token.substr(prefix.size(), dot - prefix.size()));
  if (!SecretsEqual(token, NamedCredential(agent_token, prefix, purpose, name))) {
    return std::nullopt;
  }
  return name;
}

// "agent:" and "task:" keep an agent's credential, a task's and an allocation token of the same
// name apart.
constexpr std::string_view kAgentCredentialPrefix = "cairn-agent.";
constexpr std::string_view kTaskSessionPrefix = "cairn-task.";

}  // namespace

std::string AllocationToken(std::string_view agent_token, std::string_view allocation_id) {
  return "cairn-alloc-" + HmacHex(agent_token, allocation_id);
}

std::string AgentCredential(std::string_view agent_token, std::string_view agent_id) {
  return NamedCredential(agent_token, kAgentCredentialPrefix, "agent:", agent_id);
}

std::optional<std::string> AgentOfCredential(std::string_view agent_token, std::string_view token) {
  return NameOfCredential(agent_token, kAgentCredentialPrefix, "agent:", token);
}

std::string TaskSessionToken(std::string_view agent_token, std::string_view allocation_id) {
  return NamedCredential(agent_token, kTaskSessionPrefix, "task:", allocation_id);
}

std::optional<std::string> AllocationOfTaskSession(std::string_view agent_token,
                                                   std::string_view token) {
  return NameOfCredential(agent_token, kTaskSessionPrefix, "task:", token);
}

Result<std::string> ReadTokenFile(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok())
    return Status::InvalidArgument("cannot read the token: " + text.status().message());
  std::string token = std::move(text).value();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) return Status::InvalidArgument(path + " holds no token");
  return token;
}

bool SecretsEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return a.empty() || sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string SessionTokenSha256(std::string_view token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  return HexLower(digest, sizeof digest);
}

}  // namespace cairn
