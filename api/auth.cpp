#include "api/auth.h"

#include <map>
#include <mutex>

#include "base/password.h"

namespace cairn::api {

User UserFrom(const commands::UserRecord& record) {
  return User{record.id, record.username, record.admin, record.active, record.display_name};
}

namespace {

std::mutex mutex;
// Few hashes ever get here (the fallback user's, the built-in users' at start): bounded anyway.
constexpr size_t kMaxAnswers = 1024;
std::map<std::string, bool>* const answers = new std::map<std::string, bool>();

}  // namespace

void RememberBlankPassword(const std::string& password_hash, bool blank) {
  std::lock_guard lock(mutex);
  if (answers->size() >= kMaxAnswers) answers->clear();
  (*answers)[password_hash] = blank;
}

bool HasBlankPassword(const commands::UserRecord& user) {
  {
    std::lock_guard lock(mutex);
    auto it = answers->find(user.password_hash);
    if (it != answers->end()) return it->second;
  }
  bool blank = VerifyPassword(user.password_hash, CliPasswordHash(""));
  RememberBlankPassword(user.password_hash, blank);
  return blank;
}

Result<std::string> BearerToken(const std::string& authorization_header) {
  if (authorization_header.empty()) return std::string();
  const std::string bearer = "Bearer ";
  if (authorization_header.rfind(bearer, 0) != 0 || authorization_header.size() == bearer.size()) {
    return Status::Unauthenticated("Authorization must be 'Bearer <token>'");
  }
  return authorization_header.substr(bearer.size());
}

}  // namespace cairn::api
