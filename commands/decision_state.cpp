#include "commands/decision_state.h"

#include <algorithm>

#include "events/envelope_util.h"

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

const TaskRecord* DecisionState::FindTask(const std::string& task_id) const {
  auto it = tasks.find(task_id);
  return it == tasks.end() ? nullptr : &it->second;
}

const AgentRecord* DecisionState::FindAgent(const std::string& agent_id) const {
  auto it = agents.find(agent_id);
  return it == agents.end() ? nullptr : &it->second;
}

namespace {

QueueKey QueueKeyOf(const TaskRecord& task) {
  return {task.resources.priority(), task.submitted_offset, task.task_id};
}

// Returns the allocation's slots to its agent.
void ReleaseAllocation(DecisionState& state, TaskRecord& task) {
  if (task.allocation_id.empty()) return;
  auto agent = state.agents.find(task.agent_id);
  if (agent != state.agents.end() && agent->second.allocations.erase(task.allocation_id) > 0) {
    if (task.slot_ids.empty()) {
      agent->second.zero_slot_containers--;
    } else {
      for (int32_t slot : task.slot_ids) agent->second.used_slots.erase(slot);
    }
  }
}

void ApplyTaskSubmitted(DecisionState& state, const events::Envelope& event) {
  const auto& submitted = event.task_submitted();
  if (state.tasks.count(submitted.task_id())) return;
  TaskRecord task;
  task.task_id = submitted.task_id();
  task.job_id = submitted.job_id();
  task.spec = submitted.spec();
  task.resources = submitted.resources();
  task.submitted_offset = event.offset();
  task.submitted_time = event.time_unix_micros();
  state.queue.insert(QueueKeyOf(task));
  state.tasks.emplace(task.task_id, std::move(task));
}

void ApplyAllocationAssigned(DecisionState& state, const events::AllocationAssigned& assigned) {
  auto it = state.tasks.find(assigned.task_id());
  if (it == state.tasks.end() || it->second.state != TaskState::kQueued) return;
  TaskRecord& task = it->second;
  state.queue.erase(QueueKeyOf(task));
  task.state = TaskState::kAssigned;
  task.allocation_count++;
  task.allocation_id = assigned.allocation_id();
  task.agent_id = assigned.agent_id();
  task.agent_incarnation = assigned.agent_incarnation();
  task.slot_ids.assign(assigned.slot_ids().begin(), assigned.slot_ids().end());
  state.allocation_to_task[task.allocation_id] = task.task_id;
  auto agent = state.agents.find(task.agent_id);
  if (agent != state.agents.end()) {
    agent->second.allocations.insert(task.allocation_id);
    if (task.slot_ids.empty()) {
      agent->second.zero_slot_containers++;
    } else {
      agent->second.used_slots.insert(task.slot_ids.begin(), task.slot_ids.end());
    }
  }
}

void ApplyTaskExited(DecisionState& state, const events::TaskExited& exited) {
  auto it = state.tasks.find(exited.task_id());
  if (it == state.tasks.end() || it->second.state == TaskState::kExited) return;
  TaskRecord& task = it->second;
  if (task.state == TaskState::kQueued) state.queue.erase(QueueKeyOf(task));
  ReleaseAllocation(state, task);
  task.state = TaskState::kExited;
}

void ApplyAgentRegistered(DecisionState& state, const events::Envelope& event) {
  const events::AgentRegistered& registered = event.agent_registered();
  AgentRecord& agent = state.agents[registered.agent_id()];
  bool same_incarnation = agent.incarnation == registered.incarnation();
  agent.agent_id = registered.agent_id();
  agent.resource_pool = registered.resource_pool();
  agent.slot_count = registered.slot_count();
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
  if (event.has_writer_epoch_claimed()) {
    state.writer_epoch = std::max(state.writer_epoch, event.writer_epoch_claimed().epoch());
    state.epoch_claims[event.offset()] = event.writer_epoch_claimed().epoch();
    return;
  }
  if (event.writer_epoch() < state.writer_epoch) return;  // written by a fenced-off master
  if (!event.idempotency_key().empty()) {
    state.idempotency.emplace(
        event.idempotency_key(),
        DecisionState::IdempotentCommand{PayloadTypeName(event), event.actor(), EntityIdOf(event)});
  }
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
    case events::Envelope::kKillRequested: {
      auto it = state.tasks.find(event.kill_requested().task_id());
      if (it == state.tasks.end()) break;
      it->second.kill_requested = true;
      if (it->second.state == TaskState::kAssigned || it->second.state == TaskState::kRunning) {
        it->second.state = TaskState::kTerminating;
      }
      break;
    }
    case events::Envelope::kTaskExited:
      ApplyTaskExited(state, event.task_exited());
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
    default:
      break;  // unknown or future payloads are skipped
  }
}

}  // namespace cairn::commands
