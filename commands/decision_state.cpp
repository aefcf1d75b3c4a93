#include "commands/decision_state.h"

#include <algorithm>
#include <stdexcept>

#include "commands/experiment_state.h"
#include "commands/pai/pai_state.h"
#include "events/envelope_util.h"
#include "events/epoch_fence.h"

namespace cairn::commands {

const char* TaskStateName(TaskState state) {
  switch (state) {
    case TaskState::kQueued:
      return "QUEUED";
    case TaskState::kAssigned:
      return "ASSIGNED";
    case TaskState::kRunning:
      return "RUNNING";
    case TaskState::kTerminating:
      return "TERMINATING";
    case TaskState::kExited:
      return "EXITED";
  }
  return "UNKNOWN";
}

const TaskRecord* DecisionState::FindTask(std::string_view task_id) const {
  auto it = tasks.find(task_id);
  return it == tasks.end() ? nullptr : &it->second;
}

const JobRecord* DecisionState::FindJob(std::string_view job_id) const {
  auto it = jobs.find(job_id);
  return it == jobs.end() ? nullptr : &it->second;
}

const AgentRecord* DecisionState::FindAgent(const std::string& agent_id) const {
  auto it = agents.find(agent_id);
  return it == agents.end() ? nullptr : &it->second;
}

const events::ResourcePoolConfig* DecisionState::FindPool(const std::string& pool_name) const {
  for (const auto& pool : pools_config.pools()) {
    if (pool.pool_name() == pool_name) return &pool;
  }
  return nullptr;
}

std::vector<const TaskRecord*> ExpiredPreemptions(const DecisionState& state, int64_t now) {
  std::vector<const TaskRecord*> expired;
  std::set<std::string> seen;  // a gang is on several agents
  // Through the agents: the task table holds all of history.
  for (const auto& [agent_id, agent] : state.agents) {
    for (const auto& allocation_id : agent.allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      if (task.preempting && !task.kill_requested && task.where().preemption_deadline <= now &&
          seen.insert(task.task_id).second) {
        expired.push_back(&task);
      }
    }
  }
  return expired;
}

const ExperimentRecord* DecisionState::FindExperiment(int64_t experiment_id) const {
  auto it = experiments.find(experiment_id);
  return it == experiments.end() ? nullptr : &it->second;
}

const PaiJobRecord* DecisionState::FindPaiJob(const std::string& job_id) const {
  auto it = pai_jobs.find(job_id);
  return it == pai_jobs.end() ? nullptr : &it->second;
}

const TrialRecord* DecisionState::FindTrial(int64_t trial_id) const {
  auto it = trials.find(trial_id);
  return it == trials.end() ? nullptr : &it->second;
}

events::TaskSpec TaskRecord::Spec() const {
  events::TaskSpec spec;
  // Serialized by ApplyTaskSubmitted or DecodeTask from a message: it parses.
  spec.ParseFromString(packed_spec);
  return spec;
}

namespace {
// "T" of the scheduler's allocation ids "T.<n>" (scheduler.cpp); "" for another form.
std::string_view TaskIdPart(std::string_view allocation_id) {
  const size_t dot = allocation_id.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : allocation_id.substr(0, dot);
}
}  // namespace

const TaskRecord* DecisionState::FindAllocation(std::string_view allocation_id) const {
  if (auto other = other_allocations.find(allocation_id); other != other_allocations.end()) {
    return FindTask(other->second.task_id);
  }
  // "<task_id>.<n>": the task's latest allocation, or not an allocation at all.
  const TaskRecord* task = FindTask(TaskIdPart(allocation_id));
  return task != nullptr && task->allocation_id == allocation_id ? task : nullptr;
}

std::vector<std::string> DecisionState::AllocationAgents(std::string_view allocation_id) const {
  if (auto other = other_allocations.find(allocation_id);
      other != other_allocations.end() && !other->second.agent_ids.empty()) {
    return other->second.agent_ids;
  }
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr || task->agent_id.empty()) return {};
  std::vector<std::string> agents = {task->agent_id};
  agents.insert(agents.end(), task->more_agents.begin(), task->more_agents.end());
  return agents;
}

Result<const TaskRecord*> DecisionState::AllocationNamed(std::string_view allocation_id) const {
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr) {
    return Status::NotFound("allocation " + std::string(allocation_id) + " not found");
  }
  return task;
}

