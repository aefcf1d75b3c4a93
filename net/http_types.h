// Plain HTTP request/response values shared by Cairn's server and client; no Beast types leak
// out of api/http/*.cpp, so only two translation units pay for Beast's compile time.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn::http {

struct Request {
  std::string method;                             // "GET", "POST", ...
  std::string target;                             // path and query as sent
  std::string path;                               // percent-decoded path, without the query
  std::multimap<std::string, std::string> query;  // percent-decoded; repeated keys kept
  std::map<std::string, std::string> headers;     // names lower-cased
  std::string body;
  std::string remote_address;

  // The first value of a query parameter, or "" when absent.
  std::string QueryParam(const std::string& name) const;
  std::vector<std::string> QueryParams(const std::string& name) const;
  bool HasQueryParam(const std::string& name) const { return query.count(name) > 0; }
  // A header by lower-case name, or "".
  std::string Header(const std::string& lower_name) const;
};

// Writes one chunk of a streamed response. Returns false once the client has gone away. An
// empty chunk writes nothing and only checks that the client is still there.
using ChunkWriter = std::function<bool(std::string_view chunk)>;

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the server sends the status and headers, then calls `stream` to write the body in
  // chunks (chunked transfer encoding); the connection closes when it returns.
  std::function<void(const ChunkWriter&)> stream;
};

using Handler = std::function<Response(const Request&)>;

// Splits "a=1&b=x%20y" into decoded pairs.
std::multimap<std::string, std::string> ParseQuery(std::string_view query);
// Decodes %XX escapes; in query strings '+' also means a space.
std::string PercentDecode(std::string_view text, bool plus_is_space = false);
std::string PercentEncode(std::string_view text);

}  // namespace cairn::http
