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

TEST(EncodingTest, ValidUtf8PrefixRepairsAndCutsBetweenCharacters) {
  EXPECT_EQ(ValidUtf8Prefix("plain \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80"),
            "plain \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80");
  // Never inside a character: "é" is two bytes, so three bytes of "aéé" keep "aé".
  EXPECT_EQ(ValidUtf8Prefix("a\xC3\xA9\xC3\xA9", 4), "a\xC3\xA9");
  EXPECT_EQ(ValidUtf8Prefix("a\xC3\xA9\xC3\xA9", 2), "a");
  // Stray bytes, a truncated sequence, an overlong '/', a surrogate: each bad byte is U+FFFD.
  EXPECT_EQ(ValidUtf8Prefix("\xFF/"), "\uFFFD/");
  EXPECT_EQ(ValidUtf8Prefix("x\xE2\x82"), "x\uFFFD\uFFFD");
  EXPECT_EQ(ValidUtf8Prefix("\xC0\xAF"), "\uFFFD\uFFFD");
  EXPECT_EQ(ValidUtf8Prefix("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");
  // A replacement counts its three bytes against the limit.
  EXPECT_EQ(ValidUtf8Prefix("a\xFF", 3), "a");
  EXPECT_EQ(ValidUtf8Prefix("", 0), "");
}

}  // namespace
}  // namespace cairn