const TaskRecord& DecisionState::TaskOfLiveAllocation(const std::string& allocation_id) const {
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr) throw std::out_of_range("no allocation " + allocation_id);
  return *task;
}

const TrialRecord* DecisionState::FindTrialByAllocation(const std::string& allocation_id) const {
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr || task->trial_id == 0) return nullptr;
  return FindTrial(task->trial_id);
}

QueueKey DecisionState::QueueKeyOf(const TaskRecord& task) const {
  return {task.resources.priority(), task.job ? task.job->queue_position : 0,
          task.submitted_offset};
}

size_t DecisionState::QueuedTaskCount() const {
  size_t count = 0;
  for (const auto& [pool, queue] : queues) {
    count += queue.slot_tasks.size() + queue.zero_slot_tasks.size();
  }
  return count;
}

void DecisionState::Enqueue(const TaskRecord& task) {
  if (task.follows_gang()) return;
  PoolQueue& pool = queues[task.pool()];
  auto& tasks_of_kind = task.slots_asked() == 0 ? pool.zero_slot_tasks : pool.slot_tasks;
  tasks_of_kind.emplace(QueueKeyOf(task), &task);
}

void DecisionState::Dequeue(const TaskRecord& task) {
  if (task.follows_gang()) return;
  auto pool = queues.find(task.pool());
  if (pool == queues.end()) return;
  auto& tasks_of_kind =
      task.slots_asked() == 0 ? pool->second.zero_slot_tasks : pool->second.slot_tasks;
  tasks_of_kind.erase(QueueKeyOf(task));
  if (pool->second.empty()) queues.erase(pool);
}

