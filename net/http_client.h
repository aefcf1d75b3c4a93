// A small synchronous HTTP/1.1 client on Boost.Beast with one kept-alive connection,
// reconnecting when the server closed it; HTTPS (OpenSSL) verifies the server's certificate and
// name. Not thread-safe, except Cancel().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::net {

struct ClientResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

// The Status an HTTP answer maps to: OK for 2xx; else the message of the body's JSON error
// (`{"message": ...}`, or the body's first 200 bytes) under "HTTP <status>: ", with a code by
// status (400 InvalidArgument, 401 Unauthenticated, 403 PermissionDenied, 404 NotFound, 409
// FailedPrecondition, 413/429 ResourceExhausted, 5xx Unavailable, others FailedPrecondition).
Status StatusFromHttp(int http_status, const std::string& body);

// How a client reaches its server.
struct ClientOptions {
  // HTTPS: TLS 1.2 or later; the server's certificate must chain to a CA in `ca_file` (PEM), or
  // to one the system trusts when it is "", and name `host` (a DNS name or an IP address). SNI
  // carries the host name.
  bool tls = false;
  std::string ca_file;
  // Errors name the request's target ("POST /api/v1/... failed: ..."), unless it may be a
  // credential (a webhook's path): then only the method.
  bool target_in_errors = true;
  // A response body longer than this fails the request (0: no limit), for servers not trusted.
  uint64_t max_response_bytes = 0;
};

class Client {
 public:
  Client(std::string host, uint16_t port, ClientOptions options = {});
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  // Parses "http://host:port" or "https://host:port" (base/http_url.h; a trailing slash is fine,
  // no scheme means http). `ca_file` is the CA that https verifies the server with ("" = the
  // system's CAs).
  static Result<Client> FromUrl(const std::string& url, const std::string& ca_file = "");

  // Sends one request and reads the whole response. A transport failure is Unavailable; an
  // unreadable CA file is InvalidArgument; a server whose certificate or name fails
  // verification is Unauthenticated (retrying cannot help). Any HTTP status (also 4xx/5xx) is a
  // successful result. `timeout` bounds each of the write and
  // the read. A GET/HEAD/PUT/DELETE, or a request with an Idempotency-Key header, is retried
  // once on a fresh connection when a kept-alive one turns out to be closed.
  Result<ClientResponse> Request(const std::string& method, const std::string& target,
                                 const std::string& body = "",
                                 const std::map<std::string, std::string>& headers = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Sends a request and hands each line of the (streamed) response body to `on_line` (without
  // the newline) as it arrives, until the server ends the response, `on_line` returns false,
  // Cancel() is called, the connection fails, or (when `idle_timeout` is positive) nothing
  // arrives for that long. A non-200 status is returned as an error whose message holds the
  // body. Uses its own connection.
  Status StreamLines(const std::string& method, const std::string& target,
                     const std::function<bool(std::string_view line)>& on_line,
                     const std::map<std::string, std::string>& headers = {},
                     std::chrono::milliseconds idle_timeout = std::chrono::milliseconds(0));

  // Sends `name: value` with every later request (a request's own header of that name wins);
  // an empty value stops sending it. For credentials: "Authorization", "Bearer <token>".
  void SetDefaultHeader(const std::string& name, const std::string& value);

  // Aborts the Request/StreamLines in progress, from another thread. It does not stick: a call
  // that starts after Cancel() runs normally, so a caller racing a call's start repeats Cancel()
  // until the call returns.
  void Cancel();

  const std::string& host() const;
  uint16_t port() const;
  const ClientOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::net
