// Fuzz target: the bytes a client sends the master, up to the first request
// (net/http_request_parse.h). The whole input is parsed at once, and again fed in pieces as a
// socket would deliver them (the piece size taken from the input's last byte); both must come
// to the same request, or both refuse it. Small limits, so that 431 and 413 are reached too.
#include <algorithm>
#include <string>
#include <string_view>

#include "net/http_request_parse.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using cairn::net::ParsedRequest;
using cairn::net::ParseState;
using cairn::net::RequestLimits;
using cairn::net::RequestParser;

const RequestLimits kLimits{/*max_header_bytes=*/2048, /*max_body_bytes=*/1024,
                            /*body_shape=*/std::nullopt, /*body_shape_exempt_prefix=*/{}};

// As the server reads: a buffer of unparsed bytes, extended piece by piece.
ParsedRequest ParseInPieces(std::string_view bytes, size_t piece_size) {
  RequestParser parser(kLimits);
  std::string unparsed;
  size_t received = 0;
  size_t consumed = 0;
  while (parser.state() == ParseState::kNeedMoreBytes && received < bytes.size()) {
    const size_t piece = std::min(piece_size, bytes.size() - received);
    unparsed.append(bytes.substr(received, piece));
    received += piece;
    const size_t used = parser.Feed(unparsed);
    FUZZ_CHECK(used <= unparsed.size());
    unparsed.erase(0, used);
    consumed += used;
  }
  parser.FeedEndOfStream();
  ParsedRequest parsed;
  parsed.state = parser.state();
  parsed.consumed = consumed;
  if (parsed.state == ParseState::kComplete) {
    parsed.keep_alive = parser.keep_alive();
    parsed.request = parser.TakeRequest();
  }
  return parsed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const ParsedRequest whole = cairn::net::ParseRequest(bytes, kLimits);
  if (whole.state == ParseState::kComplete) {
    FUZZ_CHECK(whole.consumed <= bytes.size());
    FUZZ_CHECK(whole.request.body.size() <= kLimits.max_body_bytes);
    FUZZ_CHECK(!whole.request.method.empty());
    for (const auto& [name, value] : whole.request.headers) {
      FUZZ_CHECK(
          std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; }));
    }
  }

  const size_t piece_size = size == 0 ? 1 : 1 + data[size - 1] % 64;
  const ParsedRequest pieces = ParseInPieces(bytes, piece_size);
  // Beast applies the head's limit to the request line and to the fields each, when they come
  // in one piece: a head up to twice the limit can pass then, and be refused in pieces. Past
  // the limit the two need not agree; below it they must.
  if (size >= kLimits.max_header_bytes) return 0;
  // Refused either way, but not always with the same answer: Beast may find a bad byte (400) or
  // a body over its limit (413) first, depending on how the bytes arrived.
  FUZZ_CHECK((pieces.state == ParseState::kComplete) == (whole.state == ParseState::kComplete));
  FUZZ_CHECK((pieces.state == ParseState::kNeedMoreBytes) ==
             (whole.state == ParseState::kNeedMoreBytes));
  if (whole.state == ParseState::kComplete) {
    FUZZ_CHECK(pieces.consumed == whole.consumed);
    FUZZ_CHECK(pieces.keep_alive == whole.keep_alive);
    FUZZ_CHECK(pieces.request.method == whole.request.method);
    FUZZ_CHECK(pieces.request.target == whole.request.target);
    FUZZ_CHECK(pieces.request.path == whole.request.path);
    FUZZ_CHECK(pieces.request.query == whole.request.query);
    FUZZ_CHECK(pieces.request.headers == whole.request.headers);
    FUZZ_CHECK(pieces.request.body == whole.request.body);
  }
  return 0;
}
