// Why a task is where it is — pending, placed, preempted, ended — in words, from the decision
// state alone. Because the state is a fold of the log, replay can answer this as of any offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/decision_state.h"
#include "commands/scheduler/scheduler.h"

namespace cairn::commands {

struct JobAhead {
  std::string job_id;
  int32_t priority = 0;
  int32_t slots = 0;  // requested by its live tasks
  bool running = false;
};

// How many of the jobs ahead an explanation lists (the job queue, GET /api/v1/job-queues-v2,
// lists them all).
inline constexpr size_t kJobsAheadListed = 20;

struct TaskExplanation {
  std::string state;                 // QUEUED, ASSIGNED, RUNNING, TERMINATING, EXITED
  std::string reason;                // the whole answer, in words
  size_t jobs_ahead_count = 0;       // live jobs ahead of its job in its pool's queue
  std::vector<JobAhead> jobs_ahead;  // the first kJobsAheadListed of them
};

// `now_unix_micros` is the time the question is asked as of (an event's time under replay).
// Costs about as much as the scheduler's pass over the task's pool (once per state with
// `passes`), and no more than a few lookups when that pool has no schedulable agent.
// `passes`, when given, keeps the passes over pools with agents for later questions about the
// same state (scheduler.h ExplainedPasses).
Result<TaskExplanation> ExplainTask(const DecisionState& state, const std::string& task_id,
                                    int64_t now_unix_micros, ExplainedPasses* passes = nullptr);

struct JobsAhead {
  size_t count = 0;
  std::vector<JobAhead> first;  // the first `limit` of them
};

// The live jobs ahead of `job` in its pool's queue order (priority, then queue position, under
// the priority scheduler; queue position otherwise); running jobs count, as in Determined's job
// queue. O(log n + limit).
JobsAhead JobsAheadOf(const DecisionState& state, const JobRecord& job, size_t limit);

}  // namespace cairn::commands
