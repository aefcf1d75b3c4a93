// Determined's commands (`det cmd run/list`, `det task kill`), and the priority of the
// interactive task kinds (`set_priority` of commands, notebooks, shells and TensorBoards).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/call.h"
#include "views.pb.h"

namespace cairn::api {

net::Response LaunchCommand(Call& call);  // POST /api/v1/commands
// GET /api/v1/commands[?offset=&limit=&orderBy=ORDER_BY_DESC (newest first)&users=&workspaceId=]
net::Response ListCommands(Call& call);
// What a list of tasks of `type` shows for `call` depends on (BulkVersioned): the version of the
// views of ?users=' tasks of that type (everyone's when none) and the access generation;
// Unavailable (nothing kept) while not every projection applied that version's event.
Result<std::string> TaskListAnswerVersion(Call& call, events::TaskType type);
template <events::TaskType type>
Result<std::string> TaskListVersionOf(Call& call) {
  return TaskListAnswerVersion(call, type);
}
net::Response GetCommand(Call& call);   // GET /api/v1/commands/{id}
net::Response KillCommand(Call& call);  // POST /api/v1/commands/{id}/kill
// POST /api/v1/{commands,notebooks,shells,tensorboards}/{id}/set_priority
net::Response SetCommandPriority(Call& call);
net::Response SetNotebookPriority(Call& call);
net::Response SetShellPriority(Call& call);
net::Response SetTensorboardPriority(Call& call);

// A page of the tasks of `type` the caller may list (TaskListFilter), by Determined's offset and
// limit (0: to the end) in submission order, or newest first with orderBy=ORDER_BY_DESC, each
// rendered by `render`. Reads only as many views as the page needs.
Result<nlohmann::json> TaskPage(
    Call& call, events::TaskType type,
    const std::function<nlohmann::json(const views::TaskView&)>& render);

// Whether a task belongs in the caller's list of tasks: one they may see, in ?workspaceId=, of
// one of ?users= and in one of ?states= (Determined's names, STATE_QUEUED...) when those are
// given. An unknown state is an InvalidArgument.
Result<std::function<bool(const views::TaskView&)>> TaskListFilter(Call& call);

// A task submitted from a launch request's body (config with its template, files, workspaceId,
// force), of `type`, with the keys in `extra_keys` allowed besides; `complete` (may be empty)
// adds to the submission before it is executed. Answers once the projections show the task.
struct LaunchedTask {
  views::TaskView task;
  uint64_t offset = 0;
};
Result<LaunchedTask> LaunchTaskOfBody(Call& call, const nlohmann::json& body, events::TaskType type,
                                      const std::vector<std::string>& extra_keys,
                                      const std::function<Status(commands::SubmitTask&)>& complete);

// Shared with the task routes: the task or NotFound, and a user's kill of any task (answered
// with the command's new shape when `as_command`; `from_root`: a generic task's whole tree).
Result<views::TaskView> LoadTask(Call& call, const std::string& task_id);
net::Response KillTask(Call& call, const std::string& id, bool as_command, bool from_root = false);

}  // namespace cairn::api
