// Fuzz target: the bytes a WebSocket peer sends through the master's tunnels and to the
// WebSocket client (net/websocket.h). The first byte picks the side (a client's masked frames or
// a server's plain ones); the rest is decoded at once, and again fed in pieces as a socket would
// deliver them (the piece size taken from the input's last byte): both must give the same frames
// and the same refusal. Every frame decoded must encode back to bytes that decode to itself.
#include <string>
#include <string_view>
#include <vector>

#include "net/websocket.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using cairn::StatusCode;
using cairn::net::WebSocketDecoder;
using cairn::net::WebSocketFrame;

// A small cap, so that frames over it are reached too.
constexpr uint64_t kMaxPayload = 4096;

struct Decoded {
  std::vector<WebSocketFrame> frames;
  StatusCode refusal = StatusCode::kOk;
};

Decoded Decode(WebSocketDecoder::Peer peer, std::string_view bytes, size_t piece_size) {
  WebSocketDecoder decoder(peer, kMaxPayload);
  Decoded decoded;
  for (size_t at = 0; at < bytes.size() && decoded.refusal == StatusCode::kOk; at += piece_size) {
    decoder.Feed(bytes.substr(at, piece_size));
    while (true) {
      auto next = decoder.Next();
      if (!next.ok()) {
        decoded.refusal = next.status().code();
        break;
      }
      if (!next->has_value()) break;
      FUZZ_CHECK((*next)->payload.size() <= kMaxPayload);
      decoded.frames.push_back(std::move(**next));
    }
  }
  return decoded;
}

bool Same(const WebSocketFrame& a, const WebSocketFrame& b) {
  return a.opcode == b.opcode && a.fin == b.fin && a.payload == b.payload;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto peer = data[0] & 1 ? WebSocketDecoder::Peer::kClient : WebSocketDecoder::Peer::kServer;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Decoded whole = Decode(peer, bytes, bytes.size() + 1);
  const Decoded pieces = Decode(peer, bytes, 1 + data[size - 1] % 16);
  FUZZ_CHECK(whole.refusal == pieces.refusal);
  FUZZ_CHECK(whole.frames.size() == pieces.frames.size());
  for (size_t i = 0; i < whole.frames.size(); ++i) {
    FUZZ_CHECK(Same(whole.frames[i], pieces.frames[i]));
  }
  // Re-encoded the way that side sends, the frames decode to themselves.
  std::string encoded;
  for (const WebSocketFrame& frame : whole.frames) {
    encoded += peer == WebSocketDecoder::Peer::kClient
                   ? cairn::net::EncodeMaskedWebSocketFrame(frame.opcode, frame.payload,
                                                            {0xA1, 0x00, 0x5C, 0xFF}, frame.fin)
                   : cairn::net::EncodeWebSocketFrame(frame.opcode, frame.payload, frame.fin);
  }
  const Decoded again = Decode(peer, encoded, encoded.size() + 1);
  FUZZ_CHECK(again.refusal == StatusCode::kOk);
  FUZZ_CHECK(again.frames.size() == whole.frames.size());
  for (size_t i = 0; i < whole.frames.size(); ++i)
    FUZZ_CHECK(Same(again.frames[i], whole.frames[i]));
  return 0;
}
