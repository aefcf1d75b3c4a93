#include "api/responses.h"

namespace cairn::api {

using nlohmann::json;

namespace {

int GrpcCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
      return 3;
    case StatusCode::kDeadlineExceeded:
      return 4;
    case StatusCode::kNotFound:
      return 5;
    case StatusCode::kAlreadyExists:
      return 6;
    case StatusCode::kPermissionDenied:
      return 7;
    case StatusCode::kResourceExhausted:
      return 8;
    case StatusCode::kFailedPrecondition:
      return 9;
    case StatusCode::kNotSupported:
      return 12;
    case StatusCode::kUnavailable:
      return 14;
    case StatusCode::kUnauthenticated:
      return 16;
    case StatusCode::kCorruption:
    case StatusCode::kIOError:
    case StatusCode::kInternal:
      return 13;
  }
  return 2;
}

int HttpStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kNotSupported:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kUnauthenticated:
      return 401;
    default:
      return 500;
  }
}

}  // namespace

net::Response Error(const Status& status) {
  net::Response response;
  response.status = HttpStatus(status.code());
  response.body = json{
      {"code", GrpcCode(status.code())},
      {"message", status.message()},
      {"details",
       json::array()}}.dump(-1, ' ', false, json::error_handler_t::replace);
  return response;
}

net::Response OpenPaiError(const Status& status, const std::string& code) {
  std::string name = code;
  if (name.empty()) {
    switch (status.code()) {
      case StatusCode::kInvalidArgument:
      case StatusCode::kFailedPrecondition:
        name = "InvalidParametersError";
        break;
      case StatusCode::kUnauthenticated:
        name = "UnauthorizedUserError";
        break;
      case StatusCode::kPermissionDenied:
        name = "ForbiddenUserError";
        break;
      case StatusCode::kNotFound:
        name = "NotFoundError";
        break;
      case StatusCode::kAlreadyExists:
        name = "ConflictError";
        break;
      case StatusCode::kNotSupported:
        name = "NotImplementedError";
        break;
      default:
        name = "UnknownError";
        break;
    }
  }
  net::Response response;
  response.status = HttpStatus(status.code());
  response.body = json{{"code", name}, {"message", status.message()}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
  return response;
}

std::string JsonText(const json& value) {
  // A stored string that is not UTF-8 (from before checks existed) must not turn a read into a 500.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

net::Response Ok(const json& body, std::optional<uint64_t> offset) {
  net::Response response;
  response.body = JsonText(body);
  if (offset) response.headers.emplace_back("Cairn-Offset", std::to_string(*offset));
  return response;
}

Result<Paging> ReadPaging(const net::Request& request) {
  Paging paging;
  for (const char* name : {"offset", "limit"}) {
    std::string text = request.QueryParam(name);
    if (text.empty()) continue;
    if (text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument(std::string(name) + " must be a non-negative integer");
    }
    (std::string(name) == "offset" ? paging.offset : paging.limit) = std::stoul(text);
  }
  return paging;
}

net::Response MethodNotAllowed(const net::Request& request) {
  net::Response response = Error(
      Status::InvalidArgument("method " + request.method + " is not allowed on " + request.path));
  response.status = 405;
  return response;
}

}  // namespace cairn::api
