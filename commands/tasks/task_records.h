// The tasks and jobs domain's part of the decision state (commands/decision_state.h): a task's
// record with where its allocation runs, a job's record, and the pools' queues of queued tasks.
// Pure data; folded by commands/tasks/task_state.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "events.pb.h"
#include "events/limits.h"
#include "events/workspace_defaults.h"

namespace cairn::commands {

enum class TaskState { kQueued, kAssigned, kRunning, kTerminating, kExited };
const char* TaskStateName(TaskState state);

struct JobRecord;

// Where a task's current allocation runs. Only live work needs it: an exited task drops it
// (ForgetLiveDetails), so that history's tasks hold a null pointer where each held 168 bytes.
struct Placement {
  std::string allocation_pool;  // the pool the allocation runs in
  // One part per agent (several for a gang). TaskRecord::agent_id and, here, agent_incarnation
  // and slot_ids repeat the first part.
  std::vector<events::AllocationPart> parts;
  std::set<std::string> parts_exited;  // agents whose part of a gang already ended
  std::string agent_incarnation;
  std::vector<int32_t> slot_ids;
  // Set by a preemption (TaskRecord::preempting): the allocation is killed at this time.
  int64_t preemption_deadline = 0;
};

struct TaskRecord {
  std::string task_id;
  // The job's record in DecisionState::jobs (whose records never move or go away), so that a
  // scheduling pass over many queued tasks reaches each one's job without a lookup. Every stored
  // task has one.
  const JobRecord* job = nullptr;
  const std::string& job_id() const;
  // As submitted (an events::TaskSpec, serialized) while the task lives, read with Spec() when it
  // is placed; empty once it exited (ForgetLiveDetails). Bytes rather than the message: a parsed
  // spec keeps each string in an allocation of its own, about three times the bytes, and a long
  // queue is mostly specs.
  std::string packed_spec;
  // Priority, weight and max_slots are the job's current values; the pool is not kept here (each
  // task's copy of the name was a heap string): it is the job's, pool().
  events::Resources resources;
  TaskState state = TaskState::kQueued;
  events::TaskType task_type = events::TASK_TYPE_UNSPECIFIED;  // the spec's; kept after exit
  uint64_t submitted_offset = 0;
  int64_t submitted_time = 0;
  int allocation_count = 0;  // allocations so far; numbers the next allocation id
  // Change tracking for incremental snapshots (ByOwnId): not part of the state. (In the padding
  // before allocation_id: a task's record stays 312 bytes.)
  uint32_t change_stamp = 0;
  std::string allocation_id;  // the latest allocation's; kept after it ends
  // Where the current allocation runs (none while queued or once exited): read it with where().
  std::unique_ptr<Placement> placement;
  std::string agent_id;  // kept after the task exits (DecisionState::AllocationAgents)
  // The allocation's agents after agent_id (a gang on several agents), kept like agent_id.
  std::vector<std::string> more_agents;
  bool started = false;
  bool ready = false;  // a notebook's, shell's or TensorBoard's service answers (TaskReady)
  // A paused generic task (TaskHeld): never in its pool's queue; a running allocation of it is
  // released back to the task, which stays held, when it ends (commands/tasks/generic_tasks.h).
  bool held = false;
  bool kill_requested = false;
  bool kill_by_user = false;  // the kill was a user's, not the system's (gang, disable, preemption)
  bool backfilled = false;
  // A preemption asked this allocation to give its slots back; it is released (and the task
  // re-queued) when it exits, or killed at the deadline.
  bool preempting = false;
  bool spec_preemptible = false;  // the spec's; kept after exit
  std::string last_reason;        // the latest decision about this task, in words
  int64_t trial_id = 0;           // the trial this task is a run of; 0 for other tasks

