// Fuzz target: YAML (or JSON) text as every configuration arrives (base/yaml_json.h). Beyond not
// crashing, what the header promises: a document read as JSON and written back as YAML reads
// back the same, and its YAML node tree built directly from the JSON reads back the same too.
#include <string>

#include "base/yaml_json.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)cairn::LoadYaml(text, "fuzz");
  auto json = cairn::YamlTextToJson(text, "fuzz");
  if (!json.ok()) return 0;
  // The promises are about JSON values, whose strings are UTF-8; YAML lets bytes through
  // (and the emitter writes U+FFFD for them).
  try {
    (void)json->dump();
  } catch (const nlohmann::json::type_error&) {
    return 0;
  }

  const std::string written = cairn::JsonToYamlText(*json);
  auto reread = cairn::YamlTextToJson(written, "rewritten");
  // Aliases expand when read, so the text written back can outgrow the size limit that the
  // original text was within; that one refusal is expected.
  if (written.size() <= cairn::YamlLimits{}.max_bytes) {
    FUZZ_CHECK(reread.ok());
    FUZZ_CHECK(*reread == *json);
  }

  const nlohmann::json unordered = *json;
  auto node = cairn::JsonToYamlNode(unordered, "fuzz");
  FUZZ_CHECK(node.ok());
  auto from_node = cairn::YamlNodeToJson(*node, "");
  FUZZ_CHECK(from_node.ok());
  FUZZ_CHECK(nlohmann::json(*from_node) == unordered);
  return 0;
}
