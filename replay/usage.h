// GPU-hours per user and per workspace, folded from the log: the one definition that `cairn
// replay usage` and the example consumer without Cairn code (examples/gpu_hours) share, written
// out in docs/events.md ("GPU-hours"). An allocation is charged slots × (end − start) by its
// events' envelope times when it (or a gang's part) ends, to the user and workspace its task had
// when it was placed; allocations still running are counted, not charged. Pure: events in,
// figures out; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "events/epoch_fence.h"
#include "events/event_log.h"
#include "events/workspace_defaults.h"

namespace cairn::replay {

struct UsageTotals {
  int64_t slot_micros = 0;  // Σ slots × microseconds held, over ended allocations (and parts)
  int64_t allocations = 0;  // allocations that ended (a gang counts once, when its last part ends)
};

struct UsageReport {
  uint64_t log_end = 0;  // the events at offsets [0, log_end) were folded
  std::map<std::string, UsageTotals> by_user;
  std::map<int32_t, UsageTotals> by_workspace;
  std::map<int32_t, std::string> workspace_names;  // the latest name of each workspace charged
  int64_t open_allocations = 0;                    // placed and not ended: not charged yet
};

// slot_micros in hours: 1 slot held for 1 hour is 1 GPU-hour.
double GpuHours(int64_t slot_micros);

class UsageLedger {
 public:
  // Folds the next event of the log, in offset order (fenced events are skipped).
  void Apply(const events::Envelope& event);
  UsageReport Report() const;

 private:
  struct OpenAllocation {
    std::string allocation_id;
    std::string user;
    int32_t workspace_id = 1;
    int64_t start_micros = 0;
    std::map<std::string, int64_t> live_part_slots;  // agent id -> slots of its part
  };
  struct Task {
    std::string user;
    std::string job_id;
    bool exited = false;
    bool holds_allocation = false;
    OpenAllocation allocation;
  };

  // Charges the part of `agent_id` (every live part when empty) at `end_micros`.
  void EndParts(OpenAllocation& allocation, const std::string& agent_id, int64_t end_micros);

  EpochFence fence_;
  uint64_t log_end_ = 0;
  std::unordered_map<std::string, Task> tasks_;
  std::unordered_map<std::string, int32_t> job_workspaces_;
  // Workspace 1 exists before any event.
  std::map<int32_t, std::string> workspace_names_{{kUncategorizedWorkspace, "Uncategorized"}};
  std::map<std::string, UsageTotals> by_user_;
  std::map<int32_t, UsageTotals> by_workspace_;
  int64_t open_allocations_ = 0;
};

// The report as `cairn replay usage --format json` prints it (and examples/gpu_hours too):
// {"logEnd", "users": [{"user", "allocations", "slotMicroseconds", "gpuHours"}] by name,
//  "workspaces": [{"workspaceId", "name", ...the same}] by id, "openAllocations"}.
nlohmann::json UsageJson(const UsageReport& report);
// The same as two aligned tables.
void PrintUsageTable(const UsageReport& report, std::ostream& out);

}  // namespace cairn::replay
