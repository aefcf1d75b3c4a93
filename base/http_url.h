// An http:// or https:// URL taken apart for an HTTP client: the master's URL an agent or a tool
// is given, a webhook's endpoint. Pure.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace cairn {

struct HttpUrl {
  bool tls = false;
  std::string host;   // an IPv6 literal without its brackets
  uint16_t port = 0;  // the scheme's (80, 443) when the URL names none
  bool port_given = false;
  std::string target = "/";  // path and query; a fragment is dropped
};

// InvalidArgument, without repeating the URL (its path may be a credential), for anything but an
// http(s) URL of at most 2048 bytes with a host, an optional port 1-65535, no spaces or control
// characters, and no user:password@ (a credential belongs in the path or query).
Result<HttpUrl> ParseHttpUrl(const std::string& url);

// The Host header a request to `url` carries, as the URL spells it: "host", "host:port",
// "[v6]:port". Signed requests (S3, Azure) sign exactly this.
std::string HostHeaderOf(const HttpUrl& url);

}  // namespace cairn
