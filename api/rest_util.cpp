#include "api/rest_util.h"

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

}  // namespace cairn
