#include "base/document_limits.h"

namespace cairn {

std::string ErrorPrefix(const std::string& what) { return what.empty() ? "" : what + ": "; }

Status CheckJsonShape(std::string_view text, const DocumentLimits& limits,
                      const std::string& what) {
  int depth = 0;
  // Every value but the first is preceded by a ',' or opens its container; counting those is a
  // bound on the values the parser would build.
  size_t values = 1;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) {
          return Status::InvalidArgument(ErrorPrefix(what) + "nested deeper than " +
                                         std::to_string(limits.max_depth) + " levels");
        }
        ++values;
        break;
      case ']':
      case '}':
        --depth;
        break;
      case ',':
        if (++values > limits.max_nodes) {
          return Status::InvalidArgument(ErrorPrefix(what) + "more than " +
                                         std::to_string(limits.max_nodes) + " values");
        }
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

Result<nlohmann::json> ParseJsonDocument(std::string_view text, const DocumentLimits& limits,
                                         const std::string& what) {
  if (text.size() > limits.max_bytes) {
    return Status::InvalidArgument(ErrorPrefix(what) + "larger than " +
                                   std::to_string(limits.max_bytes) + " bytes");
  }
  CAIRN_RETURN_IF_ERROR(CheckJsonShape(text, limits, what));
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return Status::InvalidArgument("malformed JSON " + what);
  return value;
}

}  // namespace cairn
