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

std::string CookieValue(const std::string& cookie_header, const std::string& name) {
  size_t start = 0;
  while (start < cookie_header.size()) {
    size_t end = cookie_header.find(';', start);
    if (end == std::string::npos) end = cookie_header.size();
    std::string_view part(cookie_header.data() + start, end - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (part.size() > name.size() && part.substr(0, name.size()) == name &&
        part[name.size()] == '=') {
      return std::string(part.substr(name.size() + 1));
    }
    start = end + 1;
  }
  return "";
}

}  // namespace cairn::api
