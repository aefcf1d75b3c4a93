// Plain HTTP request/response values shared by Cairn's server and client; no Beast types leak
// out of net/'s .cpp files, so only the few translation units there pay for Beast's compile time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn::net {

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

// A response that hands the client's connection over to an upstream TCP service: the master's
// way to reach notebooks, shells and TensorBoards on agents. Bytes are passed on as they come,
// never gathered into whole messages; a quiet tunnel is not timed out (TCP keep-alive finds dead
// peers); Server::Stop() ends every tunnel.
struct Tunnel {
  enum class Mode {
    // The request is passed on: `first_bytes` (the request's head as the caller rewrote it, and
    // its body) are written to the upstream, then bytes flow both ways unchanged until either
    // side ends (an HTTP answer, or a WebSocket upgrade and everything after it). Later requests
    // on the same connection go to the same upstream unread, so a caller that must see each
    // request asks for `Connection: close` in the head it writes. When one side ends its
    // sending, the other's sending is ended once what it sent is through; the tunnel ends when
    // both are done. Under TLS the upstream's end closes the client's connection once what the
    // upstream sent is through (TLS before 1.3 has no half-close): what the client sends after
    // that is not passed on.
    kRaw,
    // The client's request is a WebSocket upgrade that the server itself accepts (101 with
    // Sec-WebSocket-Accept); every binary (or text) message's payload is written to the upstream
    // TCP connection, every read from the upstream is sent as a binary message; ping -> pong;
    // a close frame, or the upstream's end, closes both (close frame sent). Frames may carry up
    // to 16 MiB each; a larger one closes the WebSocket with 1009.
    kWebSocketToTcp,
  };
  Mode mode = Mode::kRaw;
  std::string host;  // upstream address (IP or name)
  uint16_t port = 0;
  std::string first_bytes;  // kRaw only
  // Called (from the tunnel's thread) with the byte count each time bytes move either way:
  // the caller measures idleness from it. May be empty. kRaw counts every read from either side
  // (the client's bytes the server had read past the request included, `first_bytes` not);
  // kWebSocketToTcp counts message payloads and upstream reads, not frame headers or pings.
  std::function<void(size_t bytes)> on_traffic;
  // What the 502 says when the upstream cannot be reached; "" = the connect's error, which names
  // the upstream's address (for a caller who may know it).
  std::string unreachable_message;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the server sends the status and headers, then calls `stream` to write the body in
  // chunks (chunked transfer encoding); the connection closes when it returns.
  std::function<void(const ChunkWriter&)> stream;
  // When set, the server connects to the upstream and hands the connection over (status,
  // headers and body above are ignored). If the upstream cannot be reached the client gets a
  // 502 JSON error {"code":14,"message":"...","details":[]} naming host:port; a kWebSocketToTcp
  // tunnel whose request is not a valid WebSocket upgrade gets a 400. The connection closes
  // when the tunnel ends.
  std::shared_ptr<Tunnel> tunnel;
  // When set, the body instead of `body`: one answer's bytes sent to many requests without a
  // copy each (api/bulk_reads.h shares a big list's render so).
  std::shared_ptr<const std::string> shared_body;
  // With shared_body, the same bytes gzipped once, for a request whose Accept-Encoding takes
  // gzip (sent with Content-Encoding: gzip).
  std::shared_ptr<const std::string> shared_gzip_body;
};

using Handler = std::function<Response(const Request&)>;

// What happens to a request whose head has arrived and whose body has not been read: the server
// asks before it stores a byte of the body, so that a caller who may not call the route costs
// nothing but its head.
struct BodyAdmission {
  std::optional<Response> refusal;  // set: this is the answer; the body is never read
  size_t max_body_bytes = 0;        // else: the most this request's body may hold (413 beyond)
};
// Called with the head (every field of Request but `body`) of each request that has a body.
using HeadAdmission = std::function<BodyAdmission(const Request& head)>;

// Splits "a=1&b=x%20y" into decoded pairs.
std::multimap<std::string, std::string> ParseQuery(std::string_view query);
// Decodes %XX escapes; in query strings '+' also means a space.
std::string PercentDecode(std::string_view text, bool plus_is_space = false);
std::string PercentEncode(std::string_view text);

}  // namespace cairn::net
