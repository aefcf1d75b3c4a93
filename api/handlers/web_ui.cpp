#include "api/handlers/web_ui.h"

#include <filesystem>

#include "api/static_files.h"
#include "base/files.h"

namespace cairn::api {

namespace {

// The page runs only its own scripts and talks only to its own origin.
constexpr const char* kPagePolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

// Sends `path` (already resolved) as `content_type`; a request that holds the current version
// (If-None-Match) gets 304 without the body.
net::Response SendFile(const Call& call, const std::string& path, const std::string& content_type,
                       const char* cache_control) {
  const std::string tag = StaticFileTag(path);
  net::Response response;
  response.content_type = content_type;
  response.headers = {{"Cache-Control", cache_control}, {"X-Content-Type-Options", "nosniff"}};
  if (!tag.empty()) response.headers.emplace_back("ETag", tag);
  if (!tag.empty() && call.request().Header("if-none-match") == tag) {
    response.status = 304;
    return response;
  }
  auto bytes = ReadWholeFile(path);
  if (!bytes.ok()) return Error(Status::NotFound("no such file in the web UI"));
  response.body = std::move(*bytes);
  return response;
}

// The UI changes with the master: every load asks whether a file changed (a 304 when not).
constexpr const char* kRevalidate = "no-cache";

}  // namespace

net::Response WebUiPage(Call& call) {
  const std::string& root = call.services().facts.web_root;
  auto page = ResolveStaticFile(root, "index.html");
  if (!page.ok()) {
    return Error(Status::NotFound("the web UI is not installed: no index.html in " + root +
                                  " (set web.root in master.yaml)"));
  }
  net::Response response = SendFile(call, *page, "text/html; charset=utf-8", kRevalidate);
  response.headers.emplace_back("Content-Security-Policy", kPagePolicy);
  response.headers.emplace_back("X-Frame-Options", "DENY");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
  return response;
}

net::Response WebUiFile(Call& call) {
  const std::string& relative = call.Param("rest");
  auto file = ResolveStaticFile(call.services().facts.web_root, relative);
  if (!file.ok()) return Error(file.status());
  return SendFile(call, *file, StaticContentType(relative).value_or(""), kRevalidate);
}

net::Response WebUiChart(Call& call) {
  const std::string& path = call.services().facts.chart_js_file;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return Error(Status::NotFound("Chart.js is not installed: no " + path +
                                  " (apt-get install libjs-chart.js, or set web.chart_js)"));
  }
  // Debian's file changes only with the package: a day's caching spares every page load.
  return SendFile(call, path, "text/javascript; charset=utf-8", "public, max-age=86400");
}

}  // namespace cairn::api
