// Ends notebooks, shells and TensorBoards left idle (the seeds: "notebooks are terminated after a
// configurable idle period"). A task is idle when no byte went through the master's proxy to it
// and, for a notebook, Jupyter reports no kernel activity, for its idle_timeout (the task's
// config, else master.yaml's notebook_timeout / tensorboard_timeout). The kill is an ordinary
// KillTask command, recorded with reason "idle: ..." by actor system:idle-watch, so replay and
// explain show it. Traffic is counted in memory: a master that restarts starts every clock anew
// (a task is never killed early because of a restart, possibly late).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "master/decision_loop.h"
#include "projections/projections.h"

namespace cairn {

class IdleWatch {
 public:
  struct Options {
    std::chrono::milliseconds check_period{1000};
    // Defaults for tasks whose config sets no idle_timeout; 0 = never.
    int64_t notebook_timeout_seconds = 0;
    int64_t tensorboard_timeout_seconds = 0;
    std::string agent_token;  // derives a notebook's Jupyter token (base/task_secrets.h)
  };

  // `loop` and `projections` must outlive the watch.
  IdleWatch(DecisionLoop* loop, Projections* projections, Options options);
  ~IdleWatch() { Stop(); }

  void Start();
  void Stop();
  // The proxy moved bytes for the task (or began a request). Thread-safe.
  void RecordTraffic(const std::string& task_id);
  // One check at `now` (steady clock); returns the tasks it asked to kill. Thread-safe.
  std::vector<std::string> CheckOnce(std::chrono::steady_clock::time_point now);

 private:
  // The newest kernel activity of a notebook's Jupyter, as a steady-clock time; nullopt when it
  // cannot be asked (it then counts as no activity).
  std::optional<std::chrono::steady_clock::time_point> KernelActivity(
      const std::string& task_id, std::chrono::steady_clock::time_point now);

  DecisionLoop* loop_;
  Projections* projections_;
  const Options options_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
  // The last activity of every live interactive task seen, by task id. Guarded by mutex_.
  std::map<std::string, std::chrono::steady_clock::time_point> last_activity_;
  std::thread thread_;
};

}  // namespace cairn
