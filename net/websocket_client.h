// A WebSocket client that joins two descriptors to a WebSocket: what `cairn shell ssh` runs as
// ssh's ProxyCommand, so that ssh's bytes reach a task's sshd through the master's
// `/proxy/{taskId}/` tunnel (as Determined's `python3 -m determined.cli.tunnel` does).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"
#include "net/http_client.h"

namespace cairn::net {

struct WebSocketTarget {
  std::string host;
  uint16_t port = 0;
  ClientOptions transport;  // https: TLS, verified as Client verifies it
  std::string path = "/";   // the request target, query included
  // Sent with the upgrade request, e.g. {"Authorization", "Bearer <token>"}, {"Cookie", ...}.
  // Names must be HTTP tokens and values must not hold line breaks.
  std::map<std::string, std::string> headers;
  // Bounds connecting, the TLS handshake, reading the answer to the upgrade, and the wait for
  // the server's close frame once ours is sent. A WebSocket that stays open may be quiet for
  // any length of time.
  std::chrono::milliseconds timeout = std::chrono::seconds(30);

  // The target for `path` on the server of `url` ("http://host:port" or "https://host:port",
  // as Client::FromUrl reads it; `ca_file` is what https verifies the server with).
  static Result<WebSocketTarget> FromUrl(const std::string& url, std::string path,
                                         const std::string& ca_file = "");
};

// Opens a WebSocket to `target` and copies, until either side ends: every read from `in_fd` out
// as a binary message (masked), and every message's payload received into `out_fd`. When
// `in_fd` reaches its end, sends a close frame and waits for the server's (or the connection's
// end). A ping gets its pong. The descriptors are neither closed nor made non-blocking (they may
// be shared with another process, as stdin and stdout are); a write to a pipe (not a socket)
// whose reader has gone raises SIGPIPE, as for any writer.
//
// OK when the WebSocket closed normally. An answer other than 101 is the Status of its HTTP
// status and its body's message (401 Unauthenticated, 404 NotFound, 502 Unavailable, ...); a 101
// without the right Sec-WebSocket-Accept is FailedPrecondition; a connection that fails is
// Unavailable, a server's certificate that fails verification Unauthenticated; a close with
// another code than 1000 or 1001, or the connection ending without a close, is Unavailable.
Status PipeWebSocket(const WebSocketTarget& target, int in_fd, int out_fd);

}  // namespace cairn::net
