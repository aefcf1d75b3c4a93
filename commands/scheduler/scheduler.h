// The scheduler, a pure decider run after every batch of events: for each resource pool it runs
// the pool's policy (fair share, priority with optional preemption, round robin) over the
// queued and running tasks and returns its decisions as events — AllocationAssigned and
// PreemptionRequested — each carrying its reason in words. Same state in, same decisions out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

struct SchedulingPass {
  std::vector<events::Envelope> decisions;  // payloads only; the writer fills the envelopes
  // Why each queued task that was not placed still waits; filled only when asked for.
  std::map<std::string, std::string> waiting_reasons;
  // Queued tasks the pass listed for its policies: the work that grows with the queue. A pool
  // where nothing can change (no free or releasing slot, nothing the policy could take back)
  // is not walked, so a submission to a full pool adds nothing here (issue 17).
  size_t queued_tasks_walked = 0;
};

// `now_unix_micros` is the time of the batch that triggered the pass (recorded in its events);
// preemption deadlines are counted from it.
SchedulingPass Schedule(const DecisionState& state, int64_t now_unix_micros,
                        bool explain_waiting = false);

// What a pass now would do with one queued task: place it, or leave it waiting and why (the
// reason Schedule's waiting_reasons would give), or not consider it (its pool is not
// configured). Only the task's pool is passed over, and when that pool has no schedulable agent
// only the task itself: nothing can be placed there, so the others do not change its answer.
struct QueuedTaskOutlook {
  enum Kind { kWaits, kPlaced, kNotConsidered };
  Kind kind = kNotConsidered;
  std::string waiting_reason;  // kWaits
};

// The explaining passes over pools with a schedulable agent for one decision state (named by its
// next_offset), each with every waiting task's reason: explaining many tasks of such a pool
// between two writes costs one pass over its queue, not one per task. A pass is as of the time
// of the first question about its pool. Whoever replaces a state by another with the same
// next_offset (a reload after a failed append) clears it.
struct ExplainedPasses {
  uint64_t state_offset = 0;
  std::map<std::string, SchedulingPass> by_pool;
};

// `passes`, when given, keeps the passes over pools with a schedulable agent for later questions
// about the same state.
QueuedTaskOutlook ExplainQueuedTask(const DecisionState& state, int64_t now_unix_micros,
                                    const TaskRecord& task, ExplainedPasses* passes = nullptr);

// Refuses a task that could never run in `pool`: more slots than the pool's agents could give it
// even if all were idle (one agent, or whole agents of one size for a gang), or a zero-slot task
// in a pool whose agents take no zero-slot containers.
Status CheckCanEverFit(const DecisionState& state, const std::string& pool, int32_t slots);

const char* SchedulerTypeName(events::SchedulerType type);  // "fair_share", "priority", ...

}  // namespace cairn::commands
