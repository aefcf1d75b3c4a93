// Fuzz target: the `config` of POST /api/v1/commands (`det cmd run`) as its handler reads it:
// JSON, then the command configuration (commands/tasks/command_config.h). A configuration it
// accepts must get as far as the log: its effective configuration dumps as JSON (the handler stores
// that) and its task spec and resources survive a protobuf round trip (the decider writes them in
// an event).
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/document_limits.h"
#include "commands/tasks/command_config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // As the handler reads its body (api/rest_util.h).
  auto parsed = cairn::ParseJsonDocument(text, cairn::kRequestBodyLimits, "body");
  if (!parsed.ok()) return 0;
  const nlohmann::json& body = *parsed;
  auto config = cairn::commands::ParseCommandConfig(body);
  if (!config.ok()) return 0;

  (void)config->effective.dump();

  cairn::events::TaskSpec spec;
  FUZZ_CHECK(spec.ParseFromString(config->spec.SerializeAsString()));
  FUZZ_CHECK(spec.SerializeAsString() == config->spec.SerializeAsString());
  cairn::events::Resources resources;
  FUZZ_CHECK(resources.ParseFromString(config->resources.SerializeAsString()));
  FUZZ_CHECK(resources.SerializeAsString() == config->resources.SerializeAsString());
  return 0;
}
