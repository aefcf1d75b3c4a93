// Fuzz target: a JSON request body as every handler reads it (ParseJsonDocument,
// base/document_limits.h), whose pre-scan refuses a document too deep, too big or with a string
// too long before it is built. What it accepts must be within those limits; small limits here,
// so that the fuzzer reaches them.
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/document_limits.h"
#include "base/json_shape_scanner.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

constexpr cairn::DocumentLimits kLimits{/*max_bytes=*/4096, /*max_depth=*/8, /*max_nodes=*/64,
                                        /*max_string_bytes=*/16, /*large_string_key=*/"content"};

struct Shape {
  int depth = 0;
  size_t nodes = 0;
  bool long_string_elsewhere = false;  // a string over the limit, not the large key's value
};

void Measure(const nlohmann::json& value, int depth, bool is_large_key_value, Shape& shape) {
  ++shape.nodes;
  if (value.is_structured()) shape.depth = std::max(shape.depth, depth);
  if (value.is_string() && value.get_ref<const std::string&>().size() > kLimits.max_string_bytes &&
      !is_large_key_value) {
    shape.long_string_elsewhere = true;
  }
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      Measure(child, depth + 1, key == kLimits.large_string_key, shape);
    }
  } else if (value.is_array()) {
    for (const auto& child : value) Measure(child, depth + 1, false, shape);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The server scans a body in the pieces it reads: cut anywhere, the verdict is the same.
  const cairn::Status whole = cairn::CheckJsonShape(text, kLimits, "body");
  if (size > 0) {
    const size_t cuts[] = {data[0] % size, size / 3, size / 2 + data[size - 1] % (size / 2 + 1)};
    cairn::JsonShapeScanner scanner(kLimits, "body");
    size_t from = 0;
    cairn::Status pieces;
    for (size_t cut : cuts) {
      if (cut < from || !pieces.ok()) continue;
      pieces = scanner.Feed(text.substr(from, cut - from));
      from = cut;
    }
    if (pieces.ok()) pieces = scanner.Feed(text.substr(from));
    FUZZ_CHECK(pieces.message() == whole.message());
  }
  auto document = cairn::ParseJsonDocument(text, kLimits, "body");
  if (!document.ok()) return 0;
  Shape shape;
  Measure(*document, 1, false, shape);
  FUZZ_CHECK(shape.depth <= kLimits.max_depth);
  // The pre-scan counts commas, checked as it meets them: the containers opened after the last
  // one, at most max_depth of them, may go past the limit.
  FUZZ_CHECK(shape.nodes <= kLimits.max_nodes + static_cast<size_t>(kLimits.max_depth));
  FUZZ_CHECK(!shape.long_string_elsewhere);
  return 0;
}
