// base/encoding.h: the small text encodings every layer shares.
#include "base/encoding.h"

#include <gtest/gtest.h>

namespace cairn {
namespace {

TEST(EncodingTest, AsciiLowerLowersOnlyAsciiLetters) {
  EXPECT_EQ(AsciiLower("Content-Type"), "content-type");
  EXPECT_EQ(AsciiLower("TEAM_42"), "team_42");
  // Bytes of other scripts stay as they are (names compare ignoring ASCII case only).
  EXPECT_EQ(AsciiLower("\xC3\x84QUIPE"), "\xC3\x84quipe");
  EXPECT_EQ(AsciiLower(""), "");
}

TEST(EncodingTest, HexAndBase64RoundTrip) {
  const unsigned char bytes[] = {0x00, 0xab, 0xff};
  EXPECT_EQ(HexLower(bytes, sizeof bytes), "00abff");
  auto decoded = Base64Decode(Base64Encode("cairn"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, "cairn");
  EXPECT_FALSE(Base64Decode("not base64!").ok());
}

}  // namespace
}  // namespace cairn
