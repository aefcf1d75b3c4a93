#include "base/document_limits.h"

#include <cctype>
#include <cstdio>
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

Status CheckContextWithPackagesSize(int64_t context_bytes, int64_t package_bytes) {
  if (context_bytes + package_bytes <= kMaxContextWithPackagesBytes) return Status::Ok();
  constexpr double kMiB = 1024.0 * 1024.0;
  auto sized = [&](int64_t bytes) {
    char text[64];
    std::snprintf(text, sizeof text, "%lld bytes, %.1f MiB", static_cast<long long>(bytes),
                  static_cast<double>(bytes) / kMiB);
    return std::string(text);
  };
  return Status::ResourceExhausted("the model definition (" + sized(context_bytes) +
                                   ") and its packages (" + sized(package_bytes) + ") total " +
                                   sized(context_bytes + package_bytes) + ", over the " +
                                   std::to_string(kMaxContextWithPackagesBytes >> 20) + " MiB cap");
}

}  // namespace cairn
