// Tasks of every kind (`det task list`, `det task logs`), with the scheduler's explanation of a
// live task.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ListTasks(Call& call);      // GET /api/v1/tasks
net::Response GetTask(Call& call);        // GET /api/v1/tasks/{id}
net::Response TaskLogs(Call& call);       // GET /api/v1/tasks/{id}/logs[?follow=true]
net::Response TaskLogFields(Call& call);  // GET /api/v1/tasks/{id}/logs/fields[?follow=true]
net::Response KillTaskRoute(Call& call);  // POST /api/v1/tasks/{id}/kill

}  // namespace cairn::api
