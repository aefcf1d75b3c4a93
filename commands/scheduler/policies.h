// Internal to the scheduler: the context one pool's pass shares with its policy, and the
// policies themselves. Each policy reads the pool's queued and running tasks and records its
// decisions through PoolPass, which turns them into events with reasons.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands/decision_state.h"
#include "commands/scheduler/capacity.h"
#include "commands/scheduler/scheduler.h"

namespace cairn::commands {

struct PoolPass {
  // `capacity` is the pool's as PoolCapacity(state, pool) builds it.
  PoolPass(const DecisionState& state, const events::ResourcePoolConfig& pool,
           PoolCapacity capacity, int64_t now, SchedulingPass* out, bool explain);

  const DecisionState& state;
  const events::ResourcePoolConfig& pool;
  PoolCapacity capacity;
  // Queued tasks of this pool in the state's queue order (priority, job position, submission).
  std::vector<const TaskRecord*> queued_slot_tasks;
  std::vector<const TaskRecord*> queued_zero_slot_tasks;
  // Tasks holding an allocation in this pool that needs slots.
  std::vector<const TaskRecord*> running_slot_tasks;
  int64_t now;
  SchedulingPass* out;
  bool explain;
  // When explaining, only this task's reason is put in words (nullptr: every task's).
  const TaskRecord* explain_only = nullptr;

  // Where `task` would go now: FindFit of its slots, or, for a gang's leader, a place for every
  // member (each on one agent, with its ports) or none.
  std::optional<Fit> FitFor(const TaskRecord& task, bool allow_releasing) const;
  // Records the placement (for a gang: one AllocationAssigned per member, with the variables
  // that name where the others are).
  void Assign(const TaskRecord& task, const Fit& fit, const std::string& reason, bool backfilled);
  void AssignGang(const Fit& fit, const std::string& reason, bool backfilled);
  void Preempt(const TaskRecord& victim, const std::string& reason, const TaskRecord* for_task);
  // Records why a task still waits; the words are only built when explaining.
  template <typename MakeReason>
  void Wait(const TaskRecord& task, MakeReason&& make_reason) {
    if (explain && (explain_only == nullptr || &task == explain_only)) {
      std::string reason = make_reason();
      // A trial's exclude_node log policy narrows where it may go; say so with any reason.
      if (!task.resources.excluded_agents().empty()) {
        reason += "; its log policy (exclude_node) keeps it off agent";
        for (const auto& agent_id : task.resources.excluded_agents()) reason += " " + agent_id;
      }
      out->waiting_reasons[task.task_id] = std::move(reason);
    }
  }
  std::string PoolName() const { return pool.pool_name(); }
  const JobRecord& JobOf(const TaskRecord& task) const { return *task.job; }
  // Ports this pass gave out, by agent (the state knows only those of earlier passes).
  std::map<std::string, std::set<int32_t>> ports_given;
};

// FitFor against another capacity (a preemption what-if's).
std::optional<Fit> FitTask(const PoolPass& pass, const PoolCapacity& capacity,
                           const TaskRecord& task, bool allow_releasing);

void RunFairShare(PoolPass& pass);
void RunPriority(PoolPass& pass);
void RunRoundRobin(PoolPass& pass);
// Zero-slot tasks are scheduled apart from slot tasks: in queue order (FIFO by job position,
// or by priority first under the priority scheduler). They never preempt and are never
// preempted.
void RunZeroSlot(PoolPass& pass, bool by_priority);

// Task lists in FIFO order: the job's queue position, then the task's submission.
std::vector<const TaskRecord*> InJobOrder(std::vector<const TaskRecord*> tasks);

std::string SlotsText(int32_t slots);  // "1 slot", "4 slots"

}  // namespace cairn::commands
