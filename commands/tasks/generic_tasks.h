// Determined 0.38's generic tasks (TASK_TYPE_GENERIC, `det task create`): tasks that form trees
// (TaskSpec.generic.parent_task_id) and are paused and unpaused as Slurm holds and releases a
// job. A paused task is held: out of its queue while it waits, and released back to it (not
// ended) when its running allocation is killed for the pause. Unpausing returns it to the
// queue at its old position. A kill of a generic task takes its live descendants with it. Pure.
#pragma once

#include <string>
#include <vector>

#include "commands/decision_state.h"

namespace cairn::commands {

// The task and its live (not exited) descendants, parents before children.
std::vector<const TaskRecord*> LiveGenericSubtree(const DecisionState& state,
                                                  const TaskRecord& root);
// A new generic task's parent and the task it forks: known generic tasks, or NotFound.
Status CheckGenericLinks(const DecisionState& state, const events::GenericTaskRef& generic);

// OK when `user` may change `root` and, for a generic task, each live task under it (a kill or
// pause reaches them all); otherwise the first refusal, naming `action` and the task.
Status MayChangeGenericTree(const DecisionState& state, const UserRecord& user,
                            const TaskRecord& root, const std::string& action);

// The topmost ancestor of a generic task that is still known (det task kill --root).
const TaskRecord& GenericRoot(const DecisionState& state, const TaskRecord& task);

}  // namespace cairn::commands
