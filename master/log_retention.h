// Log retention, as Determined's `retention_policy`: an ended task's logs are removed once it
// ended more than log_retention_days ago (its experiment's retention_policy, else master.yaml's;
// -1 keeps them forever). A sweep runs on master.yaml's schedule and on `det master cleanup-logs`
// (POST /api/v1/cleanup_logs). Each sweep records what it removes first (ExpireTaskLogs, a
// TaskLogsExpired event with the policy as its reason) and then deletes the lines: the events
// about a task stay, so replay, audit and explain still show its whole life. Every sweep also
// removes whatever lines tasks recorded as expired before still have (a delete that failed, or a
// cache of the Kafka task-log topic rebuilt at start). With log_max_total_bytes, a sweep that
// finds all tasks' logs holding more removes the logs of ended tasks, longest-ended first, until
// they hold at most three quarters of it (recorded the same way, with the bound as the reason);
// running tasks' logs are bounded by log_max_task_bytes instead.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/schedule.h"
#include "base/status.h"
#include "events/task_log_store.h"
#include "master/decision_loop.h"
#include "projections/projections.h"

namespace cairn {

class LogRetention {
 public:
  struct Options {
    int default_days = -1;             // master.yaml's retention_policy.log_retention_days
    uint64_t max_total_bytes = 0;      // retention_policy.log_max_total_bytes; 0: no bound
    std::optional<Schedule> schedule;  // none: only when asked
  };

  // `log`, `loop`, `projections` and `logs` must outlive the retention.
  LogRetention(EventLog* log, DecisionLoop* loop, Projections* projections, TaskLogStore* logs,
               Options options);
  ~LogRetention() { Stop(); }

  // Sweeps on the schedule (nothing without one).
  void Start();
  void Stop();

  // One sweep at `now_unix_micros`, recorded by `actor` ("system:log-retention", or the admin
  // who asked); returns how many lines it removed. Thread-safe (sweeps run one at a time).
  Result<uint64_t> Sweep(int64_t now_unix_micros, const std::string& actor);

 private:
  EventLog* log_;
  DecisionLoop* loop_;
  Projections* projections_;
  TaskLogStore* logs_;
  const Options options_;
  std::mutex sweep_mutex_;  // one sweep at a time
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn
