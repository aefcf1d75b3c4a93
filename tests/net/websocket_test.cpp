// WebSocket framing (net/websocket.h) on plain bytes: the examples of RFC 6455 itself, frame
// lengths worked out by hand, pieces of any size, and every frame the decoder must refuse.
#include "net/websocket.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cairn::net {
namespace {

std::string Bytes(std::initializer_list<int> values) {
  std::string bytes;
  for (int value : values) bytes.push_back(static_cast<char>(value));
  return bytes;
}

// Every frame `bytes` decodes to, fed in pieces of `piece` bytes; fails the test on an error.
std::vector<WebSocketFrame> DecodeAll(WebSocketDecoder::Peer peer, const std::string& bytes,
                                      size_t piece) {
  WebSocketDecoder decoder(peer, 1u << 20);
  std::vector<WebSocketFrame> frames;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    decoder.Feed(std::string_view(bytes).substr(at, piece));
    while (true) {
      auto next = decoder.Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !next->has_value()) break;
      frames.push_back(std::move(**next));
    }
  }
  EXPECT_EQ(decoder.buffered(), 0u);
  return frames;
}

// The status the decoder refuses `bytes` with (OK when it does not).
Status Refusal(WebSocketDecoder::Peer peer, const std::string& bytes, uint64_t cap = 1u << 20) {
  WebSocketDecoder decoder(peer, cap);
  decoder.Feed(bytes);
  while (true) {
    auto next = decoder.Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return Status::Ok();
  }
}

const auto kFromClient = WebSocketDecoder::Peer::kClient;
const auto kFromServer = WebSocketDecoder::Peer::kServer;

TEST(WebSocketTest, TheAcceptKeyIsTheRfcsExample) {
  // RFC 6455 §1.2 and §1.3 (checked apart with Python: base64 of hashlib.sha1(key + GUID)).
  EXPECT_EQ(WebSocketAccept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketTest, AnUpgradeRequestIsAcceptedWithTheKeysAnswer) {
  Request request;
  request.method = "GET";
  request.headers = {{"upgrade", "WebSocket"},
                     {"connection", "keep-alive, Upgrade"},
                     {"sec-websocket-version", "13"},
                     {"sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="}};
  auto accepted = AcceptWebSocketUpgrade(request);
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(*accepted, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");

  const auto refused = [&](const char* header, const std::string& value) {
    Request changed = request;
    changed.headers[header] = value;
    return AcceptWebSocketUpgrade(changed).status().code() == StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(refused("upgrade", "h2c"));
  EXPECT_TRUE(refused("connection", "keep-alive"));
  EXPECT_TRUE(refused("sec-websocket-version", "8"));
  EXPECT_TRUE(refused("sec-websocket-key", "c2hvcnQ="));  // 5 bytes, not 16
  EXPECT_TRUE(refused("sec-websocket-key", ""));
  Request post = request;
  post.method = "POST";
  EXPECT_EQ(AcceptWebSocketUpgrade(post).status().code(), StatusCode::kInvalidArgument);
}

TEST(WebSocketTest, TheRfcsMaskedHelloEncodesAndDecodes) {
  // RFC 6455 §5.7: a single-frame masked text message "Hello".
  const std::string frame =
      Bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58});
  EXPECT_EQ(EncodeMaskedWebSocketFrame(WebSocketOpcode::kText, "Hello", {0x37, 0xfa, 0x21, 0x3d}),
            frame);
  auto frames = DecodeAll(kFromClient, frame, frame.size());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, WebSocketOpcode::kText);
  EXPECT_TRUE(frames[0].fin);
  EXPECT_EQ(frames[0].payload, "Hello");
}

TEST(WebSocketTest, TheRfcsUnmaskedHelloAndItsPingEncodeAndDecode) {
  const std::string hello = Bytes({0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f});
  const std::string ping = Bytes({0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f});
  EXPECT_EQ(EncodeWebSocketFrame(WebSocketOpcode::kText, "Hello"), hello);
  EXPECT_EQ(EncodeWebSocketFrame(WebSocketOpcode::kPing, "Hello"), ping);
  auto frames = DecodeAll(kFromServer, hello + ping, 64);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].payload, "Hello");
  EXPECT_EQ(frames[1].opcode, WebSocketOpcode::kPing);
  EXPECT_EQ(frames[1].payload, "Hello");
}

TEST(WebSocketTest, LengthsOf256BytesAnd64KiBTakeTheLongerHeaders) {
  // RFC 6455 §5.7: 256 bytes in a 16-bit length, 64 KiB in a 64-bit one.
  const std::string small(256, 'x');
  const std::string large(65536, 'y');
  const std::string small_frame = EncodeWebSocketFrame(WebSocketOpcode::kBinary, small);
  const std::string large_frame = EncodeWebSocketFrame(WebSocketOpcode::kBinary, large);
  EXPECT_EQ(small_frame.substr(0, 4), Bytes({0x82, 0x7E, 0x01, 0x00}));
  EXPECT_EQ(small_frame.size(), 4u + 256u);
  EXPECT_EQ(large_frame.substr(0, 10),
            Bytes({0x82, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00}));
  EXPECT_EQ(large_frame.size(), 10u + 65536u);
  // 125 is the last length that fits the first byte, 65535 the last of 16 bits.
  EXPECT_EQ(EncodeWebSocketFrame(WebSocketOpcode::kBinary, std::string(125, 'a'))[1], 125);
  EXPECT_EQ(EncodeWebSocketFrame(WebSocketOpcode::kBinary, std::string(65535, 'a')).substr(1, 3),
            Bytes({0x7E, 0xFF, 0xFF}));
  auto frames = DecodeAll(kFromServer, small_frame + large_frame, 1000);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].payload, small);
  EXPECT_EQ(frames[1].payload, large);
  // Masked, a client's 64 KiB frame has the mask after the 64-bit length.
  const std::string masked =
      EncodeMaskedWebSocketFrame(WebSocketOpcode::kBinary, large, {1, 2, 3, 4});
  EXPECT_EQ(masked.substr(0, 14), Bytes({0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4}));
  EXPECT_EQ(static_cast<unsigned char>(masked[14]), 'y' ^ 1);
  EXPECT_EQ(static_cast<unsigned char>(masked[17]), 'y' ^ 4);
  frames = DecodeAll(kFromClient, masked, 4096);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, large);
}

TEST(WebSocketTest, BytesFedOneAtATimeGiveEachFrameOnlyWhenItIsWhole) {
  const std::string frame =
      Bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58});
  WebSocketDecoder decoder(kFromClient, 1024);
  for (size_t i = 0; i + 1 < frame.size(); ++i) {
    decoder.Feed(frame.substr(i, 1));
    auto next = decoder.Next();
    ASSERT_TRUE(next.ok());
    EXPECT_FALSE(next->has_value()) << "after " << i + 1 << " bytes";
  }
  decoder.Feed(frame.substr(frame.size() - 1));
  auto next = decoder.Next();
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ((*next)->payload, "Hello");
  // The same for a frame with a 64-bit length, and frames running on in one piece.
  const std::string large =
      EncodeMaskedWebSocketFrame(WebSocketOpcode::kBinary, std::string(70000, 'z'), {9, 8, 7, 6});
  const std::string two = large + large;
  auto frames = DecodeAll(kFromClient, two, 1);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[1].payload, std::string(70000, 'z'));
}

TEST(WebSocketTest, AFragmentedMessageComesAsFramesWithAControlFrameBetween) {
  // RFC 6455 §5.7: "Hel" then "lo" as a continuation; a ping in between (§5.4 allows it).
  const std::string first = Bytes({0x01, 0x03, 0x48, 0x65, 0x6c});
  const std::string ping = Bytes({0x89, 0x00});
  const std::string last = Bytes({0x80, 0x02, 0x6c, 0x6f});
  EXPECT_EQ(EncodeWebSocketFrame(WebSocketOpcode::kText, "Hel", /*fin=*/false), first);
  EXPECT_EQ(EncodeWebSocketFrame(WebSocketOpcode::kContinuation, "lo"), last);
  auto frames = DecodeAll(kFromServer, first + ping + last, 3);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].opcode, WebSocketOpcode::kText);
  EXPECT_FALSE(frames[0].fin);
  EXPECT_EQ(frames[0].payload, "Hel");
  EXPECT_EQ(frames[1].opcode, WebSocketOpcode::kPing);
  EXPECT_EQ(frames[2].opcode, WebSocketOpcode::kContinuation);
  EXPECT_TRUE(frames[2].fin);
  EXPECT_EQ(frames[2].payload, "lo");
}

TEST(WebSocketTest, AClosePayloadIsTheCodeBigEndianAndTheReason) {
  EXPECT_EQ(WebSocketClosePayload(1000, "bye"), Bytes({0x03, 0xE8, 'b', 'y', 'e'}));
  EXPECT_EQ(WebSocketClosePayload(1002), Bytes({0x03, 0xEA}));
  EXPECT_EQ(WebSocketClosePayload(1000, std::string(200, 'r')).size(), 125u);
}

TEST(WebSocketTest, FramesAgainstTheProtocolAreRefused) {
  const auto invalid = [](WebSocketDecoder::Peer peer, const std::string& bytes) {
    return Refusal(peer, bytes).code() == StatusCode::kInvalidArgument;
  };
  // RSV1 set, without an extension that gives it a meaning.
  EXPECT_TRUE(invalid(kFromServer, Bytes({0xC1, 0x00})));
  // Opcodes 3 and 0xB are reserved.
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x83, 0x00})));
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x8B, 0x00})));
  // A client's frame must be masked, a server's must not.
  EXPECT_TRUE(invalid(kFromClient, Bytes({0x82, 0x01, 'a'})));
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x82, 0x81, 1, 2, 3, 4, 'a'})));
  // A ping of 126 bytes, and a fragmented ping.
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x89, 0x7E, 0x00, 0x7E})));
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x09, 0x00})));
  // A continuation with no message begun; a new message inside a fragmented one.
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x80, 0x01, 'a'})));
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x01, 0x01, 'a', 0x82, 0x01, 'b'})));
  // A close payload of one byte (a code takes two).
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x88, 0x01, 0x03})));
  // A 64-bit length with its top bit set.
  EXPECT_TRUE(invalid(kFromServer, Bytes({0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0})));
  // And a fine frame is not.
  EXPECT_TRUE(Refusal(kFromServer, Bytes({0x82, 0x01, 'a'})).ok());
}

TEST(WebSocketTest, APayloadOverTheCapIsRefusedFromItsHeaderAlone) {
  // 256 bytes announced against a cap of 100: refused before any payload byte arrives.
  Status refused = Refusal(kFromServer, Bytes({0x82, 0x7E, 0x01, 0x00}), 100);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.ToString();
  // Exactly the cap is fine.
  std::string at_cap = EncodeWebSocketFrame(WebSocketOpcode::kBinary, std::string(100, 'c'));
  EXPECT_TRUE(Refusal(kFromServer, at_cap, 100).ok());
}

TEST(WebSocketTest, AnErrorSticksWhateverComesAfter) {
  WebSocketDecoder decoder(kFromServer, 1024);
  decoder.Feed(Bytes({0xC1, 0x00}));
  EXPECT_FALSE(decoder.Next().ok());
  decoder.Feed(Bytes({0x82, 0x01, 'a'}));
  EXPECT_EQ(decoder.Next().status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::net
