#include "net/http_request_parse.h"

#include <algorithm>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "base/encoding.h"
#include "base/json_shape_scanner.h"

namespace cairn::net {

namespace bhttp = boost::beast::http;

struct RequestParser::Impl {
  bhttp::request_parser<bhttp::string_body> parser;
  std::optional<JsonShapeScanner> body_scanner;
  size_t body_scanned = 0;  // bytes of the body already given to body_scanner
  bool continue_answered = false;
  std::string exempt_prefix;  // RequestLimits::body_shape_exempt_prefix
};

RequestParser::RequestParser(const RequestLimits& limits) : impl_(std::make_unique<Impl>()) {
  // Eager: the body is parsed in the same call as the head when its bytes are at hand, as
  // Beast's own read() does.
  impl_->parser.eager(true);
  impl_->parser.body_limit(limits.max_body_bytes);
  impl_->parser.header_limit(static_cast<uint32_t>(
      std::min<size_t>(limits.max_header_bytes, std::numeric_limits<uint32_t>::max())));
  if (limits.body_shape) impl_->body_scanner.emplace(*limits.body_shape, "body");
  impl_->exempt_prefix = limits.body_shape_exempt_prefix;
}

RequestParser::~RequestParser() = default;

size_t RequestParser::Feed(std::string_view bytes) {
  if (state_ != ParseState::kNeedMoreBytes || bytes.empty()) return 0;
  boost::beast::error_code ec;
  const size_t used = impl_->parser.put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
  if (ec == bhttp::error::header_limit) {
    state_ = ParseState::kHeaderTooLarge;
  } else if (ec == bhttp::error::body_limit) {
    state_ = ParseState::kBodyTooLarge;
  } else if (ec && ec != bhttp::error::need_more) {
    state_ = ParseState::kMalformed;
  } else if (!ScanNewBodyBytes()) {
    state_ = ParseState::kBodyRefused;
  } else if (impl_->parser.is_done()) {
    state_ = ParseState::kComplete;
  }
  return used;
}

bool RequestParser::ScanNewBodyBytes() {
  if (!impl_->body_scanner || !impl_->parser.is_header_done()) return true;
  if (!impl_->exempt_prefix.empty() &&
      impl_->parser.get().target().starts_with(impl_->exempt_prefix)) {
    impl_->body_scanner.reset();  // decided once, from the head
    return true;
  }
  const std::string& body = impl_->parser.get().body();
  if (body.size() == impl_->body_scanned) return true;
  Status shape = impl_->body_scanner->Feed(std::string_view(body).substr(impl_->body_scanned));
  impl_->body_scanned = body.size();
  if (shape.ok()) return true;
  refusal_ = std::move(shape);
  return false;
}

bool RequestParser::TakeContinueRequest() {
  if (state_ != ParseState::kNeedMoreBytes || impl_->continue_answered ||
      !impl_->parser.is_header_done() || !impl_->parser.get().body().empty()) {
    return false;
  }
  const auto expect = impl_->parser.get()[bhttp::field::expect];
  if (!boost::beast::iequals(expect, "100-continue")) return false;
  impl_->continue_answered = true;
  return true;
}

void RequestParser::FeedEndOfStream() {
  if (state_ != ParseState::kNeedMoreBytes || !started()) return;
  boost::beast::error_code ec;
  impl_->parser.put_eof(ec);
  // A request's length is always in its head (Content-Length, chunks, or no body), so the end of
  // the stream can never be what completes one.
  state_ = !ec && impl_->parser.is_done() ? ParseState::kComplete : ParseState::kMalformed;
}

bool RequestParser::started() const { return impl_->parser.got_some(); }

bool RequestParser::keep_alive() const {
  return state_ == ParseState::kComplete && impl_->parser.get().keep_alive();
}

Request RequestParser::TakeRequest(const std::string& remote_address) {
  bhttp::request<bhttp::string_body> raw = impl_->parser.release();
  Request request;
  request.method = std::string(raw.method_string());
  request.target = std::string(raw.target());
  const std::string_view target = raw.target();
  const size_t question = target.find('?');
  request.path = PercentDecode(target.substr(0, question));
  if (question != std::string_view::npos) request.query = ParseQuery(target.substr(question + 1));
  for (const auto& field : raw) {
    request.headers[AsciiLower(std::string(field.name_string()))] = std::string(field.value());
  }
  request.body = std::move(raw.body());  // a body may be 100 MB: never copied
  request.remote_address = remote_address;
  return request;
}

ParsedRequest ParseRequest(std::string_view bytes, const RequestLimits& limits) {
  RequestParser parser(limits);
  ParsedRequest parsed;
  parsed.consumed = parser.Feed(bytes);
  parser.FeedEndOfStream();
  parsed.state = parser.state();
  if (parsed.state == ParseState::kComplete) {
    parsed.keep_alive = parser.keep_alive();
    parsed.request = parser.TakeRequest("");
  }
  return parsed;
}

}  // namespace cairn::net
