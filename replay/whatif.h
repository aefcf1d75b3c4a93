// `cairn replay whatif`: what the recorded history would have looked like under another
// scheduler configuration, beside what really happened. A discrete-event simulation, pure
// (events in, a report out; no I/O, no clock, no randomness): the recorded submissions, queue
// changes and agent changes at their recorded times, each task's recorded run time, and the
// master's own scheduler (commands/scheduler, over a commands::DecisionState) deciding under the
// other configuration. The model and its limits are written down in README.md ("What if").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"
#include "events/epoch_fence.h"
#include "events/pool_defaults.h"
#include "replay/whatif_config.h"

namespace cairn::replay {

// The submissions simulated and counted: those at or after `from` and at or before `until`
// (unix microseconds, both inclusive; unset = unbounded). Work submitted before `from` is folded
// as recorded up to `from` and simulated as load from then on; work submitted after `until` is
// left out.
struct WhatIfWindow {
  std::optional<int64_t> from;
  std::optional<int64_t> until;
};

// The waits of one group of tasks (all of them, a pool, a user, a workspace), in microseconds.
struct WaitFigures {
  int64_t tasks = 0;    // submitted in the window
  int64_t started = 0;  // got slots at least once; the waits are over these
  // Nearest rank over the started tasks' waits (first slots minus submission); 0 when none.
  int64_t p50 = 0;
  int64_t p95 = 0;
  int64_t max = 0;
};

// One column of the report: what the log says happened, or what the simulation says would have.
struct WhatIfColumn {
  WaitFigures all;
  int64_t finished = 0;  // ended (done, failed or killed) before the log's end
  // From the window's first submission to the last end of one of its tasks (0: none ended).
  int64_t makespan = 0;
  // Over the makespan: slot-microseconds held by allocations, and of connected agents.
  int64_t busy_slot_micros = 0;
  int64_t available_slot_micros = 0;
  int64_t preemptions = 0;                     // preemption requests for the window's tasks
  std::map<std::string, WaitFigures> by_pool;  // the pool the task first ran in (else queued in)
  std::map<std::string, WaitFigures> by_user;
  std::map<int32_t, WaitFigures> by_workspace;
  // busy / available; nullopt when no agent was connected during the makespan.
  std::optional<double> utilization() const;
};

struct WhatIfReport {
  WhatIfWindow window;
  int64_t first_submission = 0;  // of the window's tasks
  int64_t last_submission = 0;
  int64_t log_end = 0;  // the last event's time: nothing is known after it
  uint64_t events = 0;  // events read
  std::string config_source;
  events::ResourcePoolsConfigured recorded_pools;  // in effect at the window's first submission
  events::ResourcePoolsConfigured whatif_pools;
  size_t job_rules = 0;
  std::map<int32_t, std::string> workspace_names;  // as the log last named them
  WhatIfColumn actual;
  WhatIfColumn whatif;
};

// Gathers the log in one pass (Add), then simulates (Run). Memory grows with the tasks and the
// scheduling events of the log (kept without their specs and reasons), not with other events.
class WhatIfSimulation {
 public:
  WhatIfSimulation(WhatIfConfig config, WhatIfWindow window);
  ~WhatIfSimulation();
  WhatIfSimulation(const WhatIfSimulation&) = delete;
  WhatIfSimulation& operator=(const WhatIfSimulation&) = delete;

  // Every event of the log, oldest first. Events an epoch fence rules out never happened.
  void Add(const events::Envelope& event);

  // Runs the simulation over what Add gathered. FailedPrecondition when no task was submitted in
  // the window. The same events and configuration give the same report.
  Result<WhatIfReport> Run() const;

  // What the log says about one task: the actual column's figures and the simulation's input.
  struct TaskFacts {
    int64_t submitted = 0;
    bool in_window = false;
    std::string user;
    int32_t workspace_id = 0;
    std::string submitted_pool;
    std::optional<int64_t> first_assigned;
    std::string first_pool;
    std::string allocation_id;          // the latest allocation
    std::optional<int64_t> open_since;  // when the allocation it still holds began
    int64_t worked = 0;                 // microseconds in allocations that ended
    std::optional<int64_t> ended;       // its TaskExited
    int64_t preemptions = 0;
  };

 private:
  WhatIfConfig config_;
  WhatIfWindow window_;
  EpochFence fence_;
  int64_t clock_ = 0;  // the events' times, never stepping back
  uint64_t events_ = 0;
  // The events the simulation and the actual column fold, stripped of what scheduling does not
  // read, with monotone times.
  std::vector<events::Envelope> history_;
  std::map<std::string, TaskFacts> tasks_;
  events::ResourcePoolsConfigured current_pools_ = DefaultPoolsConfig();
  std::optional<events::ResourcePoolsConfigured> pools_at_first_submission_;
};

}  // namespace cairn::replay
