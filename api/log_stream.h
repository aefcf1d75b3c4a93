// Task logs as Determined streams them (NDJSON lines {"result": {...}}), for one task or for the
// runs of a trial one after another. Shared by the task and trial log endpoints.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/services.h"
#include "net/http_types.h"

namespace cairn::api {

struct LogSources {
  std::vector<std::string> task_ids;  // in order; a later call may add to the end
  bool ended = false;                 // no more lines will come once these are read
  int64_t trial_id = 0;               // set for a trial's logs: each line names it (Determined's
                                      // CLI reads `trialId` of every trial log line)
};

// Streams every line of the sources' tasks in order. With `follow`, keeps going (calling
// `sources` again to see new tasks and the end) until the sources have ended and every line is
// out, or the master stops; without, returns what is there now.
net::Response StreamTaskLogs(const Services& services, bool follow,
                             std::function<LogSources()> sources);

}  // namespace cairn::api
