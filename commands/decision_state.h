// The write side's in-memory model of the cluster: everything the decider needs to validate a
// command and place tasks, folded from the log by Apply(). Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "events.pb.h"

namespace cairn::commands {

// Determined's default priority; lower numbers are more important.
inline constexpr int32_t kDefaultPriority = 42;
// Zero-slot (aux) containers one agent may run at once (Determined's default).
inline constexpr int32_t kMaxZeroSlotContainersPerAgent = 100;
inline constexpr const char* kDefaultPool = "default";

enum class TaskState { kQueued, kAssigned, kRunning, kTerminating, kExited };
const char* TaskStateName(TaskState state);

struct TaskRecord {
  std::string task_id;
  std::string job_id;
  events::TaskSpec spec;
  events::Resources resources;  // pool, priority, weight: the job's current values
  TaskState state = TaskState::kQueued;
  uint64_t submitted_offset = 0;
  int64_t submitted_time = 0;
  int allocation_count = 0;  // allocations so far; numbers the next allocation id
  std::string allocation_id;
  std::string allocation_pool;  // the pool the current allocation runs in
  // Where the current allocation runs: one part per agent (several for a gang). agent_id,
  // agent_incarnation and slot_ids repeat the first part.
  std::vector<events::AllocationPart> parts;
  std::set<std::string> parts_exited;  // agents whose part of a gang already ended
  std::string agent_id;
  std::string agent_incarnation;
  std::vector<int32_t> slot_ids;
  bool started = false;
  bool kill_requested = false;
  bool backfilled = false;
  // A preemption asked this allocation to give its slots back; it is released (and the task
  // re-queued) when it exits, or killed at the deadline.
  bool preempting = false;
  int64_t preemption_deadline = 0;
  std::string last_reason;  // the latest decision about this task, in words

  bool preemptible() const {
    return spec.task_type() == events::TASK_TYPE_TRIAL || spec.preemptible();
  }
  bool holds_allocation() const {
    return state == TaskState::kAssigned || state == TaskState::kRunning ||
           state == TaskState::kTerminating;
  }
};

// A job groups the tasks the scheduler treats as one (a command, or an experiment's trials):
// fair share divides slots among jobs, the queue orders jobs.
struct JobRecord {
  std::string job_id;
  events::TaskType type = events::TASK_TYPE_UNSPECIFIED;
  std::string resource_pool;
  int32_t priority = kDefaultPriority;
  double weight = 1;
  int32_t max_slots = 0;       // 0 = no cap
  int64_t queue_position = 0;  // smaller = further ahead among equal priorities
  uint64_t submitted_offset = 0;
  int64_t submitted_time = 0;
  std::string user;
  std::vector<std::string> task_ids;  // in submission order
  int live_tasks = 0;                 // tasks not exited
};

struct AgentRecord {
  std::string agent_id;
  std::string incarnation;
  std::string resource_pool;
  int32_t slot_count = 0;
  bool connected = false;
  bool enabled = true;
  bool draining = false;
  std::set<int32_t> used_slots;
  int32_t zero_slot_containers = 0;
  std::set<std::string> allocations;  // allocation ids running or assigned here
  uint64_t registered_offset = 0;     // the AgentRegistered that began this incarnation

  int32_t free_slots() const { return slot_count - static_cast<int32_t>(used_slots.size()); }
  bool schedulable() const { return connected && enabled && !draining; }
};

// Orders queued tasks: priority (lower first), then the job's queue position, then the task's
// submission order.
using QueueKey = std::tuple<int32_t, int64_t, uint64_t, std::string>;

// A new job's queue position: its submission offset, spaced so that moves can insert between.
inline constexpr int64_t kQueuePositionSpacing = int64_t{1} << 20;

// The pools a cluster has when its configuration names none: one pool, "default", fair share.
events::ResourcePoolsConfigured DefaultPoolsConfig();

struct DecisionState {
  uint64_t next_offset = 0;  // the offset the next event gets (= events applied)
  uint64_t writer_epoch = 0;
  std::map<std::string, TaskRecord> tasks;
  std::map<std::string, JobRecord> jobs;
  std::map<std::string, AgentRecord> agents;
  events::ResourcePoolsConfigured pools_config = DefaultPoolsConfig();
  std::map<std::string, std::string> allocation_to_task;
  std::set<QueueKey> queue;  // queued tasks only
  // idempotency key -> what its command was and the entity it created or touched
  struct IdempotentCommand {
    std::string command;  // the payload type of the command's first event
    std::string actor;
    std::string entity_id;
  };
  std::map<std::string, IdempotentCommand> idempotency;
  std::map<uint64_t, uint64_t> epoch_claims;  // offset of each WriterEpochClaimed -> its epoch

  const TaskRecord* FindTask(const std::string& task_id) const;
  const JobRecord* FindJob(const std::string& job_id) const;
  const AgentRecord* FindAgent(const std::string& agent_id) const;
  const events::ResourcePoolConfig* FindPool(const std::string& pool_name) const;
  QueueKey QueueKeyOf(const TaskRecord& task) const;
};

// Running tasks whose preemption grace period ended by `now` and that no kill reached yet.
std::vector<const TaskRecord*> ExpiredPreemptions(const DecisionState& state, int64_t now);

// Folds one event into the state. Events of an epoch older than the newest claimed one are
// ignored (read-side fencing); unknown payloads are skipped.
void Apply(DecisionState& state, const events::Envelope& event);

}  // namespace cairn::commands
