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

// A body stored as its bytes arrive (Beast's string_body reserves the declared length up front,
// before anyone knows who is sending it), within a limit set once the head is admitted, each
// byte counted against the budget shared by every connection.
struct GrowingBody {
  struct value_type {
    std::string bytes;
    size_t limit = 0;
    BodyBudget* budget = nullptr;
    size_t* charged = nullptr;  // the bytes taken from `budget`, given back by the parser
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(bhttp::header<isRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>& length, boost::beast::error_code& ec) {
      ec = {};
      if (length && *length > body_.limit) ec = bhttp::error::body_limit;
    }

    template <class ConstBufferSequence>
    size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      const size_t extra = boost::beast::buffer_bytes(buffers);
      if (extra > body_.limit - body_.bytes.size()) {
        ec = bhttp::error::body_limit;
        return 0;
      }
      if (body_.budget != nullptr) {
        if (!body_.budget->Take(extra)) {
          ec = bhttp::error::buffer_overflow;
          return 0;
        }
        *body_.charged += extra;
      }
      ec = {};
      for (auto buffer : boost::beast::buffers_range_ref(buffers)) {
        body_.bytes.append(static_cast<const char*>(buffer.data()), buffer.size());
      }
      return extra;
    }

    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

namespace {

Request RequestOfHead(const bhttp::request_header<>& head, const std::string& remote_address) {
  Request request;
  request.method = std::string(head.method_string());
  request.target = std::string(head.target());
  const std::string_view target = head.target();
  const size_t question = target.find('?');
  request.path = PercentDecode(target.substr(0, question));
  if (question != std::string_view::npos) request.query = ParseQuery(target.substr(question + 1));
  for (const auto& field : head) {
    request.headers[AsciiLower(std::string(field.name_string()))] = std::string(field.value());
  }
  request.remote_address = remote_address;
  return request;
}

}  // namespace

bool BodyBudget::Take(size_t bytes) {
  size_t held = held_.load(std::memory_order_relaxed);
  do {
    if (bytes > cap_ || held > cap_ - bytes) return false;
  } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  return true;
}

struct RequestParser::Impl {
  ~Impl() {
    if (budget != nullptr) budget->Give(charged);
  }
  bhttp::request_parser<GrowingBody> parser;
  HeadAdmission admit_head;
  size_t max_body_bytes = 0;
  BodyBudget* budget = nullptr;
  size_t charged = 0;
  std::string remote_address;
  size_t max_header_bytes = 0;
  // The head's bytes consumed so far: Beast checks its header limit against each call's input
  // alone, so a head sent in pieces it consumes line by line would have no limit at all.
  size_t head_bytes = 0;
  std::optional<Request> head;  // once the head is complete; the request's head, never trailers
  size_t head_fields = 0;
  std::optional<JsonShapeScanner> body_scanner;
  size_t body_scanned = 0;  // bytes of the body already given to body_scanner
  bool continue_answered = false;
  std::string exempt_prefix;  // RequestLimits::body_shape_exempt_prefix
};

RequestParser::RequestParser(const RequestLimits& limits, std::string remote_address)
    : impl_(std::make_unique<Impl>()) {
  // Not eager until the head is admitted: put() stops at the end of the head, so no body byte is
  // stored for a request that will be refused. Beast's own limit is the absolute one; the
  // admitted limit is GrowingBody's.
  impl_->parser.eager(false);
  impl_->parser.body_limit(limits.max_body_bytes);
  impl_->parser.header_limit(static_cast<uint32_t>(
      std::min<size_t>(limits.max_header_bytes, std::numeric_limits<uint32_t>::max())));
  if (limits.body_shape) impl_->body_scanner.emplace(*limits.body_shape, "body");
  impl_->exempt_prefix = limits.body_shape_exempt_prefix;
  impl_->admit_head = limits.admit_head;
  impl_->max_body_bytes = limits.max_body_bytes;
  impl_->budget = limits.budget;
  impl_->remote_address = std::move(remote_address);
  impl_->max_header_bytes = limits.max_header_bytes;
}

RequestParser::~RequestParser() = default;

size_t RequestParser::Feed(std::string_view bytes) {
  if (state_ != ParseState::kNeedMoreBytes || bytes.empty()) return 0;
  if (impl_->head) return FeedBody(bytes);
  const size_t used = Put(bytes);
  impl_->head_bytes += used;
  const size_t unconsumed = bytes.size() - used;
  if (!impl_->parser.is_header_done()) {
    if (state_ == ParseState::kNeedMoreBytes &&
        impl_->head_bytes + unconsumed > impl_->max_header_bytes) {
      state_ = ParseState::kHeaderTooLarge;
    }
    return used;
  }
  if (impl_->head_bytes > impl_->max_header_bytes) {
    state_ = ParseState::kHeaderTooLarge;
    return used;
  }
  const auto& head = impl_->parser.get().base();
  impl_->head = RequestOfHead(head, impl_->remote_address);
  impl_->head_fields = static_cast<size_t>(std::distance(head.begin(), head.end()));
  if (state_ != ParseState::kNeedMoreBytes) return used;  // no body, or refused
  if (!AdmitBody()) return used;
  return used + FeedBody(bytes.substr(used));
}

size_t RequestParser::FeedBody(std::string_view bytes) {
  const size_t used = Put(bytes);
  if (state_ != ParseState::kNeedMoreBytes && state_ != ParseState::kComplete) return used;
  // A body's bytes are consumed as they arrive: what waits unconsumed is a chunk's size line or
  // trailers, which need no more room than a head.
  if (state_ == ParseState::kNeedMoreBytes && bytes.size() - used > impl_->max_header_bytes) {
    state_ = ParseState::kHeaderTooLarge;
  } else if (impl_->parser.chunked()) {
    // Trailers would arrive after the head was admitted, and could stand in for its fields.
    const auto& fields = impl_->parser.get().base();
    if (static_cast<size_t>(std::distance(fields.begin(), fields.end())) != impl_->head_fields) {
      state_ = ParseState::kMalformed;
    }
  }
  return used;
}

size_t RequestParser::Put(std::string_view bytes) {
  if (bytes.empty()) return 0;
  boost::beast::error_code ec;
  const size_t used = impl_->parser.put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
  if (ec == bhttp::error::header_limit) {
    state_ = ParseState::kHeaderTooLarge;
  } else if (ec == bhttp::error::body_limit) {
    state_ = ParseState::kBodyTooLarge;
  } else if (ec == bhttp::error::buffer_overflow) {
    state_ = ParseState::kBudgetExhausted;
  } else if (ec && ec != bhttp::error::need_more) {
    state_ = ParseState::kMalformed;
  } else if (!ScanNewBodyBytes()) {
    state_ = ParseState::kBodyRefused;
  } else if (impl_->parser.is_done()) {
    state_ = ParseState::kComplete;
  }
  return used;
}

bool RequestParser::AdmitBody() {
  size_t limit = impl_->max_body_bytes;
  if (impl_->admit_head) {
    BodyAdmission admission = impl_->admit_head(*impl_->head);
    if (admission.refusal) {
      head_refusal_ = std::move(admission.refusal);
      state_ = ParseState::kHeadRefused;
      return false;
    }
    limit = std::min(limit, admission.max_body_bytes);
  }
  GrowingBody::value_type& body = impl_->parser.get().body();
  body.limit = limit;
  body.budget = impl_->budget;
  body.charged = &impl_->charged;
  if (auto length = impl_->parser.content_length(); length && *length > limit) {
    state_ = ParseState::kBodyTooLarge;
    return false;
  }
  impl_->parser.eager(true);
  return true;
}

Response RequestParser::TakeHeadRefusal() {
  Response refusal = head_refusal_ ? std::move(*head_refusal_) : Response{};
  head_refusal_.reset();
  return refusal;
}

bool RequestParser::ScanNewBodyBytes() {
  if (!impl_->body_scanner || !impl_->parser.is_header_done()) return true;
  if (!impl_->exempt_prefix.empty() &&
      impl_->parser.get().target().starts_with(impl_->exempt_prefix)) {
    impl_->body_scanner.reset();  // decided once, from the head
    return true;
  }
  const std::string& body = impl_->parser.get().body().bytes;
  if (body.size() == impl_->body_scanned) return true;
  Status shape = impl_->body_scanner->Feed(std::string_view(body).substr(impl_->body_scanned));
  impl_->body_scanned = body.size();
  if (shape.ok()) return true;
  refusal_ = std::move(shape);
  return false;
}

bool RequestParser::TakeContinueRequest() {
  if (state_ != ParseState::kNeedMoreBytes || impl_->continue_answered ||
      !impl_->parser.is_header_done() || !impl_->parser.get().body().bytes.empty()) {
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

Request RequestParser::TakeRequest() {
  Request request = std::move(*impl_->head);
  request.body = std::move(impl_->parser.get().body().bytes);  // up to 100 MB: never copied
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
    parsed.request = parser.TakeRequest();
  }
  return parsed;
}

}  // namespace cairn::net
