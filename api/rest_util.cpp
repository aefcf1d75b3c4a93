#include "api/rest_util.h"

#include <charconv>
#include <climits>

namespace cairn {

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

http::Response Error(const Status& status) {
  http::Response response;
  response.status = HttpStatus(status.code());
  response.body = json{
      {"code", GrpcCode(status.code())},
      {"message", status.message()},
      {"details",
       json::array()}}.dump();
  return response;
}

http::Response Ok(const json& body, std::optional<uint64_t> offset) {
  http::Response response;
  response.body = body.dump();
  if (offset) response.headers.emplace_back("Cairn-Offset", std::to_string(*offset));
  return response;
}

Result<json> ParseBody(const http::Request& request, bool allow_empty) {
  if (request.body.empty()) {
    if (allow_empty) return json::object();
    return Status::InvalidArgument("a JSON body is required");
  }
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return Status::InvalidArgument("malformed JSON body");
  if (!body.is_object()) return Status::InvalidArgument("the JSON body must be an object");
  return body;
}

bool Present(const json& object, const char* key) {
  return object.contains(key) && !object.at(key).is_null();
}

Result<std::string> GetString(const json& object, const char* key, const std::string& path,
                              bool required) {
  if (!Present(object, key)) {
    if (required) return Status::InvalidArgument(path + " is required");
    return std::string();
  }
  if (!object.at(key).is_string()) return Status::InvalidArgument(path + " must be a string");
  return object.at(key).get<std::string>();
}

Result<std::optional<int64_t>> GetInt(const json& object, const char* key,
                                      const std::string& path) {
  if (!Present(object, key)) return std::optional<int64_t>();
  const json& value = object.at(key);
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX) {
      return Status::InvalidArgument(path + " is out of range");
    }
    return std::optional<int64_t>(value.get<int64_t>());
  }
  if (value.is_number_float()) {
    double number = value.get<double>();
    if (number >= -9.2e18 && number <= 9.2e18 &&
        number == static_cast<double>(static_cast<int64_t>(number))) {
      return std::optional<int64_t>(static_cast<int64_t>(number));
    }
  }
  if (value.is_string()) {  // grpc-gateway sends int64 as strings
    const std::string& text = value.get_ref<const std::string&>();
    int64_t parsed = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty()) {
      return std::optional<int64_t>(parsed);
    }
  }
  return Status::InvalidArgument(path + " must be an integer");
}

// An integer that must fit the int32 fields of Cairn's events.
Result<std::optional<int32_t>> GetInt32(const json& object, const char* key,
                                        const std::string& path) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> value, GetInt(object, key, path));
  if (!value) return std::optional<int32_t>();
  if (*value < INT32_MIN || *value > INT32_MAX) {
    return Status::InvalidArgument(path + " is out of range");
  }
  return std::optional<int32_t>(static_cast<int32_t>(*value));
}

Status CheckKnownKeys(const json& object, const std::string& path,
                      const std::set<std::string>& known,
                      const std::set<std::string>& not_supported) {
  for (const auto& [key, value] : object.items()) {
    if (known.count(key)) continue;
    std::string full = path.empty() ? key : path + "." + key;
    if (not_supported.count(key)) {
      return Status::NotSupported(full + " is not supported by Cairn yet");
    }
    return Status::InvalidArgument("unknown field " + full);
  }
  return Status::Ok();
}

Result<Paging> ReadPaging(const http::Request& request) {
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

std::vector<std::string> Segments(const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) parts.push_back(http::PercentDecode(path.substr(start, slash - start)));
    start = slash + 1;
  }
  return parts;
}

bool MatchesRoute(const std::vector<std::string>& parts, std::initializer_list<const char*> route) {
  if (parts.size() != route.size()) return false;
  size_t i = 0;
  for (const char* expected : route) {
    if (std::string(expected) != "*" && parts[i] != expected) return false;
    ++i;
  }
  return true;
}

http::Response MethodNotAllowed(const http::Request& request) {
  http::Response response = Error(
      Status::InvalidArgument("method " + request.method + " is not allowed on " + request.path));
  response.status = 405;
  return response;
}

}  // namespace cairn
