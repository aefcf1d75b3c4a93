#include "base/document_limits.h"

#include <cctype>
#include <cstring>

#include "base/json_shape_scanner.h"

namespace cairn {

std::string ErrorPrefix(const std::string& what) { return what.empty() ? "" : what + ": "; }

Status CheckJsonShape(std::string_view text, const DocumentLimits& limits,
                      const std::string& what) {
  return JsonShapeScanner(limits, what).Feed(text);
}

Status CheckYamlFlowDepth(std::string_view text, const DocumentLimits& limits,
                          const std::string& what) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])))) {
      const size_t newline = text.find('\n', i);
      if (newline == std::string_view::npos) break;
      i = newline;
    } else if (c == '"') {
      while (++i < text.size() && text[i] != '"') {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '\'' && depth > 0) {
      // Only in flow context: a quote inside a block scalar ("it's") is an apostrophe.
      while (++i < text.size() && text[i] != '\'') {
      }
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth) {
        return Status::InvalidArgument(ErrorPrefix(what) + "nested deeper than " +
                                       std::to_string(limits.max_depth) + " levels");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
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
