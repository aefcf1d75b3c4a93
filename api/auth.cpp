#include "api/auth.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "base/encoding.h"
#include "base/files.h"

namespace cairn {

namespace {

// The CLI hashes passwords as sha512_hex(salt + password) before sending them.
std::string CliHash(const std::string& password) {
  std::string salted = "GubPEmmotfiK9TMD6Zdw" + password;
  unsigned char digest[SHA512_DIGEST_LENGTH];
  SHA512(reinterpret_cast<const unsigned char*>(salted.data()), salted.size(), digest);
  return HexLower(digest, sizeof digest);
}

const User kUsers[] = {{1, "admin", true}, {2, "determined", false}};

}  // namespace

Result<Authenticator> Authenticator::Open(const std::string& key_file) {
  Authenticator auth;
  auto stored = ReadWholeFile(key_file);
  if (stored.ok()) {
    auth.key_ = std::move(*stored);
  } else if (stored.status().code() != StatusCode::kNotFound) {
    return stored.status();
  }
  if (auth.key_.size() < 32) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) return Status::Internal("no randomness for the key");
    auth.key_ = HexLower(bytes, sizeof bytes);
    CAIRN_RETURN_IF_ERROR(WriteFileAtomically(key_file, auth.key_, 0600));
  }
  return auth;
}

Result<User> Authenticator::FindUser(const std::string& username) {
  for (const auto& user : kUsers) {
    if (user.username == username) return user;
  }
  return Status::NotFound("user " + username + " not found");
}

std::string Authenticator::TokenFor(const std::string& username) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(username.data()), username.size(), mac, &length);
  return "cairn1." + username + "." + HexLower(mac, length);
}

Result<std::string> Authenticator::Login(const std::string& username, const std::string& password,
                                         bool is_hashed) const {
  auto user = FindUser(username);
  bool blank = password.empty() || (is_hashed && password == CliHash(""));
  if (!user.ok() || !blank) return Status::PermissionDenied("invalid credentials");
  return TokenFor(username);
}

Result<User> Authenticator::Verify(const std::string& token) const {
  const std::string prefix = "cairn1.";
  if (token.rfind(prefix, 0) != 0) return Status::Unauthenticated("invalid token");
  size_t dot = token.find('.', prefix.size());
  if (dot == std::string::npos) return Status::Unauthenticated("invalid token");
  std::string username = token.substr(prefix.size(), dot - prefix.size());
  std::string expected = TokenFor(username);
  if (expected.size() != token.size() ||
      CRYPTO_memcmp(expected.data(), token.data(), token.size()) != 0) {
    return Status::Unauthenticated("invalid token");
  }
  auto user = FindUser(username);
  if (!user.ok()) return Status::Unauthenticated("invalid token");
  return *user;
}

}  // namespace cairn
