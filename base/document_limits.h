// What one document a caller sends may cost, so that a hostile or mistaken request cannot exhaust
// the master: its size, its nesting, and the values it expands to (YAML anchors and aliases can
// make a short text stand for an exponential tree: "billion laughs"). Every parser Cairn runs on
// outside input (base/yaml_json.h for YAML configs, ParseJsonDocument for JSON bodies) checks these
// before it builds anything large, and refuses with InvalidArgument naming the limit, which the
// REST layer answers as 400. Pure functions, safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

struct DocumentLimits {
  size_t max_bytes = size_t{1} << 20;  // one config or template
  int max_depth = 64;                  // Determined's deepest config nests about 6 levels
  size_t max_nodes = 100'000;          // values after alias expansion
  // JSON only: the longest string value, except values of the key `large_string_key`.
  size_t max_string_bytes = size_t{1} << 20;
  std::string_view large_string_key = {};
};

// A request body: it may carry a whole uploaded context (base64 file "content"s inside the JSON),
// so its size is bounded by the server's body limit instead; but not its shape, and no other
// string in it may be larger than a config may be. Refusing those in the pre-scan costs far less
// than parsing them would (docs/benchmarks.md, "HTTP edge").
inline constexpr DocumentLimits kRequestBodyLimits{~size_t{0}, 64, 2'000'000, size_t{1} << 20,
                                                   "content"};

// Scans JSON text without building it: refuses (InvalidArgument, prefixed by `what`) text nested
// deeper than limits.max_depth, holding more than limits.max_nodes values, or a string (key or
// value) longer than limits.max_string_bytes (but for large_string_key's value). Linear, no
// allocation, so a 100k-deep document costs microseconds. Leaves syntax errors to the parser.
// The same check over text that arrives in pieces: base/json_shape_scanner.h.
Status CheckJsonShape(std::string_view text, const DocumentLimits& limits, const std::string& what);

// Scans YAML text for flow collections ("[[[[...") nested deeper than limits.max_depth, skipping
// quoted scalars and comments, so that such a document is refused before the YAML parser recurses
// into it. Brackets inside plain scalars may be counted too, and so may those of a quoted scalar
// after a plain one that holds a double quote (every '"' is taken to open or close a quoted
// scalar): a false refusal needs 64 of them unclosed on the way, which no configuration has.
// JsonToYamlText (base/yaml_json.h) quotes every string with a bracket, a brace or a double quote,
// so what it writes is never refused.
Status CheckYamlFlowDepth(std::string_view text, const DocumentLimits& limits,
                          const std::string& what);

// Parses a JSON document within `limits` (size, depth, values). `what` names it in errors
// ("body"). Malformed text is InvalidArgument "malformed JSON <what>".
Result<nlohmann::json> ParseJsonDocument(std::string_view text, const DocumentLimits& limits,
                                         const std::string& what);

// "what: " or "" when `what` is empty: the prefix of every refusal.
std::string ErrorPrefix(const std::string& what);

// PEDL's cap on an experiment's model definition and its local packages together (`--package`
// uploads): checked by the master (events/context_store.h AddPackages) and, before uploading, by
// `cairn experiment create`.
inline constexpr int64_t kMaxContextWithPackagesBytes = 96ll * 1024 * 1024;
// ResourceExhausted naming both sizes and their total when they exceed the cap.
Status CheckContextWithPackagesSize(int64_t context_bytes, int64_t package_bytes);

}  // namespace cairn
