// Fuzz target: configuration templates (commands/templates/template_merge.h) as the experiment
// handler uses them: the input is a template's text, a NUL byte, then an experiment
// configuration's text. The template is checked as `det template set` would, the configuration's
// template name read, the two merged, and the merge parsed as the experiment's configuration.
#include <string>
#include <string_view>

#include "base/encoding.h"
#include "commands/experiments/experiment_config.h"
#include "commands/templates/template_merge.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t separator = input.find('\0');
  if (separator == std::string_view::npos) return 0;
  const std::string template_text(input.substr(0, separator));
  const std::string config_text(input.substr(separator + 1));
  // Both arrive as strings of a JSON body.
  if (!cairn::IsValidUtf8(template_text) || !cairn::IsValidUtf8(config_text)) return 0;

  (void)cairn::templates::CheckTemplate(template_text);
  (void)cairn::templates::TemplateNameOf(config_text);
  auto merged = cairn::templates::ApplyTemplate(template_text, config_text);
  if (!merged.ok()) return 0;
  auto config = cairn::experiments::ParseExperimentConfig(*merged);
  if (config.ok()) (void)config->effective.dump();
  return 0;
}
