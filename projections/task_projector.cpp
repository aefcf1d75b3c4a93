#include "projections/task_projector.h"

#include <algorithm>

#include "events/envelope_util.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kTaskPrefix = "task/";

// An event naming an allocation other than the task's own is about a stale allocation.
bool SameAllocation(const views::TaskView& task, const std::string& allocation_id) {
  return allocation_id.empty() || task.allocation_id().empty() ||
         allocation_id == task.allocation_id();
}

void OnSubmitted(const Envelope& event, views::TaskView& task) {
  const auto& submitted = event.task_submitted();
  task.set_task_id(submitted.task_id());
  task.set_job_id(submitted.job_id());
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
  task.set_submitted_offset(event.offset());
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
      task.set_placement_reason(assigned.reason());
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
    case Envelope::kKillRequested: {
      if (!SameAllocation(task, event.kill_requested().allocation_id())) return false;
      task.set_kill_requested(true);
      if (task.state() == views::TASK_STATE_ASSIGNED || task.state() == views::TASK_STATE_RUNNING) {
        task.set_state(views::TASK_STATE_TERMINATING);
      }
      return true;
    }
    case Envelope::kTaskExited: {
      const auto& exited = event.task_exited();
      if (!SameAllocation(task, exited.allocation_id())) return false;
      task.set_state(views::TASK_STATE_TERMINATED);
      if (exited.has_exit_code()) task.set_exit_code(exited.exit_code());
      if (exited.has_signal()) task.set_signal(exited.signal());
      task.set_exit_reason(exited.reason());
      task.set_end_time_unix_micros(event.time_unix_micros());
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

std::string TaskKey(const std::string& task_id) {
  std::string key(kTaskPrefix);
  key += task_id;
  return key;
}

Status TaskProjector::Apply(const Envelope& event, ViewStore& store) const {
  const std::string task_id = TaskIdOf(event);
  if (task_id.empty()) return Status::Ok();
  const std::string key = TaskKey(task_id);
  ScratchArena scratch;
  views::TaskView& task = *scratch.Create<views::TaskView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(key, &task));
  if (event.has_task_submitted()) {
    if (exists) return Status::Ok();  // a task is submitted once; a repeat changes nothing
    OnSubmitted(event, task);
  } else if (!exists || !OnLaterEvent(event, task)) {
    return Status::Ok();
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
