// How `cairn replay whatif` prints its report: a table of what happened beside what would have,
// or the same figures as one JSON document for notebooks. Deterministic: groups in key order,
// fixed number formats.
#pragma once

#include <string>

#include "replay/whatif.h"

namespace cairn::replay {

// Lines of text: the window, both configurations, waits per group (all, pools, users,
// workspaces) in seconds, then finished tasks, makespan, slot utilization and preemptions.
std::string WhatIfTable(const WhatIfReport& report);

// The same figures as JSON (times in RFC 3339, durations in seconds), ending in a newline.
std::string WhatIfJson(const WhatIfReport& report);

}  // namespace cairn::replay
