// What a cluster has when its configuration says nothing: Determined's defaults for pools and
// priorities. Shared by the write side (decision state), the read side (pools projection) and
// the master's configuration parser, so all three agree on a log with no ResourcePoolsConfigured.
#pragma once

#include <cstdint>

#include "events.pb.h"

namespace cairn {

// Determined's default priority; lower numbers are more important.
inline constexpr int32_t kDefaultPriority = 42;
// Zero-slot (aux) containers one agent may run at once (Determined's default).
inline constexpr int32_t kMaxZeroSlotContainersPerAgent = 100;
inline constexpr const char* kDefaultPool = "default";

// One pool, "default" (fair share, best fit, 100 aux containers per agent), the default for
// compute and aux tasks; a 3600 s preemption grace period; source "defaults".
events::ResourcePoolsConfigured DefaultPoolsConfig();

}  // namespace cairn
