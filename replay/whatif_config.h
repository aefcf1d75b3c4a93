// The configuration `cairn replay whatif --config FILE` simulates under: a master.yaml's resource
// pools and schedulers, read by the master's own parser (commands/agents/pools_config.h), plus an
// optional `whatif.jobs` list that gives matching jobs another priority or weight. Pure: text in,
// configuration out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"

namespace cairn::replay {

// One entry of `whatif.jobs`: the jobs of `user` and/or `workspace` (every job when neither is
// set) take this priority and/or weight instead of the recorded one, at submission and after
// every recorded queue change.
struct WhatIfJobRule {
  std::string user;       // "" = any user
  std::string workspace;  // a workspace's name; "" = any workspace
  std::optional<int32_t> priority;
  std::optional<double> weight;
};

struct WhatIfConfig {
  std::string source;                     // the file, for the report
  events::ResourcePoolsConfigured pools;  // as a master started with the file would record them
  std::vector<WhatIfJobRule> job_rules;   // in the file's order; a later match wins
};

// Reads `resource_manager`, `resource_pools`, `scheduler` and `task_container_defaults` exactly
// as the master does (so a master.yaml can be given as it is; its other keys are not read), and
// `whatif`. Errors name `source`, the line and the field.
Result<WhatIfConfig> ParseWhatIfConfig(const std::string& yaml_text, const std::string& source);

}  // namespace cairn::replay
