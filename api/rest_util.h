// Internal to the REST layer: one mapping from Status to HTTP and grpc-gateway's error shape, and
// the request-body, paging and path helpers every endpoint file shares.
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

// {"code": <grpc code>, "message": ..., "details": []} with the matching HTTP status.
http::Response Error(const Status& status);
// 200 with `body`; `offset` goes to the Cairn-Offset header.
http::Response Ok(const nlohmann::json& body, std::optional<uint64_t> offset = std::nullopt);

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

// ?offset=&limit= (limit 0 = all).
struct Paging {
  size_t offset = 0;
  size_t limit = 0;
};
Result<Paging> ReadPaging(const http::Request& request);

// One page of `items` and Determined's pagination object for it.
template <typename T>
std::pair<std::vector<T>, nlohmann::json> Page(std::vector<T> items, const Paging& paging) {
  size_t total = items.size();
  size_t start = std::min(paging.offset, total);
  size_t end = paging.limit == 0 ? total : std::min(total, start + paging.limit);
  std::vector<T> page(std::make_move_iterator(items.begin() + start),
                      std::make_move_iterator(items.begin() + end));
  nlohmann::json pagination = {{"offset", paging.offset},
                               {"limit", paging.limit},
                               {"startIndex", start},
                               {"endIndex", end},
                               {"total", total}};
  return {std::move(page), pagination};
}

// Whether `parts` (from Segments) matches `route`, where "*" matches any one segment.
bool MatchesRoute(const std::vector<std::string>& parts, std::initializer_list<const char*> route);
// 405 naming the method and path.
http::Response MethodNotAllowed(const http::Request& request);

// Splits the raw target "/api/v1/tasks/x/logs?follow=true" into decoded segments
// {"api","v1","tasks","x","logs"}; an escaped slash stays inside its segment.
std::vector<std::string> Segments(const std::string& target);

}  // namespace cairn
