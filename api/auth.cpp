#include "api/auth.h"

namespace cairn::api {

User UserFrom(const commands::UserRecord& record) {
  return User{record.id, record.username, record.admin, record.active, record.display_name};
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
