#include "commands/tasks/task_state.h"

#include <algorithm>

#include "events/envelope_util.h"

namespace cairn::commands {

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
  if (TaskIdOfAllocation(task.allocation_id) != task.task_id) {
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

}  // namespace

void ApplyTaskEvent(DecisionState& state, const events::Envelope& event) {
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted:
      ApplyTaskSubmitted(state, event);
      break;
    case events::Envelope::kAllocationAssigned:
      ApplyAllocationAssigned(state, event.allocation_assigned());
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
      ApplyTaskExited(state, event.task_exited());
      break;
    case events::Envelope::kAllocationReleased:
      ApplyAllocationReleased(state, event.allocation_released());
      break;
    case events::Envelope::kTaskHeld: {
      const auto& held = event.task_held();
      auto it = state.tasks.find(held.task_id());
      if (it == state.tasks.end() || it->second.state == TaskState::kExited) break;
      TaskRecord& task = it->second;
      if (task.state == TaskState::kQueued) state.Dequeue(task);
      task.held = held.held();
      task.last_reason = held.reason();
      if (task.state == TaskState::kQueued) state.Enqueue(task);
      break;
    }
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
    default:
      break;
  }
}

}  // namespace cairn::commands
