// Internal to the REST layer: reading a request's JSON body. Its fields are read with the one
// toolkit (base/fields.h), re-exported here for the handlers.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/fields.h"
#include "base/status.h"
#include "net/http_types.h"

namespace cairn::api {

// Malformed JSON and a body that is not an object are the caller's error.
Result<nlohmann::json> ParseBody(const net::Request& request, bool allow_empty = false);

// A field of a body as grpc-gateway takes it: by its JSON name or its proto name; nullptr when
// absent or null.
const nlohmann::json* GatewayField(const nlohmann::json& object, const char* camel,
                                   const char* snake);

// A positive integer id from a path segment, or InvalidArgument naming `what`.
Result<int64_t> ParseId(const std::string& text, const std::string& what);
// The same for the int32 ids of users, workspaces and projects; a larger one names nothing
// (NotFound).
Result<int32_t> ParseInt32Id(const std::string& text, const std::string& what);

// A string field that may be absent (nullopt) but, when given, must be a string.
Result<std::optional<std::string>> OptionalString(const nlohmann::json& body, const char* key);
// A boolean field that may be absent (nullopt) but, when given, must be true or false.
Result<std::optional<bool>> OptionalBool(const nlohmann::json& body, const char* key);
// "labels": absent (nullopt) or a list of strings.
Result<std::optional<std::vector<std::string>>> OptionalLabels(const nlohmann::json& body);
// Query parameter `name` as a count in [min, max]; `fallback` when absent. A bad one is an
// InvalidArgument naming the range.
Result<size_t> CountParam(const net::Request& request, const std::string& name, size_t fallback,
                          size_t min, size_t max);
// Query parameter `name` as a time (RFC 3339 or unix seconds); nullopt when absent.
Result<std::optional<int64_t>> OptionalTimeParam(const net::Request& request,
                                                 const std::string& name);

using fields::CheckKnownKeys;
using fields::GetInt;
using fields::GetInt32;
using fields::GetString;
using fields::Present;

}  // namespace cairn::api
