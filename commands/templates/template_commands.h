// The templates room's commands: save (create or update) and delete a configuration template.
// Decided by commands/templates/template_decider.h.
#pragma once

#include <cstdint>
#include <string>

#include "events/workspace_defaults.h"

namespace cairn::commands {

struct SaveTemplate {
  static constexpr const char* kName = "SaveTemplate";
  enum class Mode { kCreate, kUpdate };
  std::string name;
  std::string config_yaml;
  int32_t workspace_id = kUncategorizedWorkspace;
  Mode mode = Mode::kCreate;
};

struct DeleteTemplate {
  static constexpr const char* kName = "DeleteTemplate";
  std::string name;
};

}  // namespace cairn::commands