  const std::string& pool() const;  // the job's pool, where the task queues and is placed
  // The placement, or an empty one when there is none.
  const Placement& where() const {
    static const Placement kNowhere;
    return placement ? *placement : kNowhere;
  }
  // The placement to change, made when there is none.
  Placement& place() {
    if (!placement) placement = std::make_unique<Placement>();
    return *placement;
  }
  // The spec as submitted; an empty one once the task exited.
  events::TaskSpec Spec() const;
  bool preemptible() const { return task_type == events::TASK_TYPE_TRIAL || spec_preemptible; }
  bool holds_allocation() const {
    return state == TaskState::kAssigned || state == TaskState::kRunning ||
           state == TaskState::kTerminating;
  }
  // A gang's followers never wait in a queue: their leader stands for the whole gang, asking
  // for every member's slots.
  bool follows_gang() const { return resources.gang_rank() > 0; }
  bool leads_gang() const { return resources.gang_size() > 1 && resources.gang_rank() == 0; }
  // What the scheduler weighs this task at: a queued gang leader asks for the whole gang.
  int32_t slots_asked() const {
    return leads_gang() && state == TaskState::kQueued ? resources.gang_slots() : resources.slots();
  }
};

// A job groups the tasks the scheduler treats as one (a command, or an experiment's trials):
// fair share divides slots among jobs, the queue orders jobs.
struct JobRecord {
  std::string job_id;
  std::string resource_pool;
  std::string user;
  // Its tasks in submission order: records of DecisionState::tasks, which never move. Const:
  // a task is changed through DecisionState::tasks, which tracks what changed (ByOwnId).
  std::vector<const TaskRecord*> tasks;
  double weight = 1;
  int64_t queue_position = 0;  // smaller = further ahead among equal priorities
  uint64_t submitted_offset = 0;
  int64_t submitted_time = 0;
  // The 4-byte fields together: every job of history has this record, and padding adds up.
  events::TaskType type = events::TASK_TYPE_UNSPECIFIED;
  int32_t priority = kDefaultPriority;
  int32_t max_slots = 0;  // 0 = no cap
  int32_t workspace_id = kUncategorizedWorkspace;
  int live_tasks = 0;  // tasks not exited
  // The job may still get tasks although none is live (an experiment that is not over).
  bool open = false;
  uint32_t change_stamp = 0;  // change tracking for incremental snapshots (ByOwnId)
  bool accepts_changes() const { return live_tasks > 0 || open; }
};

inline const std::string& TaskRecord::job_id() const { return job->job_id; }
inline const std::string& TaskRecord::pool() const { return job->resource_pool; }

// "T" of an allocation id of the scheduler's form "T.<n>" (commands/scheduler/scheduler.cpp);
// "" for another form.
std::string_view TaskIdOfAllocation(std::string_view allocation_id);

// Orders queued tasks: priority (lower first), then the job's queue position, then the task's
// submission order (its TaskSubmitted's offset, unique per task).
using QueueKey = std::tuple<int32_t, int64_t, uint64_t>;

// One resource pool's queued tasks in queue order, each with its record (in
// DecisionState::tasks, whose records never move), slot tasks apart from zero-slot ones: a
// scheduling pass over a pool walks exactly the tasks it schedules, without a lookup per task.
struct PoolQueue {
  using Tasks = std::pmr::map<QueueKey, const TaskRecord*>;
  // The queues' nodes come from a pool of their own: a walk of a long queue then touches a few
  // megabytes, not a page per task of the heap that also holds the task records (measured: the
  // walk took a third of a pass over 100,000 queued tasks before). Neither copied nor moved: the
  // maps point at it, and it stays where DecisionState::queues built it.
  std::pmr::unsynchronized_pool_resource nodes;
  Tasks slot_tasks{&nodes};
  Tasks zero_slot_tasks{&nodes};
  bool empty() const { return slot_tasks.empty() && zero_slot_tasks.empty(); }
};

// A new job's queue position: its submission offset, spaced so that moves can insert between.
inline constexpr int64_t kQueuePositionSpacing = int64_t{1} << 20;

}  // namespace cairn::commands
