#include "commands/tasks/task_events.h"

namespace cairn::commands {

events::Envelope KillOrderFor(const TaskRecord& task, const std::string& reason, KillBy by) {
  events::Envelope event;
  auto* kill = event.mutable_kill_requested();
  kill->set_task_id(task.task_id);
  kill->set_allocation_id(task.allocation_id);
  kill->set_agent_id(task.agent_id);
  kill->set_agent_incarnation(task.where().agent_incarnation);
  if (task.where().parts.size() > 1) {
    for (const auto& part : task.where().parts) *kill->add_parts() = part;
  }
  kill->set_reason(reason);
  kill->set_by_user(by == KillBy::kUser);
  return event;
}

events::Envelope ExitOf(const TaskRecord& task, const std::string& reason) {
  events::Envelope event;
  auto* exited = event.mutable_task_exited();
  exited->set_task_id(task.task_id);
  exited->set_allocation_id(task.allocation_id);
  exited->set_agent_id(task.agent_id);
  exited->set_reason(reason);
  return event;
}

std::vector<events::Envelope> KillEventsFor(const TaskRecord& task, const std::string& reason,
                                            KillBy by) {
  switch (task.state) {
    case TaskState::kQueued:
      // Nothing runs yet: the kill and the end are decided together.
      return {KillOrderFor(task, reason, by),
              ExitOf(task, "killed before it was scheduled (" + reason + ")")};
    case TaskState::kAssigned:
    case TaskState::kRunning:
      return {KillOrderFor(task, reason, by)};
    case TaskState::kTerminating:
      // Stopping for a pause: the kill already asked for stands, but its exit must end the task,
      // not release it back to the queue held.
      if (task.held) {
        events::Envelope released;
        auto* unheld = released.mutable_task_held();
        unheld->set_task_id(task.task_id);
        unheld->set_held(false);
        unheld->set_reason(reason);
        return {std::move(released)};
      }
      return {};
    case TaskState::kExited:
      return {};
  }
  return {};
}

}  // namespace cairn::commands
