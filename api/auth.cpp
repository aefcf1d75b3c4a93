#include "api/auth.h"

#include <algorithm>

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

void ForEachCookie(
    std::string_view cookie_header,
    const std::function<void(std::string_view name, std::string_view cookie)>& visit) {
  while (!cookie_header.empty()) {
    const size_t end = std::min(cookie_header.find(';'), cookie_header.size());
    std::string_view cookie = cookie_header.substr(0, end);
    cookie_header.remove_prefix(std::min(end + 1, cookie_header.size()));
    while (!cookie.empty() && cookie.front() == ' ') cookie.remove_prefix(1);
    if (!cookie.empty()) visit(cookie.substr(0, cookie.find('=')), cookie);
  }
}

std::string CookieValue(const std::string& cookie_header, const std::string& name) {
  std::string value;
  ForEachCookie(cookie_header, [&](std::string_view cookie_name, std::string_view cookie) {
    if (value.empty() && cookie_name == name && cookie.size() > name.size()) {
      value = std::string(cookie.substr(name.size() + 1));
    }
  });
  return value;
}

}  // namespace cairn::api
