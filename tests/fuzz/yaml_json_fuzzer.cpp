// Fuzz target: YAML (or JSON) text as every configuration arrives (base/yaml_json.h). Beyond not
// crashing, what the header promises: a document read as JSON and written back as YAML reads
// back the same, and its YAML node tree built directly from the JSON reads back the same too.
#include <string>
#include <string_view>

#include "base/yaml_json.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// Whether `utf8` may hold one of Unicode's 66 noncharacters, which yaml-cpp's emitter writes as
// U+FFFD in a quoted string (base/yaml_json.h): U+xFFFE and U+xFFFF, whose encodings end in a byte
// whose low bits are all set, then BF, then BE or BF; and U+FDD0 to U+FDEF, EF B7 90 to EF B7 AF
// (missed here until the fuzzer wrote back U+FDD4 as U+FFFD). Anything else that matches only makes
// the check skip an input.
bool MayHoldNoncharacter(std::string_view utf8) {
  for (size_t i = 0; i + 2 < utf8.size(); ++i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(utf8[i + k]); };
    if ((byte(0) & 0x0F) == 0x0F && byte(1) == 0xBF && (byte(2) == 0xBE || byte(2) == 0xBF)) {
      return true;
    }
    if (byte(0) == 0xEF && byte(1) == 0xB7 && byte(2) >= 0x90 && byte(2) <= 0xAF) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)cairn::LoadYaml(text, "fuzz");
  auto json = cairn::YamlTextToJson(text, "fuzz");
  if (!json.ok()) return 0;
  // The promises are about JSON values, whose strings are UTF-8; YAML lets bytes through
  // (and the emitter writes U+FFFD for them).
  std::string dumped;
  try {
    dumped = json->dump();
  } catch (const nlohmann::json::type_error&) {
    return 0;
  }

  const std::string written = cairn::JsonToYamlText(*json);
  auto reread = cairn::YamlTextToJson(written, "rewritten");
  // Exceptions by design: aliases expand when read, so the text written back can outgrow the
  // size limit the original was within; a null document reads as an empty map; noncharacters.
  if (written.size() <= cairn::DocumentLimits{}.max_bytes && !json->is_null()) {
    FUZZ_CHECK(reread.ok());
    FUZZ_CHECK(*reread == *json || MayHoldNoncharacter(dumped));
  }

  const nlohmann::json unordered = *json;
  auto node = cairn::JsonToYamlNode(unordered, "fuzz");
  FUZZ_CHECK(node.ok());
  auto from_node = cairn::YamlNodeToJson(*node, "");
  FUZZ_CHECK(from_node.ok());
  FUZZ_CHECK(nlohmann::json(*from_node) == unordered);
  return 0;
}
