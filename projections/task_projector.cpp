#include "projections/task_projector.h"

#include <algorithm>

#include "events/envelope_util.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kTaskPrefix = "task/";
// "job-tasks/<job_id>" -> the job's live tasks whose ids differ from the job's: JobQueueChanged
// names a job, not its tasks. A task whose id is its job's (a command, shell, notebook or
// TensorBoard submitted through the API) is found by the job id itself.
constexpr std::string_view kJobTasksPrefix = "job-tasks/";

std::string JobTasksKey(const std::string& job_id) {
  std::string key(kJobTasksPrefix);
  key += job_id;
  return key;
}

// An event naming an allocation other than the task's own is about a stale allocation.
bool SameAllocation(const views::TaskView& task, const std::string& allocation_id) {
  return allocation_id.empty() || task.allocation_id().empty() ||
         allocation_id == task.allocation_id();
}

bool HoldsAllocation(const views::TaskView& task) {
  return task.state() == views::TASK_STATE_ASSIGNED || task.state() == views::TASK_STATE_RUNNING ||
         task.state() == views::TASK_STATE_TERMINATING;
}

void OnSubmitted(const Envelope& event, views::TaskView& task) {
  const auto& submitted = event.task_submitted();
  task.set_task_id(submitted.task_id());
  // A task submitted without a job is its own job, as in the decision state.
  task.set_job_id(submitted.job_id().empty() ? submitted.task_id() : submitted.job_id());
  task.set_task_type(submitted.spec().task_type());
  task.set_description(submitted.spec().description());
  task.mutable_entrypoint()->CopyFrom(submitted.spec().entrypoint());
  task.set_user(submitted.spec().user());
  task.set_slots(submitted.resources().slots());
  task.set_resource_pool(submitted.resources().resource_pool());
  task.set_priority(submitted.resources().priority());
  task.set_weight(submitted.resources().weight());
  task.set_state(views::TASK_STATE_QUEUED);
  task.set_submit_time_unix_micros(event.time_unix_micros());
  task.set_config_json(submitted.config_json());
  task.set_context_digest(submitted.spec().context_digest());
  task.set_idle_timeout_seconds(submitted.spec().idle_timeout_seconds());
  if (submitted.spec().has_generic()) *task.mutable_generic() = submitted.spec().generic();
  task.set_submitted_offset(event.offset());
  // 0 (events from before workspaces) reads as Uncategorized; kept 0 so old logs rebuild to
  // the same bytes.
  task.set_workspace_id(submitted.workspace_id());
}

// The allocation ended; what is left of it in the view goes (the task may get a new one).
void ClearAllocation(views::TaskView& task) {
  task.clear_allocation_id();
  task.clear_agent_id();
  task.clear_slot_ids();
  task.clear_parts();
  task.clear_parts_exited();
  task.clear_pid();
  task.clear_backfilled();
  task.clear_preemption_pending();
  task.clear_preemption_deadline_unix_micros();
  task.clear_kill_requested();
  task.clear_ready();
  task.clear_service_host();
  task.clear_service_port();
  task.clear_service_user();
  task.clear_ready_time_unix_micros();
}

