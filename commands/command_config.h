// A command's configuration as Determined's `det cmd run` sends it (`config` of POST
// /api/v1/commands): entrypoint, description, resources, environment variables, work_dir. Read
// with base/fields.h; what Cairn does not have is refused by name. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "commands/commands.h"

namespace cairn::commands {

struct CommandConfig {
  events::TaskSpec spec;        // entrypoint, description, environment, work_dir, preemptible
  events::Resources resources;  // slots (default 1), priority, weight, max_slots, pool
  // What the user asked for, in Determined's shape, shown back as the command's config.
  nlohmann::json effective;
};

// `config` is the JSON object of the request; errors name the field ("config.resources.slots").
Result<CommandConfig> ParseCommandConfig(const nlohmann::json& config);

}  // namespace cairn::commands
