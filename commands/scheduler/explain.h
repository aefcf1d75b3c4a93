// Why a task is where it is — pending, placed, preempted, ended — in words, from the decision
// state alone. Because the state is a fold of the log, replay can answer this as of any offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/decision_state.h"

namespace cairn::commands {

struct JobAhead {
  std::string job_id;
  int32_t priority = 0;
  int32_t slots = 0;  // requested by its live tasks
  bool running = false;
};

struct TaskExplanation {
  std::string state;                 // QUEUED, ASSIGNED, RUNNING, TERMINATING, EXITED
  std::string reason;                // the whole answer, in words
  std::vector<JobAhead> jobs_ahead;  // live jobs ahead of its job in its pool's queue
};

// `now_unix_micros` is the time the question is asked as of (an event's time under replay).
Result<TaskExplanation> ExplainTask(const DecisionState& state, const std::string& task_id,
                                    int64_t now_unix_micros);

// The live jobs ahead of `job` in its pool's queue order (priority, then queue position);
// running jobs count, as in Determined's job queue.
std::vector<JobAhead> JobsAheadOf(const DecisionState& state, const JobRecord& job);

}  // namespace cairn::commands
