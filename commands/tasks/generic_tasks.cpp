#include "commands/tasks/generic_tasks.h"

#include <set>

#include "commands/tasks/task_decider.h"
#include "commands/tasks/task_events.h"
#include "commands/tenancy/tenancy_decider.h"

namespace cairn::commands {

std::vector<const TaskRecord*> LiveGenericSubtree(const DecisionState& state,
                                                  const TaskRecord& root) {
  std::vector<const TaskRecord*> subtree = {&root};
  // Generic tasks are few and pauses rare: one pass over the live generic tasks, reading each
  // one's parent from its spec, finds the children of all found so far until none is new.
  std::vector<std::pair<const TaskRecord*, std::string>> live;
  for (const auto& [task_id, task] : state.tasks) {
    if (task.task_type != events::TASK_TYPE_GENERIC || task.state == TaskState::kExited) continue;
    live.emplace_back(&task, task.Spec().generic().parent_task_id());
  }
  std::set<std::string> found = {root.task_id};
  for (size_t next = 0; next < subtree.size(); ++next) {
    for (const auto& [task, parent] : live) {
      if (parent == subtree[next]->task_id && found.insert(task->task_id).second) {
        subtree.push_back(task);
      }
    }
  }
  return subtree;
}

Status CheckGenericLinks(const DecisionState& state, const events::GenericTaskRef& generic) {
  for (const std::string* linked : {&generic.parent_task_id(), &generic.forked_from()}) {
    if (linked->empty()) continue;
    const TaskRecord* task = state.FindTask(*linked);
    if (task == nullptr || task->task_type != events::TASK_TYPE_GENERIC) {
      return Status::NotFound("task '" + *linked + "' not found");
    }
  }
  return Status::Ok();
}

const TaskRecord& GenericRoot(const DecisionState& state, const TaskRecord& task) {
  const TaskRecord* at = &task;
  std::set<std::string> seen = {task.task_id};
  while (at->state != TaskState::kExited) {
    const std::string parent_id = at->Spec().generic().parent_task_id();
    const TaskRecord* parent = parent_id.empty() ? nullptr : state.FindTask(parent_id);
    if (parent == nullptr || !seen.insert(parent_id).second) break;
    at = parent;
  }
  return *at;
}

Status MayChangeGenericTree(const DecisionState& state, const UserRecord& user,
                            const TaskRecord& root, const std::string& action) {
  std::vector<const TaskRecord*> members = {&root};
  if (root.task_type == events::TASK_TYPE_GENERIC) members = LiveGenericSubtree(state, root);
  // Every task the command reaches: a child someone else hung under it is theirs to stop.
  for (const TaskRecord* member : members) {
    CAIRN_RETURN_IF_ERROR(AuthorizeJobChange(state, user, *member->job, action + member->task_id));
  }
  return Status::Ok();
}

Result<Decision> DecideCommand(const DecisionState& state, const HoldTask& command,
                               const CommandMeta&) {
  const TaskRecord* task = state.FindTask(command.task_id);
  if (task == nullptr) return Status::NotFound("task '" + command.task_id + "' not found");
  const char* verb = command.held ? "pause" : "unpause";
  if (task->task_type != events::TASK_TYPE_GENERIC) {
    return Status::FailedPrecondition(
        std::string("cannot ") + verb + " task " + task->task_id +
        ": only generic tasks (det task create) are paused; pause an experiment with det "
        "experiment pause, and kill other tasks");
  }
  if (task->state == TaskState::kExited) {
    return Status::FailedPrecondition(std::string("cannot ") + verb + " task " + task->task_id +
                                      " as it has ended");
  }
  if (command.held && task->held) {
    return Status::FailedPrecondition("cannot pause task " + task->task_id +
                                      " as it is already paused");
  }
  if (!command.held && !task->held) {
    return Status::FailedPrecondition("cannot unpause task " + task->task_id +
                                      " as it is not paused");
  }
  if (!command.held && task->holds_allocation()) {
    return Status::FailedPrecondition("cannot unpause task " + task->task_id +
                                      " while it is still stopping for its pause");
  }
  if (command.held && task->Spec().generic().no_pause()) {
    return Status::FailedPrecondition("cannot pause task " + task->task_id +
                                      " with `no_pause` set to true");
  }
  const std::string reason = std::string(command.held ? "paused" : "unpaused") +
                             (command.by.empty() ? "" : " by " + command.by);
  Decision decision{{}, task->task_id};
  for (const TaskRecord* member : LiveGenericSubtree(state, *task)) {
    if (member->held == command.held) continue;
    // Already stopping (killed, or paused before): nothing to add. Still stopping for a pause:
    // it is released held, and stays paused.
    // A preemption's kill already stops it; the hold keeps it out of the queue afterwards.
    if (command.held ? member->kill_requested && !member->preempting : member->holds_allocation()) {
      continue;
    }
    // A descendant that must not pause runs on; the task asked about was checked above.
    if (command.held && member != task && member->Spec().generic().no_pause()) continue;
    auto* held = decision.events.emplace_back().mutable_task_held();
    held->set_task_id(member->task_id);
    held->set_held(command.held);
    held->set_reason(reason);
    if (command.held && member->holds_allocation() && !member->kill_requested) {
      decision.events.push_back(KillOrderFor(*member, reason, KillBy::kSystem));
    }
  }
  return decision;
}

Status MayRun(const DecisionState& state, const UserRecord& user, const HoldTask& command) {
  const TaskRecord* task = state.FindTask(command.task_id);
  if (task == nullptr) return Status::Ok();
  return MayChangeGenericTree(state, user, *task,
                              std::string(command.held ? "pause" : "unpause") + " task ");
}

}  // namespace cairn::commands
