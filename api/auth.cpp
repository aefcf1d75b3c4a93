#include "api/auth.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace cairn {

namespace {

std::string Hex(const unsigned char* bytes, size_t length) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
  }
  return out;
}

// The CLI hashes passwords as sha512_hex(salt + password) before sending them.
std::string CliHash(const std::string& password) {
  std::string salted = "GubPEmmotfiK9TMD6Zdw" + password;
  unsigned char digest[SHA512_DIGEST_LENGTH];
  SHA512(reinterpret_cast<const unsigned char*>(salted.data()), salted.size(), digest);
  return Hex(digest, sizeof digest);
}

const User kUsers[] = {{1, "admin", true}, {2, "determined", false}};

}  // namespace

Result<Authenticator> Authenticator::Open(const std::string& key_file) {
  Authenticator auth;
  std::ifstream in(key_file, std::ios::binary);
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    auth.key_ = text.str();
  }
  if (auth.key_.size() < 32) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) return Status::Internal("no randomness for the key");
    auth.key_ = Hex(bytes, sizeof bytes);
    std::string tmp = key_file + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << auth.key_;
      if (!out) return Status::IOError("cannot write " + tmp);
    }
    chmod(tmp.c_str(), 0600);
    if (rename(tmp.c_str(), key_file.c_str()) != 0)
      return Status::IOError("cannot write " + key_file);
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
  return "cairn1." + username + "." + Hex(mac, length);
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
