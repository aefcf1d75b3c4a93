// Runs tasks as child processes (PROTOCOL.md §5): each in its own process group, with stdout and
// stderr read line by line, and killed as a group (SIGTERM, then SIGKILL after a grace period).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::agent {

// The full path of `program` in the colon-separated `path_env`, or "" when no executable
// file of that name is there.
std::string FindOnPath(const std::string& program, const std::string& path_env);

// A Unix account a process runs as: its uid, its gid and no supplementary groups.
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
};

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] without a '/' is searched on the PATH of `env`
  std::vector<std::string> env;   // the complete environment, "KEY=VALUE"
  std::string work_dir;           // must exist
  // Unset: the agent's own account. Set: the process starts as this account through util-linux's
  // setpriv (posix_spawn cannot change ids), which the agent must be root to use.
  std::optional<RunAs> run_as;
  // Lines shipped first, on stderr, before anything the process prints (seq from 0): what the
  // agent did for the task (the image it unpacked, a warning), so that the task's log says so.
  std::vector<std::string> preamble;
  // Called on the supervising thread once the leader has exited and its group was SIGKILLed,
  // before the rest of the output is read: ends what the task left outside its group (a
  // container's processes) and releases what its launch set up. Not called when Start fails.
  std::function<void()> after_exit;
};

enum class OutputStream { kStdout, kStderr };
const char* OutputStreamName(OutputStream stream);  // "stdout" | "stderr"

struct OutputLine {
  std::string key;   // the key the process was started under (an allocation id)
  uint64_t seq = 0;  // counts the lines of one process, both streams together, from 0
  OutputStream stream = OutputStream::kStdout;
  std::string text;  // with its '\n'; a last line without one, or a split over-long line, has none
  int64_t unix_micros = 0;  // when the agent read it
};

// How a process ended: exactly one of exit_code and signal is set.
struct ProcessExit {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool kill_requested = false;  // Kill() or KillAll() was called before it ended
};

// Thread-safe. Every process gets one thread of the runner, which calls the callbacks of that
// process in order: on_started, then each on_line, then on_exit (after the last line). Callbacks
// of different processes run concurrently. They may call Kill(), but not Start() or the destructor.
// When the leader of a process group exits, whatever it left behind in its group is SIGKILLed, as
// a container's processes die with its init; output is read until every writer has gone, at most
// a few seconds after the leader's exit.
class ProcessRunner {
 public:
  struct Callbacks {
    std::function<void(const std::string& key, pid_t pid)> on_started;
    std::function<void(const OutputLine& line)> on_line;
    std::function<void(const std::string& key, const ProcessExit& exit)> on_exit;
    // Whether output may be read now (empty: always). While it says no, output stays in the
    // pipes, so a process that keeps printing blocks on its writes: it is throttled, and no
    // line is lost or held in memory here. Asked again when WakeAll is called (whoever said no
    // calls it once the answer may have changed); not asked once the process exited (its pipes'
    // buffers are all that is left to read).
    std::function<bool()> may_read;
  };

  // After the leader's exit (and the SIGKILL to its group), output still buffered in the pipes
  // is read; a writer that escaped the group (setsid) cannot hold the task open (and delay its
  // on_exit) longer than this.
  static constexpr std::chrono::seconds kDrainAfterExit{5};

  ProcessRunner(Callbacks callbacks, std::chrono::milliseconds kill_grace);
  // SIGKILLs every process group still running, waits for the threads (on_exit still runs).
  ~ProcessRunner();
  ProcessRunner(const ProcessRunner&) = delete;
  ProcessRunner& operator=(const ProcessRunner&) = delete;

  // Spawns `spec` under `key` and returns its pid. NotFound when the program does not exist,
  // InvalidArgument for an empty argv, AlreadyExists when `key` still runs, IOError otherwise.
  // Nothing is called back when Start fails.
  Result<pid_t> Start(const std::string& key, const ProcessSpec& spec);

  // SIGTERM to the group of `key` now and SIGKILL when it still runs after the grace period.
  // False when no process of that key runs (never started, or already exited).
  bool Kill(const std::string& key);
  // Sends `signal_number` to the group of `key`, nothing more; false when it is not running.
  bool Signal(const std::string& key, int signal_number);
  // Kill() for every running process.
  void KillAll();
  // Wakes every process's supervising thread to ask may_read again.
  void WakeAll();

  size_t RunningCount() const;
  // Waits until no process runs (every on_exit has returned); false at the deadline.
  bool WaitAllExited(std::chrono::steady_clock::time_point deadline) const;

 private:
  struct Process;
  void Supervise(Process* process);
  void SignalLocked(Process* process, int signal_number);
  bool KillLocked(Process* process);
  void ReapFinishedLocked();

  const Callbacks callbacks_;
  const std::chrono::milliseconds kill_grace_;
  std::set<std::string> starting_;  // keys being spawned; guarded by mutex_
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, std::unique_ptr<Process>> processes_;
};

}  // namespace cairn::agent
