// Cairn's one error vocabulary. Every fallible function returns a Status or a Result<T>;
// api/ maps the codes to HTTP once. It lives in base/, the bottom layer, so that every
// module can use it.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace cairn {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller sent something malformed (HTTP 400)
  kNotFound,            // the named entity does not exist (404)
  kAlreadyExists,       // a create collided with an existing entity (409)
  kFailedPrecondition,  // valid request, wrong state for it (409/400)
  kUnauthenticated,     // no or bad credentials (401)
  kPermissionDenied,    // known caller, not allowed (403)
  kResourceExhausted,   // too big, too many (413/429)
  kNotSupported,        // a feature Cairn does not have yet (501)
  kUnavailable,         // a dependency (log, broker) is down; retry may help (503)
  kDeadlineExceeded,    // a wait ran out (504)
  kCorruption,          // stored data failed a check
  kIOError,             // the OS refused a read or write
  kInternal,            // a bug
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Unauthenticated(std::string m) {
    return {StatusCode::kUnauthenticated, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none. Never holds an OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "a Result is built from an error Status only");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace cairn

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define CAIRN_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::cairn::Status cairn_status_ = (expr);        \
    if (!cairn_status_.ok()) return cairn_status_; \
  } while (0)

#define CAIRN_CONCAT_INNER(a, b) a##b
#define CAIRN_CONCAT(a, b) CAIRN_CONCAT_INNER(a, b)
// Declares `lhs` from a Result, or returns its Status from the enclosing function.
#define CAIRN_ASSIGN_OR_RETURN(lhs, expr) \
  CAIRN_ASSIGN_OR_RETURN_IMPL(CAIRN_CONCAT(cairn_result_, __LINE__), lhs, expr)
#define CAIRN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
