// What a cluster has when its configuration says nothing: Determined's defaults for pools and
// priorities. Shared by the write side (decision state), the read side (pools projection) and
// the master's configuration parser, so all three agree on a log with no ResourcePoolsConfigured.
#pragma once

#include <cstdint>
#include <string>

#include "events.pb.h"
#include "events/limits.h"

namespace cairn {

// One pool, "default" (fair share, best fit, 100 aux containers per agent), the default for
// compute and aux tasks; a 3600 s preemption grace period; source "defaults".
events::ResourcePoolsConfigured DefaultPoolsConfig();

// "a, b, c": the pools of `config` by name, for messages.
std::string PoolNamesOf(const events::ResourcePoolsConfigured& config);

}  // namespace cairn
