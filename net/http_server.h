// A small HTTP/1.1 server on Boost.Beast: one thread per connection, keep-alive, body size cap,
// chunked streaming responses, tunnels to upstream TCP services (Response::tunnel), and HTTPS
// (TLS 1.2 or later, OpenSSL) when given a certificate. Handlers are plain functions of
// Request -> Response; they see the same requests either way.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/document_limits.h"
#include "base/status.h"
#include "net/http_types.h"

namespace cairn::net {

class Server {
 public:
  struct Options {
    std::string address = "127.0.0.1";
    uint16_t port = 0;                   // 0 picks a free port
    size_t max_body_bytes = 128u << 20;  // larger bodies get 413
    // Asked about each request with a body once its head is read, before a byte of the body is
    // stored (net/http_types.h): who may not call the route is answered without it.
    HeadAdmission admit_head;
    // The body bytes held across all connections at once; a body that would pass it gets 503.
    size_t max_buffered_body_bytes = 512u << 20;
    // Beyond either cap a new connection ends the longest-idle one in its way (of its address,
    // or of anyone; idle: waiting for a request, its first included), or gets 503 when every
    // one is busy. max_connections is also capped below
    // the process's open-file limit.
    size_t max_connections = 4096;
    size_t max_connections_per_address = 256;
    // Each connection's thread: handlers run on it; no request body or JSON nests deep enough to
    // need more (DocumentLimits).
    size_t connection_stack_bytes = size_t{1} << 20;
    // A kept-alive connection with no new request for this long is closed.
    std::chrono::milliseconds idle_timeout = std::chrono::minutes(5);
    // A request whose next bytes do not arrive within this long is dropped (a client that
    // starts a request and stalls must not hold a thread for ever).
    std::chrono::milliseconds read_timeout = std::chrono::seconds(30);
    // A request (and a TLS handshake) must arrive whole within this, from its first byte, however
    // slowly its bytes come (408). The largest body takes about a second on a 1 Gbit/s link.
    std::chrono::milliseconds request_timeout = std::chrono::minutes(2);
    size_t max_header_bytes = 64 * 1024;  // larger request heads get 431
    // When set, every body is JSON: one nested too deep, with too many values or too long a
    // string gets a 400 naming the limit as soon as the bytes that break it are read, and the
    // connection is closed (the rest of the body is read and dropped, never stored).
    std::optional<DocumentLimits> json_body_limits;
    // ...except for requests whose target starts with this ("" = none): see
    // RequestLimits::body_shape_exempt_prefix.
    std::string json_body_exempt_prefix;
    // Both set: every connection must begin with a TLS handshake (a client that fails it, or
    // speaks plain HTTP, is disconnected); the read timeout bounds the handshake too. PEM files:
    // the server's certificate followed by any intermediates, and its private key.
    std::string tls_cert_file;
    std::string tls_key_file;
  };

  Server(Options options, Handler handler);
  ~Server();  // stops

  // Binds and starts accepting. After OK, port() is the bound port. With TLS, an unreadable
  // certificate or key, or a key that does not match the certificate, is InvalidArgument naming
  // the file, before anything is bound.
  Status Start();
  uint16_t port() const;
  // Stops accepting and closes every connection (streams see their writer return false, tunnels
  // end: their upstream connections are shut down too).
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::net