// Returns whether the event changed the task.
bool OnLaterEvent(const Envelope& event, views::TaskView& task) {
  if (task.state() == views::TASK_STATE_TERMINATED) return false;
  switch (event.payload_case()) {
    case Envelope::kAllocationAssigned: {
      const auto& assigned = event.allocation_assigned();
      if (task.state() != views::TASK_STATE_QUEUED) return false;
      task.set_state(views::TASK_STATE_ASSIGNED);
      task.set_allocation_id(assigned.allocation_id());
      task.set_agent_id(assigned.agent_id());
      task.mutable_slot_ids()->CopyFrom(assigned.slot_ids());
      if (assigned.parts_size() > 1) task.mutable_parts()->CopyFrom(assigned.parts());
      task.set_backfilled(assigned.backfilled());
      task.set_placement_reason(assigned.reason());
      task.set_latest_reason(assigned.reason());
      return true;
    }
    case Envelope::kTaskStarted: {
      const auto& started = event.task_started();
      if (task.allocation_id().empty() || started.allocation_id() != task.allocation_id()) {
        return false;
      }
      // A task asked to stop before it started stays TERMINATING.
      if (task.state() == views::TASK_STATE_ASSIGNED) task.set_state(views::TASK_STATE_RUNNING);
      task.set_start_time_unix_micros(event.time_unix_micros());
      task.set_pid(started.pid());
      return true;
    }
    case Envelope::kTaskReady: {
      const auto& ready = event.task_ready();
      if (!HoldsAllocation(task) || ready.allocation_id() != task.allocation_id()) return false;
      task.set_ready(true);
      task.set_service_host(ready.service_host());
      task.set_service_port(ready.service_port());
      task.set_service_user(ready.service_user());
      task.set_ready_time_unix_micros(event.time_unix_micros());
      return true;
    }
    case Envelope::kKillRequested: {
      const auto& kill = event.kill_requested();
      if (!SameAllocation(task, kill.allocation_id())) return false;
      task.set_kill_requested(true);
      task.set_latest_reason(kill.reason());
      // A kill a user asked for ends the task, even one that was being preempted.
      if (!kill.preemption_expired()) {
        task.clear_preemption_pending();
        task.clear_preemption_deadline_unix_micros();
      }
      if (task.state() == views::TASK_STATE_ASSIGNED || task.state() == views::TASK_STATE_RUNNING) {
        task.set_state(views::TASK_STATE_TERMINATING);
      }
      return true;
    }
    case Envelope::kPreemptionRequested: {
      const auto& preemption = event.preemption_requested();
      if (!HoldsAllocation(task) || preemption.allocation_id() != task.allocation_id()) {
        return false;
      }
      task.set_preemption_pending(true);
      task.set_preemption_deadline_unix_micros(preemption.deadline_unix_micros());
      task.set_latest_reason(preemption.reason());
      return true;
    }
    case Envelope::kAllocationPartExited: {
      const auto& exited = event.allocation_part_exited();
      if (!HoldsAllocation(task) || exited.allocation_id() != task.allocation_id()) return false;
      const auto& done = task.parts_exited();
      if (std::find(done.begin(), done.end(), exited.agent_id()) != done.end()) return false;
      task.add_parts_exited(exited.agent_id());
      return true;
    }
    case Envelope::kAllocationReleased: {
      const auto& released = event.allocation_released();
      if (!HoldsAllocation(task) || released.allocation_id() != task.allocation_id()) {
        return false;
      }
      ClearAllocation(task);
      task.set_state(views::TASK_STATE_QUEUED);
      task.set_releases(task.releases() + 1);
      task.set_latest_reason(released.reason());
      return true;
    }
    case Envelope::kTaskHeld: {
      const auto& held = event.task_held();
      if (task.held() == held.held()) return false;
      task.set_held(held.held());
      task.set_latest_reason(held.reason());
      return true;
    }
    case Envelope::kTaskExited: {
      const auto& exited = event.task_exited();
      if (!SameAllocation(task, exited.allocation_id())) return false;
      task.set_state(views::TASK_STATE_TERMINATED);
      task.clear_preemption_pending();
      task.clear_preemption_deadline_unix_micros();
      if (exited.has_exit_code()) task.set_exit_code(exited.exit_code());
      if (exited.has_signal()) task.set_signal(exited.signal());
      task.set_exit_reason(exited.reason());
      task.set_latest_reason(exited.reason());
      task.set_end_time_unix_micros(event.time_unix_micros());
      return true;
    }
    default:
      return false;
  }
}

// A job's scheduling parameters changed: every live task of the job follows, as in the decision
// state (a running task's allocation is unaffected; what it would queue with changes).
Status OnJobQueueChanged(const Envelope& event, ViewStore& store) {
  const auto& changed = event.job_queue_changed();
  CAIRN_ASSIGN_OR_RETURN(auto list, store.Get(JobTasksKey(changed.job_id())));
  std::vector<std::string> task_ids = list ? SplitIds(*list) : std::vector<std::string>();
  task_ids.push_back(changed.job_id());
  ScratchArena scratch;
  views::TaskView* scratch_task = scratch.Create<views::TaskView>();
  for (const auto& task_id : task_ids) {
    const std::string key = TaskKey(task_id);
    CAIRN_ASSIGN_OR_RETURN(views::TaskView * found, OpenView(store, key, scratch_task));
    if (found == nullptr || found->job_id() != changed.job_id() ||
        found->state() == views::TASK_STATE_TERMINATED) {
      continue;
    }
    views::TaskView& task = *found;
    task.set_priority(changed.priority());
    task.set_weight(changed.weight());
    task.set_resource_pool(changed.resource_pool());
    task.set_last_event_offset(event.offset());
    CAIRN_RETURN_IF_ERROR(store.PutMessage(key, task));
  }
  return Status::Ok();
}

