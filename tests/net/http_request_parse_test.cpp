// The request parser on plain bytes (net/http_request_parse.h), without a socket.
#include "net/http_request_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace cairn::net {
namespace {

const RequestLimits kSmallLimits{/*max_header_bytes=*/256, /*max_body_bytes=*/16,
                                 /*body_shape=*/std::nullopt,
                                 /*body_shape_exempt_prefix=*/{}};

TEST(HttpRequestParseTest, ReadsARequestWithItsQueryHeadersAndBody) {
  const std::string bytes =
      "POST /a%20b?q=x+y&q=2&flag HTTP/1.1\r\nHost: h\r\nX-Test: V\r\nContent-Length: 4\r\n\r\n"
      "bodyGET /next HTTP/1.1\r\n\r\n";
  ParsedRequest parsed = ParseRequest(bytes, {});
  ASSERT_EQ(parsed.state, ParseState::kComplete);
  EXPECT_EQ(parsed.request.method, "POST");
  EXPECT_EQ(parsed.request.target, "/a%20b?q=x+y&q=2&flag");
  EXPECT_EQ(parsed.request.path, "/a b");
  EXPECT_EQ(parsed.request.QueryParams("q"), (std::vector<std::string>{"x y", "2"}));
  EXPECT_TRUE(parsed.request.HasQueryParam("flag"));
  EXPECT_EQ(parsed.request.Header("x-test"), "V");
  EXPECT_EQ(parsed.request.body, "body");
  EXPECT_TRUE(parsed.keep_alive);
  // The pipelined request behind it is left for the next parser.
  EXPECT_EQ(bytes.substr(parsed.consumed), "GET /next HTTP/1.1\r\n\r\n");
}

TEST(HttpRequestParseTest, BytesFedOneAtATimeGiveTheSameRequest) {
  const std::string bytes =
      "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
  RequestParser parser({}, "10.0.0.1:5");
  std::string unparsed;
  for (char byte : bytes) {
    ASSERT_EQ(parser.state(), ParseState::kNeedMoreBytes);
    unparsed.push_back(byte);
    unparsed.erase(0, parser.Feed(unparsed));
  }
  ASSERT_EQ(parser.state(), ParseState::kComplete);
  EXPECT_TRUE(unparsed.empty());
  Request request = parser.TakeRequest();
  EXPECT_EQ(request.body, "abcde");
  EXPECT_EQ(request.remote_address, "10.0.0.1:5");
}

TEST(HttpRequestParseTest, RefusesWhatTheServerAnswers431And413And400) {
  EXPECT_EQ(ParseRequest("GET /" + std::string(300, 'a') + " HTTP/1.1\r\n\r\n", kSmallLimits).state,
            ParseState::kHeaderTooLarge);
  EXPECT_EQ(ParseRequest("POST / HTTP/1.1\r\nContent-Length: 17\r\n\r\n", kSmallLimits).state,
            ParseState::kBodyTooLarge);
  EXPECT_EQ(ParseRequest("NOT HTTP\r\n\r\n", kSmallLimits).state, ParseState::kMalformed);
}

TEST(HttpRequestParseTest, TheStreamEndingInsideARequestIsMalformedAndBeforeOneIsNot) {
  EXPECT_EQ(ParseRequest("GET / HTTP/1.1\r\nHost:", {}).state, ParseState::kMalformed);
  EXPECT_EQ(ParseRequest("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", {}).state,
            ParseState::kMalformed);
  RequestParser parser({});
  parser.FeedEndOfStream();
  EXPECT_FALSE(parser.started());
  EXPECT_EQ(parser.state(), ParseState::kNeedMoreBytes);
}

TEST(HttpRequestParseTest, ABodyThatBreaksTheJsonLimitsIsRefusedBeforeItIsWhole) {
  RequestLimits limits;
  limits.body_shape = DocumentLimits{~size_t{0}, 64, 1000, /*max_string_bytes=*/16, "content"};
  RequestParser parser(limits);
  // The head promises 1 MiB; the refusal comes with the 17th byte of the string.
  const std::string head = "POST /x HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n";
  std::string bytes = head + R"({"description": ")" + std::string(16, 'x');
  EXPECT_EQ(parser.Feed(bytes), bytes.size());
  ASSERT_EQ(parser.state(), ParseState::kNeedMoreBytes);
  parser.Feed("x");
  ASSERT_EQ(parser.state(), ParseState::kBodyRefused);
  EXPECT_EQ(parser.refusal().message(), "body: description: larger than 16 bytes");
  // The same body within the limits, and without them, is a request.
  const std::string fine = R"({"description": "short", "content": "a long file, not refused"})";
  auto parsed = ParseRequest(
      "POST /x HTTP/1.1\r\nContent-Length: " + std::to_string(fine.size()) + "\r\n\r\n" + fine,
      limits);
  ASSERT_EQ(parsed.state, ParseState::kComplete);
  EXPECT_EQ(parsed.request.body, fine);
  EXPECT_EQ(ParseRequest(bytes + "x\"}", {}).state, ParseState::kMalformed)
      << "without limits it is only short of its promised length";
}

// The master's proxy passes bodies to notebooks and TensorBoards, which are theirs to judge (a
// notebook cell may be longer than any Cairn config): requests under the exempt prefix are not
// scanned; every other one still is.
TEST(HttpRequestParseTest, BodiesUnderTheExemptPrefixAreNotScanned) {
  RequestLimits limits;
  limits.body_shape = DocumentLimits{~size_t{0}, 64, 1000, /*max_string_bytes=*/16, "content"};
  limits.body_shape_exempt_prefix = "/proxy/";
  const std::string cell = R"json({"source": "print('a cell longer than sixteen bytes')"})json";
  auto with = [&](const std::string& target) {
    return ParseRequest("PUT " + target + " HTTP/1.1\r\nContent-Length: " +
                            std::to_string(cell.size()) + "\r\n\r\n" + cell,
                        limits);
  };
  auto proxied = with("/proxy/t1/api/contents/a.ipynb");
  ASSERT_EQ(proxied.state, ParseState::kComplete);
  EXPECT_EQ(proxied.request.body, cell);
  EXPECT_EQ(with("/api/v1/commands").state, ParseState::kBodyRefused);
  EXPECT_EQ(with("/proxyx/t1").state, ParseState::kBodyRefused);
}

TEST(HttpRequestParseTest, AHeadThatExpectsContinueAsksForItOnce) {
  RequestParser parser({});
  const std::string head = "POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  std::string unparsed;
  for (char byte : head) {
    EXPECT_FALSE(parser.TakeContinueRequest()) << "the head is not complete yet";
    unparsed.push_back(byte);
    unparsed.erase(0, parser.Feed(unparsed));
  }
  EXPECT_TRUE(parser.TakeContinueRequest());
  EXPECT_FALSE(parser.TakeContinueRequest()) << "asked once";
  parser.Feed("{}");
  ASSERT_EQ(parser.state(), ParseState::kComplete);
  RequestParser plain({});
  plain.Feed("POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\n");
  EXPECT_FALSE(plain.TakeContinueRequest());
}

TEST(HttpRequestParseTest, Http10AndConnectionCloseAreNotKeptAlive) {
  EXPECT_FALSE(ParseRequest("GET / HTTP/1.0\r\n\r\n", {}).keep_alive);
  EXPECT_TRUE(ParseRequest("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", {}).keep_alive);
  EXPECT_FALSE(ParseRequest("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", {}).keep_alive);
}

}  // namespace
}  // namespace cairn::net
