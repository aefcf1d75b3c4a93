#include "net/websocket.h"

#include <openssl/evp.h>

#include "base/encoding.h"

namespace cairn::net {

namespace {

// RFC 6455 §1.3: appended to the client's key before hashing.
constexpr std::string_view kWebSocketGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

constexpr unsigned char kFinBit = 0x80;
constexpr unsigned char kReservedBits = 0x70;
constexpr unsigned char kOpcodeBits = 0x0F;
constexpr unsigned char kMaskBit = 0x80;
constexpr uint64_t kMaxControlPayload = 125;

bool IsControl(WebSocketOpcode opcode) { return static_cast<uint8_t>(opcode) >= 0x8; }

bool IsKnownOpcode(uint8_t value) { return value <= 0x2 || (value >= 0x8 && value <= 0xA); }

// Whether the comma-separated header `value` lists `token` (compared ignoring case).
bool ListsToken(const std::string& value, std::string_view token) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    std::string_view item(value.data() + start, end - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (AsciiLower(std::string(item)) == token) return true;
    start = end + 1;
  }
  return false;
}

std::string EncodeFrame(WebSocketOpcode opcode, std::string_view payload, bool fin,
                        const WebSocketMask* mask) {
  std::string frame;
  frame.reserve(payload.size() + 14);
  frame.push_back(static_cast<char>((fin ? kFinBit : 0) | static_cast<uint8_t>(opcode)));
  const unsigned char mask_bit = mask ? kMaskBit : 0;
  const uint64_t size = payload.size();
  if (size <= 125) {
    frame.push_back(static_cast<char>(mask_bit | size));
  } else if (size <= 0xFFFF) {
    frame.push_back(static_cast<char>(mask_bit | 126));
    frame.push_back(static_cast<char>(size >> 8));
    frame.push_back(static_cast<char>(size & 0xFF));
  } else {
    frame.push_back(static_cast<char>(mask_bit | 127));
    for (int shift = 56; shift >= 0; shift -= 8) {
      frame.push_back(static_cast<char>((size >> shift) & 0xFF));
    }
  }
  if (!mask) {
    frame.append(payload);
    return frame;
  }
  frame.append(reinterpret_cast<const char*>(mask->data()), mask->size());
  const size_t start = frame.size();
  frame.append(payload);
  for (size_t i = 0; i < payload.size(); ++i) {
    frame[start + i] = static_cast<char>(frame[start + i] ^ (*mask)[i % 4]);
  }
  return frame;
}

}  // namespace

std::string WebSocketAccept(std::string_view key) {
  std::string input(key);
  input.append(kWebSocketGuid);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // SHA-1 cannot fail on an in-memory input; a failure would leave length 0 and an accept
  // value no client matches, which fails the handshake rather than the process.
  EVP_Digest(input.data(), input.size(), digest, &length, EVP_sha1(), nullptr);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

Result<std::string> AcceptWebSocketUpgrade(const Request& request) {
  if (request.method != "GET") {
    return Status::InvalidArgument("a WebSocket upgrade must be a GET, not " + request.method);
  }
  if (!ListsToken(request.Header("upgrade"), "websocket")) {
    return Status::InvalidArgument("not a WebSocket upgrade: no 'Upgrade: websocket' header");
  }
  if (!ListsToken(request.Header("connection"), "upgrade")) {
    return Status::InvalidArgument("not a WebSocket upgrade: no 'Connection: upgrade' header");
  }
  if (request.Header("sec-websocket-version") != "13") {
    return Status::InvalidArgument("only WebSocket version 13 is supported");
  }
  const std::string key = request.Header("sec-websocket-key");
  if (Base64DecodedSize(key) != 16) {
    return Status::InvalidArgument("Sec-WebSocket-Key must be 16 bytes in base64");
  }
  return WebSocketAccept(key);
}

std::string EncodeWebSocketFrame(WebSocketOpcode opcode, std::string_view payload, bool fin) {
  return EncodeFrame(opcode, payload, fin, nullptr);
}

std::string EncodeMaskedWebSocketFrame(WebSocketOpcode opcode, std::string_view payload,
                                       const WebSocketMask& mask, bool fin) {
  return EncodeFrame(opcode, payload, fin, &mask);
}

std::string WebSocketClosePayload(uint16_t code, std::string_view reason) {
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8));
  payload.push_back(static_cast<char>(code & 0xFF));
  payload.append(reason.substr(0, kMaxControlPayload - 2));
  return payload;
}

