// Determined 0.38's generic tasks (`det task create|fork|config|pause|unpause|kill`): a task
// running its config's entrypoint with its context directory, which may fork another's config
// and context, hang under a parent, and be paused (its allocation released, the task held out of
// the queue) and unpaused. Any user who may create work in the project's workspace creates one;
// pausing, unpausing and killing take the right to change the task's job (its owner, the
// workspace's admins, cluster admins).
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response CreateGenericTask(Call& call);  // POST /api/v1/generic-tasks
net::Response GetTaskConfig(Call& call);      // GET /api/v1/tasks/{id}/config
net::Response PauseTask(Call& call);          // POST /api/v1/tasks/{id}/pause
net::Response UnpauseTask(Call& call);        // POST /api/v1/tasks/{id}/unpause

}  // namespace cairn::api
