// base/gzip.h: a gzip member read back, and which Accept-Encoding values take gzip.
#include "base/gzip.h"

#include <gtest/gtest.h>

#include <string>

namespace cairn {
namespace {

TEST(GzipTest, AGzipMemberReadsBackAndIsSmallerForText) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += R"({"id":")" + std::to_string(i) + R"(","state":"QUEUED"},)";
  auto gzipped = GzipFast(text);
  ASSERT_TRUE(gzipped.ok()) << gzipped.status().ToString();
  EXPECT_EQ(static_cast<unsigned char>((*gzipped)[0]), 0x1f) << "gzip's magic";
  EXPECT_LT(gzipped->size(), text.size() / 4);
  auto back = Gunzip(*gzipped);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, text);
  auto empty = GzipFast("");
  ASSERT_TRUE(empty.ok());
  auto nothing = Gunzip(*empty);
  ASSERT_TRUE(nothing.ok()) << nothing.status().ToString();
  EXPECT_EQ(*nothing, "");
  EXPECT_FALSE(Gunzip("plain text").ok());
  EXPECT_FALSE(Gunzip(*gzipped, 100).ok()) << "inflates past its bound";
}

TEST(GzipTest, AcceptEncodingTakesGzipUnlessItsWeightIsZero) {
  EXPECT_TRUE(AcceptsGzip("gzip, deflate"));
  EXPECT_TRUE(AcceptsGzip("deflate, GZIP"));
  EXPECT_TRUE(AcceptsGzip("br;q=1.0, gzip;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.000, br"));
  EXPECT_FALSE(AcceptsGzip("gzipped"));
}

}  // namespace
}  // namespace cairn
