// Tasks of every kind (`det task list`, `det task logs`), with the scheduler's explanation of a
// live task.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response ListTasks(Call& call);      // GET /api/v1/tasks
http::Response GetTask(Call& call);        // GET /api/v1/tasks/{id}
http::Response TaskLogs(Call& call);       // GET /api/v1/tasks/{id}/logs[?follow=true]
http::Response KillTaskRoute(Call& call);  // POST /api/v1/tasks/{id}/kill

}  // namespace cairn::api
