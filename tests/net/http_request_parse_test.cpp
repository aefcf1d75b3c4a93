// The request parser on plain bytes (net/http_request_parse.h), without a socket.
#include "net/http_request_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// As the server reads: the unparsed bytes, extended by `pieces` one after another.
ParseState FeedPieces(RequestParser& parser, const std::vector<std::string>& pieces,
                      size_t* consumed = nullptr) {
  std::string unparsed;
  size_t used = 0;
  for (const auto& piece : pieces) {
    if (parser.state() != ParseState::kNeedMoreBytes) break;
    unparsed += piece;
    const size_t taken = parser.Feed(unparsed);
    unparsed.erase(0, taken);
    used += taken;
  }
  if (consumed != nullptr) *consumed = used;
  return parser.state();
}

TEST(HttpRequestParseTest, TheHeadLimitCountsEveryPieceHoweverTheHeadIsSplit) {
  // Each piece ends one byte into the next line: Beast consumes the whole lines before it and
  // checks its own limit against the rest alone, which never grows.
  const std::string line = "X-Pad: " + std::string(31, 'a') + "\r\n";  // 40 bytes
  std::vector<std::string> pieces = {"GET / HTTP/1.1\r\n" + line.substr(0, 1)};
  for (int i = 0; i < 100; ++i) pieces.push_back(line.substr(1) + line.substr(0, 1));
  RequestParser parser(kSmallLimits);
  EXPECT_EQ(FeedPieces(parser, pieces), ParseState::kHeaderTooLarge);

  // Just under the limit, split the same way, is a request.
  std::vector<std::string> small = {"GET / HTTP/1.1\r\n" + line.substr(0, 1)};
  for (int i = 0; i < 4; ++i) small.push_back(line.substr(1) + line.substr(0, 1));
  small.push_back(line.substr(1) + "\r\n");
  RequestParser fits(kSmallLimits);
  EXPECT_EQ(FeedPieces(fits, small), ParseState::kComplete);
}

TEST(HttpRequestParseTest, TrailersAreRefusedAndNeverTakeAHeadersPlace) {
  const std::string bytes =
      "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n"
      "Authorization: Bearer forged\r\n\r\n";
  EXPECT_EQ(ParseRequest(bytes, {}).state, ParseState::kMalformed);
  // Nor may a trailer grow without end while it waits to be parsed.
  RequestParser parser(kSmallLimits);
  EXPECT_EQ(FeedPieces(parser, {"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
                                "X-Long: " +
                                std::string(1000, 'a')}),
            ParseState::kHeaderTooLarge);
}

TEST(HttpRequestParseTest, ARefusedHeadCostsNoBodyAndAnAdmittedOneItsOwnLimit) {
  std::vector<Request> heads;
  RequestLimits limits;
  limits.admit_head = [&](const Request& head) {
    heads.push_back(head);
    BodyAdmission admission;
    if (head.Header("authorization").empty()) {
      admission.refusal.emplace();
      admission.refusal->status = 401;
    }
    admission.max_body_bytes = 8;
    return admission;
  };
  const std::string head = "POST /x HTTP/1.1\r\nContent-Length: 104857600\r\n\r\n";
  RequestParser anonymous(limits, "10.1.1.1:9");
  size_t consumed = 0;
  EXPECT_EQ(FeedPieces(anonymous, {head + "abc"}, &consumed), ParseState::kHeadRefused);
  EXPECT_EQ(consumed, head.size()) << "not a byte of the body is taken";
  EXPECT_EQ(anonymous.TakeHeadRefusal().status, 401);
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].path, "/x");
  EXPECT_EQ(heads[0].remote_address, "10.1.1.1:9");
  EXPECT_TRUE(heads[0].body.empty());

  // A caller the route admits may send no more than the route takes: said from the head alone.
  RequestParser declared(limits);
  EXPECT_EQ(FeedPieces(declared, {"POST /x HTTP/1.1\r\nAuthorization: Bearer t\r\n"
                                  "Content-Length: 9\r\n\r\n"}),
            ParseState::kBodyTooLarge);
  RequestParser chunked(limits);
  EXPECT_EQ(FeedPieces(chunked, {"POST /x HTTP/1.1\r\nAuthorization: Bearer t\r\n"
                                 "Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n",
                                 "5\r\nfghij\r\n"}),
            ParseState::kBodyTooLarge);
  RequestParser fits(limits);
  EXPECT_EQ(FeedPieces(fits, {"POST /x HTTP/1.1\r\nAuthorization: Bearer t\r\n"
                              "Content-Length: 8\r\n\r\n12345678"}),
            ParseState::kComplete);
  EXPECT_EQ(fits.TakeRequest().body, "12345678");
  // A request without a body is the handler's to judge, not the admission's.
  const size_t asked = heads.size();
  EXPECT_EQ(ParseRequest("GET /y HTTP/1.1\r\n\r\n", limits).state, ParseState::kComplete);
  EXPECT_EQ(heads.size(), asked);
}

TEST(HttpRequestParseTest, BodiesHeldAtOnceStayWithinTheBudgetAndGiveItBackWhenDone) {
  BodyBudget budget(10);
  RequestLimits limits;
  limits.budget = &budget;
  const std::string head = "POST /x HTTP/1.1\r\nContent-Length: 100\r\n\r\n";
  {
    RequestParser first(limits);
    EXPECT_EQ(FeedPieces(first, {head + "123456"}), ParseState::kNeedMoreBytes);
    EXPECT_EQ(budget.held(), 6u) << "counted as the bytes arrive, not as declared";
    RequestParser second(limits);
    EXPECT_EQ(FeedPieces(second, {head + "12345"}), ParseState::kBudgetExhausted);
    EXPECT_EQ(budget.held(), 6u);
  }
  EXPECT_EQ(budget.held(), 0u);
  RequestParser later(limits);
  EXPECT_EQ(FeedPieces(later, {"POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789"}),
            ParseState::kComplete);
}

}  // namespace
}  // namespace cairn::net
