#include "net/websocket_client.h"

#include <openssl/rand.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>

#include "base/encoding.h"
#include "net/stream_pump.h"
#include "net/tls_context.h"
#include "net/websocket.h"

namespace cairn::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// RFC 7230's token characters: what a header name may hold.
bool IsHeaderToken(std::string_view name) {
  static constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kSymbols.find(c) != std::string::npos;
  });
}

// The upgrade request, or InvalidArgument when the target's path or headers could not be sent
// as they are (a line break would let a header smuggle in another).
Result<std::string> UpgradeRequest(const WebSocketTarget& target, const std::string& key) {
  if (target.path.empty() || target.path.front() != '/' ||
      HasControlCharacter(target.path, /*blanks_too=*/true)) {
    return Status::InvalidArgument(
        "a WebSocket path must begin with '/' and hold no spaces or "
        "control characters: '" +
        target.path + "'");
  }
  std::string request =
      "GET " + target.path + " HTTP/1.1\r\nHost: " + target.host + ":" +
      std::to_string(target.port) +
      "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
      "\r\nSec-WebSocket-Version: 13\r\nUser-Agent: cairn\r\n";
  for (const auto& [name, value] : target.headers) {
    if (!IsHeaderToken(name)) {
      return Status::InvalidArgument("not an HTTP header name: '" + name + "'");
    }
    // The value is not quoted back: it may be a credential.
    if (HasControlCharacter(value, /*blanks_too=*/false)) {
      return Status::InvalidArgument("the value of header '" + name +
                                     "' holds a line break or control character");
    }
    request += name + ": " + value + "\r\n";
  }
  request += "\r\n";
  return request;
}

Result<std::string> RandomKey() {
  unsigned char nonce[16];
  if (RAND_bytes(nonce, sizeof nonce) != 1) {
    return Status::Internal("no random bytes for a WebSocket key");
  }
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(nonce), sizeof nonce));
}

// The opening handshake on `stream`, then the pump until the WebSocket closes.
template <class Stream>
Status Converse(Stream& stream, ConnectionSocket& socket, const WebSocketTarget& target, int in_fd,
                int out_fd) {
  const std::string server = target.host + ":" + std::to_string(target.port);
  CAIRN_ASSIGN_OR_RETURN(const std::string key, RandomKey());
  CAIRN_ASSIGN_OR_RETURN(const std::string request, UpgradeRequest(target, key));
  beast::error_code ec;
  asio::write(stream, asio::buffer(request), ec);
  if (ec) {
    return Status::Unavailable("sending the WebSocket upgrade to " + server +
                               " failed: " + ec.message());
  }
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64 * 1024);
  bhttp::read_header(stream, buffer, parser, ec);
  if (ec) {
    return Status::Unavailable("reading the answer to the WebSocket upgrade from " + server +
                               " failed: " + ec.message());
  }
  const int status = static_cast<int>(parser.get().result_int());
  if (status != 101) {
    // The body only words the refusal: a body that breaks off still leaves the status.
    if (!parser.is_done()) bhttp::read(stream, buffer, parser, ec);
    Status refused = StatusFromHttp(status, parser.get().body());
    if (refused.ok()) {
      refused = Status::FailedPrecondition("HTTP " + std::to_string(status) + ": " + server +
                                           " did not open a WebSocket");
    }
    return refused;
  }
  const auto& head = parser.get();
  if (AsciiLower(std::string(head[bhttp::field::upgrade])).find("websocket") == std::string::npos ||
      head[bhttp::field::sec_websocket_accept] != WebSocketAccept(key)) {
    return Status::FailedPrecondition(server +
                                      " answered 101 without accepting this WebSocket key");
  }
  socket.StartPumping(ec);
  if (ec) return Status::Unavailable("cannot pump the WebSocket: " + ec.message());
  // Frames the server sent right behind its answer are in the buffer already.
  const auto unparsed = buffer.data();
  StreamPumpEnd<Stream> websocket(stream, socket);
  DescriptorPumpEnd descriptors(in_fd, out_fd);
  WebSocketPumpOptions options;
  options.as_client = true;
  options.close_timeout = target.timeout;
  return PumpWebSocket(websocket, descriptors,
                       std::string_view(static_cast<const char*>(unparsed.data()), unparsed.size()),
                       options);
}

}  // namespace

Result<WebSocketTarget> WebSocketTarget::FromUrl(const std::string& url, std::string path,
                                                 const std::string& ca_file) {
  CAIRN_ASSIGN_OR_RETURN(Client client, Client::FromUrl(url, ca_file));
  WebSocketTarget target;
  target.host = client.host();
  target.port = client.port();
  target.transport = client.options();
  target.path = std::move(path);
  return target;
}

Status PipeWebSocket(const WebSocketTarget& target, int in_fd, int out_fd) {
  asio::io_context io;
  CAIRN_ASSIGN_OR_RETURN(tcp::socket socket,
                         ConnectTcp(io, target.host, target.port, target.timeout));
  ConnectionSocket transport(socket, target.timeout, target.timeout);
  if (!target.transport.tls) return Converse(transport, transport, target, in_fd, out_fd);
  CAIRN_ASSIGN_OR_RETURN(auto context, ClientTlsContext(target.transport.ca_file));
  asio::ssl::stream<ConnectionSocket> stream(transport, *context);
  ExpectServerName(stream.native_handle(), target.host);
  beast::error_code ec;
  stream.handshake(asio::ssl::stream_base::client, ec);
  if (ec) {
    return ClientHandshakeFailure(stream.native_handle(),
                                  target.host + ":" + std::to_string(target.port),
                                  target.transport.ca_file, ec);
  }
  return Converse(stream, stream.next_layer(), target, in_fd, out_fd);
}

}  // namespace cairn::net
