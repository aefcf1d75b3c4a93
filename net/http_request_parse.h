// Bytes to a Request: the HTTP/1.1 request parsing the server does on every connection, apart
// from the socket, so that it can be tested and fuzzed on plain bytes. Beast stays inside the
// .cpp file, as for the rest of net/.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/document_limits.h"
#include "base/status.h"
#include "net/http_types.h"

namespace cairn::net {

// Bytes of request bodies held across every connection, against a cap: a body's bytes are
// counted as they arrive and given back when its parser is destroyed (after its request was
// answered). Thread-safe.
class BodyBudget {
 public:
  explicit BodyBudget(size_t cap) : cap_(cap) {}
  // False, taking nothing, when `bytes` more would pass the cap.
  bool Take(size_t bytes);
  void Give(size_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }
  size_t held() const { return held_.load(std::memory_order_relaxed); }

 private:
  const size_t cap_;
  std::atomic<size_t> held_{0};
};

struct RequestLimits {
  // The request line and the fields, however they arrive; also the most a chunk's size line
  // may wait unconsumed.
  size_t max_header_bytes = 64 * 1024;
  // The most any body may hold. A body is stored as its bytes arrive, never reserved from its
  // declared length.
  size_t max_body_bytes = 128u << 20;
  // When set, every body is taken for JSON and scanned as it arrives (base/json_shape_scanner.h):
  // one that breaks these limits is refused as soon as the bytes that break them are read.
  std::optional<DocumentLimits> body_shape;
  // Requests whose target starts with this (when not empty) are not scanned: their bodies are
  // another service's to read (the master's proxy to notebooks and TensorBoards, whose forms and
  // uploads need not be JSON). The body's size limit still holds.
  std::string_view body_shape_exempt_prefix = {};
  // Asked once a head with a body to come is complete, before a byte of the body is stored: a
  // refusal ends the request (kHeadRefused), else the body may hold at most the admitted size
  // (and max_body_bytes). Unset: every body is admitted up to max_body_bytes.
  HeadAdmission admit_head = {};
  // When set, every request's body bytes count against it; a body that would pass its cap is
  // kBudgetExhausted.
  BodyBudget* budget = nullptr;
};

enum class ParseState {
  kNeedMoreBytes,    // no complete request yet
  kComplete,         // TakeRequest() may be called
  kHeaderTooLarge,   // the server answers 431
  kBodyTooLarge,     // 413 (a Content-Length or the chunks received over the limit)
  kMalformed,        // 400: not an HTTP/1.x request, trailers, or the stream ended inside one
  kBodyRefused,      // 400: the body broke RequestLimits::body_shape; refusal() says how
  kHeadRefused,      // admit_head refused the request: TakeHeadRefusal() is the answer
  kBudgetExhausted,  // 503: the bodies held across connections reached the budget's cap
};

// Parses one request from bytes handed over as they arrive. One parser per request; not
// thread-safe.
class RequestParser {
 public:
  // `remote_address` is the client's, for the head admit_head sees and the request.
  explicit RequestParser(const RequestLimits& limits, std::string remote_address = {});
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Parses what it can of `bytes` (every byte received and not yet consumed) and returns how
  // many it consumed: the caller drops those and passes the rest again with more behind them.
  // Of an incomplete request head only whole lines are consumed. Does nothing unless state() is
  // kNeedMoreBytes.
  size_t Feed(std::string_view bytes);
  // The peer closed its end of the stream: a request begun and not complete is kMalformed.
  void FeedEndOfStream();

  ParseState state() const { return state_; }
  // Why the body was refused (kBodyRefused only).
  const Status& refusal() const { return refusal_; }
  // The answer admit_head gave (kHeadRefused only, once).
  Response TakeHeadRefusal();
  // True once, when the head is complete and asks "Expect: 100-continue" with its body still to
  // come: the server then sends "100 Continue" (curl waits a second for it before sending a body
  // over 1 KiB).
  bool TakeContinueRequest();
  // Whether any byte of a request has been parsed (then the end of the stream is an error, not
  // a client that simply left).
  bool started() const;
  // Whether the connection may carry another request after this one (kComplete only).
  bool keep_alive() const;
  // The request, path and query percent-decoded, header names lower-cased; the body is moved
  // out, not copied (kComplete only, once).
  Request TakeRequest();

 private:
  // Hands the body bytes parsed since the last call to the shape scanner; false once it refuses.
  bool ScanNewBodyBytes();
  // Once the head is complete: asks admit_head and sets the body's limit; false (with state_
  // set) when the request ends here.
  bool AdmitBody();
  // Parses `bytes` with Beast and maps its outcome onto state_; returns the bytes consumed.
  size_t Put(std::string_view bytes);
  // Put, once the head is admitted, bounding what waits unconsumed and refusing trailers.
  size_t FeedBody(std::string_view bytes);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  ParseState state_ = ParseState::kNeedMoreBytes;
  Status refusal_;
  std::optional<Response> head_refusal_;
};

// One request at the front of a buffer that holds everything the client sent before closing:
// the parser's state after Feed(bytes) and, when that is not a complete request, the end of the
// stream (so a truncated request is kMalformed; empty input stays kNeedMoreBytes).
struct ParsedRequest {
  ParseState state = ParseState::kNeedMoreBytes;
  Request request;          // kComplete only
  bool keep_alive = false;  // kComplete only
  size_t consumed = 0;      // bytes of `bytes` the request took
};
ParsedRequest ParseRequest(std::string_view bytes, const RequestLimits& limits);

}  // namespace cairn::net
