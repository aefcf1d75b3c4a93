// WebSocket framing (RFC 6455) on plain bytes, apart from any socket: the opening handshake's
// accept key, a frame encoder and an incremental decoder. The master's tunnel and the WebSocket
// client frame with it; tests and fuzzers drive it with bytes. Pure functions and values; a
// decoder belongs to one connection and is not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/http_types.h"

namespace cairn::net {

enum class WebSocketOpcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// Close codes (RFC 6455 §7.4.1) the tunnel and the client send.
inline constexpr uint16_t kWebSocketCloseNormal = 1000;
inline constexpr uint16_t kWebSocketCloseProtocolError = 1002;
inline constexpr uint16_t kWebSocketCloseTooBig = 1009;

// Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64 of the SHA-1 of the key and the
// protocol's GUID.
std::string WebSocketAccept(std::string_view key);

// Whether `request` asks to open a WebSocket (a GET with Upgrade: websocket, Connection: upgrade,
// version 13 and a key of 16 bytes in base64). Returns the Sec-WebSocket-Accept to answer with,
// or InvalidArgument saying what is missing.
Result<std::string> AcceptWebSocketUpgrade(const Request& request);

// The masking key of a frame a client sends (fresh from a strong random source for each frame).
using WebSocketMask = std::array<unsigned char, 4>;

// One whole frame as a server sends it: unmasked, the shortest length encoding.
std::string EncodeWebSocketFrame(WebSocketOpcode opcode, std::string_view payload, bool fin = true);
// One whole frame as a client sends it: masked with `mask`.
std::string EncodeMaskedWebSocketFrame(WebSocketOpcode opcode, std::string_view payload,
                                       const WebSocketMask& mask, bool fin = true);
// The payload of a close frame: the code (big-endian) and a reason of at most 123 bytes.
std::string WebSocketClosePayload(uint16_t code, std::string_view reason = "");

struct WebSocketFrame {
  WebSocketOpcode opcode = WebSocketOpcode::kBinary;
  bool fin = true;      // the last frame of its message
  std::string payload;  // unmasked
};

// Frames from bytes that arrive in any pieces. A data message may be split into a first frame
// and continuations; control frames (close, ping, pong) may come between them. Frames are
// handed out whole, so memory is bounded by `max_payload_bytes`, not by a message's size.
class WebSocketDecoder {
 public:
  enum class Peer {
    kClient,  // decoding what a client sends (a server's view): frames must be masked
    kServer,  // decoding what a server sends (a client's view): frames must not be masked
  };
  WebSocketDecoder(Peer peer, uint64_t max_payload_bytes);

  // Appends bytes received.
  void Feed(std::string_view bytes);
  // The next whole frame, nullopt when more bytes are needed, or an error when the bytes break
  // the protocol: InvalidArgument (reserved bits or opcodes, a mask where none belongs or none
  // where one must be, a control frame over 125 bytes or fragmented, a continuation outside a
  // message or a new message inside one, a close payload of one byte) or ResourceExhausted (a
  // payload over the cap). An error sticks: the connection is to be closed.
  Result<std::optional<WebSocketFrame>> Next();
  // Bytes fed and not yet handed out in a frame.
  size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  Peer peer_;
  uint64_t max_payload_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;  // bytes at the front of buffer_ already decoded
  bool in_message_ = false;
  Status error_;
};

}  // namespace cairn::net
