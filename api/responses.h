// The REST API's answers: one mapping from Status to HTTP and grpc-gateway's error shape
// {"code", "message", "details"}, 200s with the Cairn-Offset header, and Determined's paging.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/http_types.h"

namespace cairn::api {

// {"code": <grpc code>, "message": ..., "details": []} with the matching HTTP status.
net::Response Error(const Status& status);
// OpenPAI's error shape {"code": "<Name>Error", "message": ...} with the matching HTTP status;
// `code` "" names it by the status (InvalidParametersError, UnauthorizedUserError,
// ForbiddenUserError, NotFoundError, ConflictError, NotImplementedError, UnknownError).
net::Response OpenPaiError(const Status& status, const std::string& code = "");
// 200 with `body`; `offset` goes to the Cairn-Offset header.
net::Response Ok(const nlohmann::json& body, std::optional<uint64_t> offset = std::nullopt);
// `value` as an answer's text, the way Ok writes it (invalid UTF-8 replaced, never a throw).
std::string JsonText(const nlohmann::json& value);
// 405 naming the method and path.
net::Response MethodNotAllowed(const net::Request& request);

// ?offset=&limit= (limit 0 = all).
struct Paging {
  size_t offset = 0;
  size_t limit = 0;
};
Result<Paging> ReadPaging(const net::Request& request);

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

}  // namespace cairn::api
