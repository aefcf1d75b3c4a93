#include "api/rest_util.h"

#include <charconv>
#include <climits>

namespace cairn {

using nlohmann::json;

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

}  // namespace cairn