namespace {

// Returns the allocation's slots (those of parts still running) to their agents.
void ReleaseAllocation(DecisionState& state, TaskRecord& task) {
  if (task.allocation_id.empty()) return;
  for (const auto& part : task.where().parts) {
    if (task.where().parts_exited.count(part.agent_id())) continue;
    auto agent = state.agents.find(part.agent_id());
    if (agent == state.agents.end() || agent->second.incarnation != part.agent_incarnation() ||
        agent->second.allocations.erase(task.allocation_id) == 0) {
      continue;
    }
    if (part.slot_ids().empty()) {
      agent->second.zero_slot_containers--;
    } else {
      for (int32_t slot : part.slot_ids()) agent->second.used_slots.erase(slot);
    }
  }
}

// An exited task never runs again: what only live work needs (how to start it, where its
// allocation ran) goes, and the kind stays. With a long history exited tasks are most of the
// state: this halves what each one keeps (bench_scheduling --only history).
void ForgetLiveDetails(TaskRecord& task) {
  std::string().swap(task.packed_spec);
  task.placement.reset();
  task.last_reason.shrink_to_fit();
}

void ApplyTaskSubmitted(DecisionState& state, const events::Envelope& event) {
  const auto& submitted = event.task_submitted();
  if (state.tasks.count(submitted.task_id())) return;
  TaskRecord task;
  task.task_id = submitted.task_id();
  const std::string& job_id = submitted.job_id().empty() ? submitted.task_id() : submitted.job_id();
  submitted.spec().SerializeToString(&task.packed_spec);
  task.task_type = submitted.spec().task_type();
  task.spec_preemptible = submitted.spec().preemptible();
  task.resources = submitted.resources();
  task.submitted_offset = event.offset();
  task.submitted_time = event.time_unix_micros();
  task.trial_id = submitted.trial_id();
  // Frees the record's copy of the pool's name: pool() reads the job's.
  task.resources.set_allocated_resource_pool(nullptr);
  auto [job_record, new_job] = state.jobs.FindOrMake(job_id);
  JobRecord& job = *job_record;
  if (new_job) {
    job.type = task.task_type;
    job.resource_pool = submitted.resources().resource_pool();
    job.priority = task.resources.priority();
    job.weight = task.resources.weight();
    job.max_slots = task.resources.max_slots();
    job.queue_position = static_cast<int64_t>(event.offset()) * kQueuePositionSpacing;
    job.submitted_offset = event.offset();
    job.workspace_id = WorkspaceOrUncategorized(submitted.workspace_id());
    job.submitted_time = event.time_unix_micros();
    job.user = submitted.spec().user();
  } else {
    // A job's later tasks follow the job's current scheduling parameters.
    task.resources.set_priority(job.priority);
    task.resources.set_weight(job.weight);
    task.resources.set_max_slots(job.max_slots);
  }
  if (job.live_tasks++ == 0) {
    state.live_jobs.Add(job.resource_pool, job.priority, job.queue_position, job.job_id);
  }
  task.job = &job;
  TaskRecord& stored = *state.tasks.Insert(std::move(task)).first;
  job.tasks.push_back(&stored);
  state.Enqueue(stored);
}

void ApplyAllocationAssigned(DecisionState& state, const events::AllocationAssigned& assigned) {
  auto it = state.tasks.find(assigned.task_id());
  if (it == state.tasks.end() || it->second.state != TaskState::kQueued) return;
  TaskRecord& task = it->second;
  state.Dequeue(task);
  task.state = TaskState::kAssigned;
  task.allocation_count++;
  task.allocation_id = assigned.allocation_id();
  task.placement = std::make_unique<Placement>();
  Placement& placement = *task.placement;
  placement.allocation_pool = assigned.resource_pool();
  placement.parts = AllocationPartsOf(assigned);
  task.agent_id = assigned.agent_id();
  placement.agent_incarnation = assigned.agent_incarnation();
  placement.slot_ids.assign(assigned.slot_ids().begin(), assigned.slot_ids().end());
  task.started = false;
  task.ready = false;
  task.kill_requested = false;
  task.kill_by_user = false;
  task.preempting = false;
  task.backfilled = assigned.backfilled();
  task.last_reason = assigned.reason();
  task.more_agents.clear();
  for (size_t i = 1; i < placement.parts.size(); ++i)
    task.more_agents.push_back(placement.parts[i].agent_id());
  if (TaskIdPart(task.allocation_id) != task.task_id) {
    state.other_allocations[task.allocation_id] = {task.task_id, {}};
  }
  for (const auto& part : placement.parts) {
    auto agent = state.agents.find(part.agent_id());
    if (agent == state.agents.end()) continue;
    agent->second.allocations.insert(task.allocation_id);
    if (part.slot_ids().empty()) {
      agent->second.zero_slot_containers++;
    } else {
      agent->second.used_slots.insert(part.slot_ids().begin(), part.slot_ids().end());
    }
  }
}

void ApplyTaskExited(DecisionState& state, const events::TaskExited& exited) {
  auto it = state.tasks.find(exited.task_id());
  if (it == state.tasks.end() || it->second.state == TaskState::kExited) return;
  TaskRecord& task = it->second;
  if (task.state == TaskState::kQueued) state.Dequeue(task);
  ReleaseAllocation(state, task);
  task.state = TaskState::kExited;
  task.preempting = false;
  task.ready = false;
  task.last_reason = exited.reason();
  ForgetLiveDetails(task);
  auto job_it = state.jobs.find(task.job_id());
  if (job_it == state.jobs.end()) return;
  JobRecord& job = job_it->second;
  if (--job.live_tasks == 0) {
    state.live_jobs.Remove(job.resource_pool, job.priority, job.queue_position, job.job_id);
  }
}

// The allocation ended; the task keeps its place in the queue and waits for a new one.
void ApplyAllocationReleased(DecisionState& state, const events::AllocationReleased& released) {
  auto it = state.tasks.find(released.task_id());
  if (it == state.tasks.end() || it->second.allocation_id != released.allocation_id() ||
      !it->second.holds_allocation()) {
    return;
  }
  TaskRecord& task = it->second;
  ReleaseAllocation(state, task);
  // Reports about it may still come from its agents, which the record forgets below.
  state.other_allocations[task.allocation_id] = {task.task_id,
                                                 state.AllocationAgents(task.allocation_id)};
  task.state = TaskState::kQueued;
  task.started = false;
  task.ready = false;
  task.kill_requested = false;
  task.preempting = false;
  task.backfilled = false;
  task.placement.reset();
  task.agent_id.clear();
  task.more_agents.clear();
  task.last_reason = released.reason();
  state.Enqueue(task);
}

void ApplyAllocationPartExited(DecisionState& state, const events::AllocationPartExited& exited) {
  auto it = state.tasks.find(exited.task_id());
  if (it == state.tasks.end() || it->second.allocation_id != exited.allocation_id()) return;
  TaskRecord& task = it->second;
  if (task.where().parts_exited.count(exited.agent_id())) return;
  for (const auto& part : task.where().parts) {
    if (part.agent_id() != exited.agent_id()) continue;
    auto agent = state.agents.find(part.agent_id());
    if (agent != state.agents.end() && agent->second.incarnation == part.agent_incarnation() &&
        agent->second.allocations.erase(task.allocation_id) > 0) {
      for (int32_t slot : part.slot_ids()) agent->second.used_slots.erase(slot);
    }
  }
  task.place().parts_exited.insert(exited.agent_id());
}

void ApplyJobQueueChanged(DecisionState& state, const events::JobQueueChanged& changed) {
  auto job_it = state.jobs.find(changed.job_id());
  if (job_it == state.jobs.end()) return;
  JobRecord& job = job_it->second;
  // Queued tasks are keyed by the job's priority and position: re-key them around the change.
  std::vector<const TaskRecord*> queued;
  for (const TaskRecord* task : job.tasks) {
    if (task->state == TaskState::kQueued) {
      state.Dequeue(*task);
      queued.push_back(task);
    }
  }
  const bool live = job.live_tasks > 0;
  if (live) state.live_jobs.Remove(job.resource_pool, job.priority, job.queue_position, job.job_id);
  job.priority = changed.priority();
  job.weight = changed.weight();
  job.resource_pool = changed.resource_pool();
  job.queue_position = changed.queue_position();
  job.max_slots = changed.max_slots();
  if (live) state.live_jobs.Add(job.resource_pool, job.priority, job.queue_position, job.job_id);
  for (const TaskRecord* task : job.tasks) {
    if (task->state == TaskState::kExited) continue;
    TaskRecord& changing = state.tasks.Changed(*task);
    changing.resources.set_priority(job.priority);
    changing.resources.set_weight(job.weight);
    changing.resources.set_max_slots(job.max_slots);
  }
  for (const TaskRecord* task : queued) state.Enqueue(*task);
}

void ApplyAgentRegistered(DecisionState& state, const events::Envelope& event) {
  const events::AgentRegistered& registered = event.agent_registered();
  AgentRecord& agent = state.agents[registered.agent_id()];
  bool same_incarnation = agent.incarnation == registered.incarnation();
  agent.agent_id = registered.agent_id();
  agent.resource_pool = registered.resource_pool();
  agent.slot_count = registered.slot_count();
  agent.address = registered.address();
  agent.connected = true;
  if (!same_incarnation) {
    // A new process: whatever the old one ran was ended by TaskExited events before this one.
    agent.incarnation = registered.incarnation();
    agent.registered_offset = event.offset();
    agent.used_slots.clear();
    agent.zero_slot_containers = 0;
    agent.allocations.clear();
  }
}

}  // namespace

