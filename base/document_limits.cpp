#include "base/document_limits.h"

#include <cctype>
#include <cstring>

namespace cairn {

std::string ErrorPrefix(const std::string& what) { return what.empty() ? "" : what + ": "; }

Status CheckJsonShape(std::string_view text, const DocumentLimits& limits,
                      const std::string& what) {
  int depth = 0;
  // Every value but the first is preceded by a ',' or opens its container; counting those is a
  // bound on the values the parser would build.
  size_t values = 1;
  std::string_view last_key;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '"': {
        // To the closing quote: memchr runs far faster than a loop over a long string.
        const size_t start = i + 1;
        size_t end = start;
        while (true) {
          const void* quote = std::memchr(text.data() + end, '"', text.size() - end);
          if (quote == nullptr) return Status::Ok();  // unterminated: the parser says so
          end = static_cast<size_t>(static_cast<const char*>(quote) - text.data());
          size_t backslashes = 0;
          while (end - backslashes > start && text[end - backslashes - 1] == '\\') ++backslashes;
          if (backslashes % 2 == 0) break;
          ++end;
        }
        i = end;
        size_t next = end + 1;
        while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
        const std::string_view string = text.substr(start, end - start);
        if (next < text.size() && text[next] == ':') {
          last_key = string;
        } else if (string.size() > limits.max_string_bytes &&
                   (limits.large_string_key.empty() || last_key != limits.large_string_key)) {
          return Status::InvalidArgument(
              ErrorPrefix(what) + (last_key.empty() ? "a string" : std::string(last_key)) +
              ": larger than " + std::to_string(limits.max_string_bytes) + " bytes");
        }
        break;
      }
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
