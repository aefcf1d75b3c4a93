// The resource pools of master.yaml: the current format (resource_manager + resource_pools) or
// the legacy one (a top-level scheduler, one pool "default"), and task_container_defaults,
// cluster-wide and per pool (the preemption timeout, and the container fields applied by
// commands/tasks/task_container_defaults.h). The rules are stated in master/master_config.h.
// Pure, and here rather than in master/ because the master and `cairn replay whatif`
// (replay/whatif_config.h) read pools with this one parser.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "base/status.h"
#include "events.pb.h"

namespace cairn::commands {

// The pools of the document `root`; `source` names it in errors.
Result<events::ResourcePoolsConfigured> ParsePools(const std::string& source,
                                                   const YAML::Node& root);

}  // namespace cairn::commands