void Apply(DecisionState& state, const events::Envelope& event) {
  state.next_offset = event.offset() + 1;
  EpochFence fence(state.writer_epoch);
  switch (fence.Admit(event)) {
    case EpochFence::Verdict::kClaim:
      state.writer_epoch = fence.newest_epoch();
      return;
    case EpochFence::Verdict::kFenced:
      return;
    case EpochFence::Verdict::kFact:
      break;
  }
  // Keys older than the window are forgotten (by event time, so a rebuild forgets the same).
  const int64_t horizon = event.time_unix_micros() - kIdempotencyWindowMicros;
  while (!state.idempotency_by_time.empty() && state.idempotency_by_time.begin()->first < horizon) {
    auto oldest = state.idempotency_by_time.begin();
    auto entry = state.idempotency.find(oldest->second);
    if (entry != state.idempotency.end() && entry->second.time_unix_micros == oldest->first) {
      state.idempotency.erase(entry);
    }
    state.idempotency_by_time.erase(oldest);
  }
  if (!event.idempotency_key().empty()) {
    // A command's first event names it; its later events carry the same key.
    auto [entry, inserted] = state.idempotency.try_emplace(event.idempotency_key());
    if (inserted) {
      entry->second =
          DecisionState::IdempotentCommand{PayloadTypeName(event), event.actor(), EntityIdOf(event),
                                           event.request_fingerprint(), event.time_unix_micros()};
      state.idempotency_by_time.emplace(event.time_unix_micros(), event.idempotency_key());
    }
  }
  ApplyIdentity(state.identity, event);
  ApplyTenancy(state.tenancy, event);
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted:
      ApplyTaskSubmitted(state, event);
      ApplyTrialTaskEvent(state, event);
      ApplyPaiEvent(state, event);
      break;
    case events::Envelope::kAllocationAssigned:
      ApplyAllocationAssigned(state, event.allocation_assigned());
      ApplyPaiEvent(state, event);
      break;
    case events::Envelope::kTaskStarted: {
      auto it = state.tasks.find(event.task_started().task_id());
      if (it == state.tasks.end() ||
          it->second.allocation_id != event.task_started().allocation_id()) {
        break;
      }
      it->second.started = true;
      if (it->second.state == TaskState::kAssigned) it->second.state = TaskState::kRunning;
      break;
    }
    case events::Envelope::kTaskReady: {
      auto it = state.tasks.find(event.task_ready().task_id());
      if (it == state.tasks.end() ||
          it->second.allocation_id != event.task_ready().allocation_id() ||
          !it->second.holds_allocation()) {
        break;
      }
      it->second.ready = true;
      break;
    }
    case events::Envelope::kKillRequested: {
      auto it = state.tasks.find(event.kill_requested().task_id());
      if (it == state.tasks.end()) break;
      it->second.kill_requested = true;
      it->second.kill_by_user = it->second.kill_by_user || event.kill_requested().by_user();
      it->second.last_reason = event.kill_requested().reason();
      // A kill a user asked for ends the task, even one that was being preempted.
      if (!event.kill_requested().preemption_expired()) it->second.preempting = false;
      if (it->second.state == TaskState::kAssigned || it->second.state == TaskState::kRunning) {
        it->second.state = TaskState::kTerminating;
      }
      break;
    }
    case events::Envelope::kTaskExited:
      ApplyTrialTaskEvent(state, event);  // first: it reads how the task ended
      ApplyPaiEvent(state, event);
      ApplyTaskExited(state, event.task_exited());
      break;
    case events::Envelope::kAllocationReleased:
      ApplyTrialTaskEvent(state, event);
      ApplyAllocationReleased(state, event.allocation_released());
      break;
    case events::Envelope::kAllocationPartExited:
      ApplyAllocationPartExited(state, event.allocation_part_exited());
      break;
    case events::Envelope::kPreemptionRequested: {
      const auto& preemption = event.preemption_requested();
      auto it = state.tasks.find(preemption.task_id());
      if (it == state.tasks.end() || it->second.allocation_id != preemption.allocation_id() ||
          !it->second.holds_allocation()) {
        break;
      }
      it->second.preempting = true;
      it->second.place().preemption_deadline = preemption.deadline_unix_micros();
      it->second.last_reason = preemption.reason();
      break;
    }
    case events::Envelope::kJobQueueChanged:
      ApplyJobQueueChanged(state, event.job_queue_changed());
      break;
    case events::Envelope::kResourcePoolsConfigured:
      state.pools_config = event.resource_pools_configured();
      break;
    case events::Envelope::kAgentRegistered:
      ApplyAgentRegistered(state, event);
      break;
    case events::Envelope::kAgentDisconnected: {
      auto it = state.agents.find(event.agent_disconnected().agent_id());
      if (it != state.agents.end() &&
          it->second.incarnation == event.agent_disconnected().incarnation()) {
        it->second.connected = false;
      }
      break;
    }
    case events::Envelope::kAgentEnabled: {
      auto it = state.agents.find(event.agent_enabled().agent_id());
      if (it != state.agents.end()) {
        it->second.enabled = true;
        it->second.draining = false;
      }
      break;
    }
    case events::Envelope::kAgentDisabled: {
      auto it = state.agents.find(event.agent_disabled().agent_id());
      if (it != state.agents.end()) {
        it->second.enabled = false;
        it->second.draining = event.agent_disabled().drain();
      }
      break;
    }
    case events::Envelope::kPaiJobSubmitted:
    case events::Envelope::kPaiJobAttemptStarted:
    case events::Envelope::kPaiJobStopRequested:
    case events::Envelope::kPaiJobAttemptEnded:
      ApplyPaiEvent(state, event);
      break;
    default:
      // Experiments, trials, checkpoints, templates, the model registry; unknown or future
      // payloads are skipped.
      if (!ApplyExperimentEvent(state, event)) ApplyRegistryEvent(state.registry, event);
      break;
  }
}

}  // namespace cairn::commands
