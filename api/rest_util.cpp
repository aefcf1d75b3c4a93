#include "api/rest_util.h"

#include <cstdint>

#include "base/clock.h"
#include "base/document_limits.h"

namespace cairn::api {

using nlohmann::json;

const json* GatewayField(const json& object, const char* camel, const char* snake) {
  for (const char* key : {camel, snake}) {
    auto it = object.find(key);
    if (it != object.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

Result<json> ParseBody(const net::Request& request, bool allow_empty) {
  if (request.body.empty()) {
    if (allow_empty) return json::object();
    return Status::InvalidArgument("a JSON body is required");
  }
  CAIRN_ASSIGN_OR_RETURN(json body, ParseJsonDocument(request.body, kRequestBodyLimits, "body"));
  if (!body.is_object()) return Status::InvalidArgument("the JSON body must be an object");
  return body;
}

Result<int64_t> ParseId(const std::string& text, const std::string& what) {
  json holder = {{"id", text}};
  auto id = GetInt(holder, "id", what + " id");
  if (!id.ok() || !id->has_value() || **id <= 0) {
    return Status::InvalidArgument(what + " id must be a positive integer, not '" + text + "'");
  }
  return **id;
}

Result<int32_t> ParseInt32Id(const std::string& text, const std::string& what) {
  CAIRN_ASSIGN_OR_RETURN(int64_t id, ParseId(text, what));
  if (id > INT32_MAX) return Status::NotFound(what + " " + text + " not found");
  return static_cast<int32_t>(id);
}

Result<std::optional<std::string>> OptionalString(const nlohmann::json& body, const char* key) {
  if (!fields::Present(body, key)) return std::optional<std::string>();
  CAIRN_ASSIGN_OR_RETURN(std::string value, fields::GetString(body, key, key, true));
  return std::optional<std::string>(std::move(value));
}

Result<std::optional<bool>> OptionalBool(const nlohmann::json& body, const char* key) {
  if (!Present(body, key)) return std::optional<bool>();
  if (!body.at(key).is_boolean()) {
    return Status::InvalidArgument(std::string(key) + ": expected true or false");
  }
  return std::optional<bool>(body.at(key).get<bool>());
}

Result<std::optional<std::vector<std::string>>> OptionalLabels(const nlohmann::json& body) {
  if (!fields::Present(body, "labels")) return std::optional<std::vector<std::string>>();
  const nlohmann::json& labels = body.at("labels");
  if (!labels.is_array()) return Status::InvalidArgument("labels: expected a list of strings");
  std::vector<std::string> list;
  for (const auto& label : labels) {
    if (!label.is_string()) return Status::InvalidArgument("labels: expected a list of strings");
    list.push_back(label.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(list));
}

Result<size_t> CountParam(const net::Request& request, const std::string& name, size_t fallback,
                          size_t min, size_t max) {
  const std::string text = request.QueryParam(name);
  if (text.empty()) return fallback;
  if (text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(text) < min || std::stoul(text) > max) {
    return Status::InvalidArgument(name + ": expected " + std::to_string(min) + " to " +
                                   std::to_string(max));
  }
  return static_cast<size_t>(std::stoul(text));
}

Result<std::optional<int64_t>> OptionalTimeParam(const net::Request& request,
                                                 const std::string& name) {
  const std::string text = request.QueryParam(name);
  if (text.empty()) return std::optional<int64_t>();
  Result<int64_t> micros = ParseTimeToUnixMicros(text);
  if (!micros.ok()) {
    return Status::InvalidArgument(name + ": expected RFC 3339 or unix seconds, got '" + text +
                                   "'");
  }
  return std::optional<int64_t>(*micros);
}

}  // namespace cairn::api