// Only an experiment's job has several tasks; any other job has one, so its entry is written
// and removed without reading it first (a read that misses costs the rebuild most).
Status AddToJob(const views::TaskView& task, ViewStore& store) {
  if (task.task_id() == task.job_id()) return Status::Ok();
  const std::string key = JobTasksKey(task.job_id());
  if (task.task_type() != events::TASK_TYPE_TRIAL) return store.Put(key, task.task_id());
  CAIRN_ASSIGN_OR_RETURN(auto list, store.Get(key));
  std::string value = list.value_or("");
  if (!value.empty()) value.push_back('\n');
  value += task.task_id();
  return store.Put(key, value);
}

Status RemoveFromJob(const views::TaskView& task, ViewStore& store) {
  if (task.task_id() == task.job_id()) return Status::Ok();
  const std::string key = JobTasksKey(task.job_id());
  if (task.task_type() != events::TASK_TYPE_TRIAL) return store.Delete(key);
  const std::string& task_id = task.task_id();
  CAIRN_ASSIGN_OR_RETURN(auto list, store.Get(key));
  if (!list) return Status::Ok();
  std::vector<std::string> ids = SplitIds(*list);
  ids.erase(std::remove(ids.begin(), ids.end(), task_id), ids.end());
  return ids.empty() ? store.Delete(key) : store.Put(key, JoinIds(ids));
}

}  // namespace

std::string TaskKey(const std::string& task_id) {
  std::string key(kTaskPrefix);
  key += task_id;
  return key;
}

Status TaskProjector::Apply(const Envelope& event, ViewStore& store) const {
  if (event.has_job_queue_changed()) return OnJobQueueChanged(event, store);
  if (event.has_task_logs_expired()) {
    for (const auto& task_id : event.task_logs_expired().task_ids()) {
      views::TaskView task;
      CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(TaskKey(task_id), &task));
      if (!exists || task.logs_expired()) continue;
      task.set_logs_expired(true);
      task.set_last_event_offset(event.offset());
      CAIRN_RETURN_IF_ERROR(store.PutMessage(TaskKey(task_id), task));
    }
    return Status::Ok();
  }
  const std::string& task_id = TaskIdOf(event);
  if (task_id.empty()) return Status::Ok();
  const std::string key = TaskKey(task_id);
  ScratchArena scratch;
  views::TaskView* scratch_task = scratch.Create<views::TaskView>();
  CAIRN_ASSIGN_OR_RETURN(views::TaskView * found, OpenView(store, key, scratch_task));
  const bool exists = found != nullptr;
  views::TaskView& task = exists ? *found : *scratch_task;
  if (event.has_task_submitted()) {
    if (exists) return Status::Ok();  // a task is submitted once; a repeat changes nothing
    OnSubmitted(event, task);
    CAIRN_RETURN_IF_ERROR(AddToJob(task, store));
  } else if (!exists || !OnLaterEvent(event, task)) {
    return Status::Ok();
  } else if (task.state() == views::TASK_STATE_TERMINATED) {
    CAIRN_RETURN_IF_ERROR(RemoveFromJob(task, store));
  }
  task.set_last_event_offset(event.offset());
  return store.PutMessage(key, task);
}

Result<std::optional<views::TaskView>> ReadTask(ViewReader& reader, const std::string& task_id) {
  views::TaskView task;
  CAIRN_ASSIGN_OR_RETURN(bool exists, GetMessage(reader, TaskKey(task_id), &task));
  if (!exists) return std::optional<views::TaskView>();
  return std::optional<views::TaskView>(std::move(task));
}

Result<std::vector<views::TaskView>> ReadTasks(ViewReader& reader) {
  std::vector<views::TaskView> tasks;
  Status parse_error;
  CAIRN_RETURN_IF_ERROR(reader.Scan(kTaskPrefix, [&](std::string_view key, std::string_view value) {
    views::TaskView& task = tasks.emplace_back();
    if (!task.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      parse_error = Status::Corruption("unparsable TaskView at key '" + std::string(key) + "'");
      return false;
    }
    return true;
  }));
  CAIRN_RETURN_IF_ERROR(parse_error);
  std::sort(tasks.begin(), tasks.end(), [](const views::TaskView& a, const views::TaskView& b) {
    return a.submitted_offset() < b.submitted_offset();
  });
  return tasks;
}

}  // namespace cairn::projections
