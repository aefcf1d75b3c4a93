// Test support shared by every suite: a temporary directory, a child process whose stdout can be
// waited on line by line, and the paths of the binaries this build produced.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace cairn::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A plain TCP connection to 127.0.0.1:`port`, for sending what no client would; -1 on failure.
int RawConnection(uint16_t port);
// What the peer sends on `fd` until it closes the connection (or `max_bytes` of it).
std::string ReadUntilClosed(int fd, size_t max_bytes = size_t{1} << 20);

// A field of /proc/<pid>/status as a number (sizes in kB: VmRSS, VmHWM, VmSize; counts:
// Threads); nullopt when the process or the field is not there.
std::optional<int64_t> ProcStatusField(pid_t pid, const std::string& field);

// The value of one sample of a Prometheus text exposition (GET /metrics), named as the text
// writes it: `cairn_memory_bytes{part="resident"}`. nullopt when the exposition has none.
std::optional<double> PrometheusSample(const std::string& exposition, const std::string& series);

// The regular files under `dir` (recursively) whose bytes hold `text`: a credential that must
// not be on disk in the clear. nullopt when `dir` holds no file at all (nothing was checked).
std::optional<std::vector<std::string>> FilesHolding(const std::string& dir,
                                                     const std::string& text);

// The path of a binary of this build, e.g. BinaryPath("cairn-master").
std::string BinaryPath(const std::string& name);

// The nice value of each of this process's threads whose name starts with `prefix`.
std::vector<int> NiceOfThreadsNamed(const std::string& prefix);

// A real child process. Its stdout is captured line by line (stderr is inherited so it shows in
// the test log). The destructor kills (SIGKILL) and reaps it if it still runs.
class ChildProcess {
 public:
  // `with_stderr`: stderr goes to the same pipe as stdout, so its lines can be waited for too.
  static Result<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                     const std::vector<std::string>& extra_env = {},
                                                     bool with_stderr = false);
  ~ChildProcess();

  // Waits until a stdout line (already seen or new) satisfies `predicate`; returns it.
  // DeadlineExceeded after `timeout`, Unavailable if the process exits first.
  Result<std::string> WaitForLine(const std::function<bool(const std::string&)>& predicate,
                                  std::chrono::milliseconds timeout);
  // Every stdout line so far.
  std::vector<std::string> Lines();

  void Signal(int signal_number);
  // Waits for exit; returns the raw wait status (use WIFEXITED etc.).
  Result<int> Wait(std::chrono::milliseconds timeout);
  bool running();
  pid_t pid() const { return pid_; }

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
  std::string partial_;
  bool stdout_closed_ = false;
  std::optional<int> wait_status_;
  std::thread reader_;
  std::thread waiter_;
};

// A process run to its end with its stderr merged into its stdout, to read usage errors and logs.
struct FinishedProcess {
  int exit_code = -1;  // -1: it did not exit normally within the timeout
  std::vector<std::string> lines;
  std::string Text() const;  // every line, each ended by '\n'
};
FinishedProcess RunToEnd(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Builds a tiny OCI image offline into `archive` (an oci-archive, tag "1") with umoci: Debian's
// busybox-static as /bin (sh, cat, ls, ...), /marker holding "image-marker", /lib and /lib64
// pointing into /usr (bind-mount the host's /usr to run its python3), and in its config
// PATH=/bin:/usr/bin and IMAGE_VARIABLE=from-image. The error quotes umoci's output.
Status BuildBusyboxImage(const std::string& archive, const std::string& scratch_dir);

}  // namespace cairn::testing
