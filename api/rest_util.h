// Internal to the REST layer: reading request bodies (JSON) with the field path in every error.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/http_types.h"

namespace cairn {

// Malformed JSON and wrong types are the caller's error, named precisely.
Result<nlohmann::json> ParseBody(const http::Request& request, bool allow_empty = false);
bool Present(const nlohmann::json& object, const char* key);  // there and not null
Result<std::string> GetString(const nlohmann::json& object, const char* key,
                              const std::string& path, bool required);
// Integers also as grpc-gateway's int64 strings ("12").
Result<std::optional<int64_t>> GetInt(const nlohmann::json& object, const char* key,
                                      const std::string& path);
Result<std::optional<int32_t>> GetInt32(const nlohmann::json& object, const char* key,
                                        const std::string& path);
// Unknown keys are InvalidArgument; keys Determined has and Cairn does not are NotSupported.
Status CheckKnownKeys(const nlohmann::json& object, const std::string& path,
                      const std::set<std::string>& known,
                      const std::set<std::string>& not_supported = {});

}  // namespace cairn
