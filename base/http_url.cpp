#include "base/http_url.h"

#include <string_view>

#include "base/encoding.h"

namespace cairn {

Result<HttpUrl> ParseHttpUrl(const std::string& url) {
  constexpr size_t kMaxUrlBytes = 2048;
  const auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument("url must be an http:// or https:// URL with a host: " + why);
  };
  if (url.size() > kMaxUrlBytes) return invalid("longer than 2048 bytes");
  if (HasControlCharacter(url, /*blanks_too=*/true)) {
    return invalid("it contains a space or a control character");
  }
  HttpUrl out;
  std::string_view rest = url;
  if (rest.rfind("https://", 0) == 0) {
    out.tls = true;
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else {
    const size_t scheme = url.find("://");
    return invalid(scheme == std::string::npos ? "it has no scheme"
                                               : "its scheme is '" + url.substr(0, scheme) + "'");
  }
  const size_t path_start = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_start);
  if (path_start != std::string_view::npos) {
    std::string_view target = rest.substr(path_start);
    target = target.substr(0, target.find('#'));  // a fragment is never sent
    out.target =
        target.empty() || target[0] != '/' ? "/" + std::string(target) : std::string(target);
  }
  if (authority.find('@') != std::string_view::npos) {
    return invalid("user:password@ is not taken; put the credential in the path or query");
  }
  std::string_view port_text;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return invalid("an IPv6 address without ']'");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return invalid("text after the IPv6 address");
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (out.host.empty()) return invalid("no host");
  out.port = out.tls ? 443 : 80;
  if (!port_text.empty()) {
    if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(std::string(port_text)) < 1 || std::stoi(std::string(port_text)) > 65535) {
      return invalid("the port must be a number from 1 to 65535");
    }
    out.port = static_cast<uint16_t>(std::stoi(std::string(port_text)));
    out.port_given = true;
  }
  return out;
}

std::string HostHeaderOf(const HttpUrl& url) {
  const bool ipv6 = url.host.find(':') != std::string::npos;
  std::string header = ipv6 ? "[" + url.host + "]" : url.host;
  if (url.port_given) header += ":" + std::to_string(url.port);
  return header;
}

}  // namespace cairn
