// Users and bearer tokens, compatible with Determined's CLI login flow. Tokens are stateless:
// "cairn1.<user>.<hmac>" signed with a key kept in the data directory, so they survive master
// restarts. Cairn ships Determined's two built-in users (admin, determined) with blank
// passwords. A request without a token acts as "determined". Thread-safe after Open.
#pragma once

#include <string>

#include "base/status.h"

namespace cairn {

struct User {
  int id;
  std::string username;
  bool admin;
};

class Authenticator {
 public:
  // Reads the signing key from `key_file`, creating a random one when missing.
  static Result<Authenticator> Open(const std::string& key_file);

  // Checks a login as the CLI sends it (blank password: "" or its salted SHA-512 when hashed).
  Result<std::string> Login(const std::string& username, const std::string& password,
                            bool is_hashed) const;
  // The user a bearer token stands for; Unauthenticated when it is not one of ours.
  Result<User> Verify(const std::string& token) const;
  static Result<User> FindUser(const std::string& username);

 private:
  std::string TokenFor(const std::string& username) const;
  std::string key_;
};

}  // namespace cairn
