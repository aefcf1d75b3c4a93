// The JSON shape check fed in pieces (base/json_shape_scanner.h): the verdict does not depend on
// where the text is cut, and a document is refused at the piece that breaks a limit.
#include "base/json_shape_scanner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace cairn {
namespace {

constexpr DocumentLimits kSmall{/*max_bytes=*/~size_t{0}, /*max_depth=*/4, /*max_nodes=*/20,
                                /*max_string_bytes=*/8, /*large_string_key=*/"content"};

Status ScanInPieces(const std::string& text, const std::vector<size_t>& cuts) {
  JsonShapeScanner scanner(kSmall, "body");
  size_t from = 0;
  for (size_t cut : cuts) {
    Status status = scanner.Feed(std::string_view(text).substr(from, cut - from));
    if (!status.ok()) return status;
    from = cut;
  }
  return scanner.Feed(std::string_view(text).substr(from));
}

TEST(JsonShapeScannerTest, EveryWayOfCuttingTheTextGivesTheSameVerdict) {
  // Escaped quotes and runs of backslashes across a cut are what a piecewise scan can get wrong.
  const std::vector<std::string> documents = {
      R"({"a": "12345678", "b": [1, 2]})",                     // a string at the limit
      R"({"a": "123456789"})",                                 // one byte over
      R"({"abcdefghijk": 1})",                                 // an over-long key
      R"({"content": "a long file body, over eight bytes"})",  // exempt
      R"({"content": ["a", "a long string after it"]})",       // not exempt
      R"({"a": "\"\"\"\"", "b": "\\\\\\\\"})",                 // escapes at the limit
      R"({"a": "\\\"[[[[", "b": 1})",                          // a quote escaped after a backslash
      R"({"a": "\\\\", "b": [[[[[1]]]]]})",                    // too deep after escaped backslashes
      R"([1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20])",  // too many values
      R"({"a":"x"   :  "y", "content"  :  "long exempted string"})",
  };
  std::mt19937 random(16);
  for (const std::string& text : documents) {
    const Status whole = ScanInPieces(text, {});
    EXPECT_EQ(whole.message(), CheckJsonShape(text, kSmall, "body").message()) << text;
    // Every single cut, then random sets of cuts.
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      EXPECT_EQ(ScanInPieces(text, {cut}).message(), whole.message()) << text << " cut at " << cut;
    }
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<size_t> cuts;
      for (size_t at = 0; at < text.size(); ++at) {
        if (random() % 3 == 0) cuts.push_back(at);
      }
      EXPECT_EQ(ScanInPieces(text, cuts).message(), whole.message()) << text;
    }
  }
  // And the verdicts are the right ones.
  EXPECT_TRUE(ScanInPieces(documents[0], {}).ok());
  EXPECT_EQ(ScanInPieces(documents[1], {}).message(), "body: a: larger than 8 bytes");
  EXPECT_FALSE(ScanInPieces(documents[2], {}).ok());
  EXPECT_TRUE(ScanInPieces(documents[3], {}).ok());
  EXPECT_FALSE(ScanInPieces(documents[4], {}).ok());
  EXPECT_TRUE(ScanInPieces(documents[5], {}).ok());
  EXPECT_TRUE(ScanInPieces(documents[6], {}).ok()) << "the escaped quote does not end the string";
  EXPECT_EQ(ScanInPieces(documents[7], {}).message(), "body: nested deeper than 4 levels");
  EXPECT_EQ(ScanInPieces(documents[8], {}).message(), "body: more than 20 values");
  EXPECT_TRUE(ScanInPieces(documents[9], {}).ok());
}

TEST(JsonShapeScannerTest, ALongStringIsRefusedBeforeItEnds) {
  JsonShapeScanner scanner(kRequestBodyLimits, "body");
  ASSERT_TRUE(scanner.Feed(R"({"config": {"description": ")").ok());
  const std::string mebibyte(size_t{1} << 20, 'x');
  ASSERT_TRUE(scanner.Feed(mebibyte).ok()) << "at the limit";
  Status refused = scanner.Feed("x");
  EXPECT_EQ(refused.message(), "body: description: larger than 1048576 bytes");
  // Refused for good: later pieces, even harmless ones, get the same answer.
  EXPECT_EQ(scanner.Feed("\"}}").message(), refused.message());
}

}  // namespace
}  // namespace cairn