WebSocketDecoder::WebSocketDecoder(Peer peer, uint64_t max_payload_bytes)
    : peer_(peer), max_payload_bytes_(max_payload_bytes) {}

void WebSocketDecoder::Feed(std::string_view bytes) {
  // Decoded bytes are dropped when they are most of the buffer, so appending stays amortized
  // linear without moving the unread tail on every frame.
  if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(bytes);
}

Result<std::optional<WebSocketFrame>> WebSocketDecoder::Next() {
  if (!error_.ok()) return error_;
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffer_.data()) + consumed_;
  const size_t available = buffer_.size() - consumed_;
  if (available < 2) return std::optional<WebSocketFrame>();
  const auto fail = [&](Status status) -> Result<std::optional<WebSocketFrame>> {
    error_ = std::move(status);
    return error_;
  };
  if (bytes[0] & kReservedBits) {
    return fail(Status::InvalidArgument("WebSocket frame with reserved bits set"));
  }
  const uint8_t opcode_value = bytes[0] & kOpcodeBits;
  if (!IsKnownOpcode(opcode_value)) {
    return fail(Status::InvalidArgument("WebSocket frame with reserved opcode " +
                                        std::to_string(opcode_value)));
  }
  const auto opcode = static_cast<WebSocketOpcode>(opcode_value);
  const bool fin = (bytes[0] & kFinBit) != 0;
  const bool masked = (bytes[1] & kMaskBit) != 0;
  if (masked != (peer_ == Peer::kClient)) {
    return fail(Status::InvalidArgument(masked ? "WebSocket frame from a server is masked"
                                               : "WebSocket frame from a client is not masked"));
  }
  uint64_t payload_size = bytes[1] & 0x7F;
  size_t header_size = 2;
  if (payload_size == 126) {
    header_size = 4;
    if (available < header_size) return std::optional<WebSocketFrame>();
    payload_size = (uint64_t{bytes[2]} << 8) | bytes[3];
  } else if (payload_size == 127) {
    header_size = 10;
    if (available < header_size) return std::optional<WebSocketFrame>();
    payload_size = 0;
    for (size_t i = 2; i < 10; ++i) payload_size = (payload_size << 8) | bytes[i];
    if (payload_size >> 63) {
      return fail(Status::InvalidArgument("WebSocket frame length has its top bit set"));
    }
  }
  if (IsControl(opcode)) {
    if (payload_size > kMaxControlPayload) {
      return fail(Status::InvalidArgument("WebSocket control frame over 125 bytes"));
    }
    if (!fin) return fail(Status::InvalidArgument("fragmented WebSocket control frame"));
    if (opcode == WebSocketOpcode::kClose && payload_size == 1) {
      return fail(Status::InvalidArgument("WebSocket close frame with a one-byte payload"));
    }
  } else if (opcode == WebSocketOpcode::kContinuation) {
    if (!in_message_) {
      return fail(Status::InvalidArgument("WebSocket continuation frame outside a message"));
    }
  } else if (in_message_) {
    return fail(Status::InvalidArgument("WebSocket message begun inside a fragmented one"));
  }
  if (payload_size > max_payload_bytes_) {
    return fail(Status::ResourceExhausted("WebSocket frame of " + std::to_string(payload_size) +
                                          " bytes is over the limit of " +
                                          std::to_string(max_payload_bytes_)));
  }
  const size_t mask_size = masked ? 4 : 0;
  if (available - header_size < mask_size || available - header_size - mask_size < payload_size) {
    return std::optional<WebSocketFrame>();
  }
  WebSocketFrame frame;
  frame.opcode = opcode;
  frame.fin = fin;
  const unsigned char* mask = bytes + header_size;
  const unsigned char* payload = mask + mask_size;
  frame.payload.assign(reinterpret_cast<const char*>(payload), payload_size);
  if (masked) {
    for (size_t i = 0; i < frame.payload.size(); ++i) {
      frame.payload[i] = static_cast<char>(frame.payload[i] ^ mask[i % 4]);
    }
  }
  if (!IsControl(opcode)) in_message_ = !fin;
  consumed_ += header_size + mask_size + payload_size;
  return std::optional<WebSocketFrame>(std::move(frame));
}

}  // namespace cairn::net
