#include "agent/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "base/clock.h"
#include "events/envelope_util.h"

namespace cairn::agent {
namespace {

using Clock = std::chrono::steady_clock;

// A line longer than this is shipped in pieces, so one endless line cannot exhaust memory.
constexpr size_t kMaxLineBytes = 64 * 1024;

std::string ErrnoText(int error) { return std::strerror(error); }

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// The value of PATH in a "KEY=VALUE" environment, or the POSIX default.
std::string PathOf(const std::vector<std::string>& env) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->rfind("PATH=", 0) == 0) return it->substr(5);
  }
  return "/usr/local/bin:/usr/bin:/bin";
}

// Owns the posix_spawn attribute objects for one spawn.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions_);
    posix_spawnattr_init(&attributes_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attributes_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // stdin from /dev/null, stdout and stderr to the pipes, no other descriptor inherited, a fresh
  // process group, and default signal dispositions with nothing blocked, whatever the agent
  // itself blocks or ignores.
  int Prepare(int stdout_fd, int stderr_fd, const std::string& work_dir) {
    int error = 0;
    if ((error = posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY,
                                                  0)) != 0 ||
        (error = posix_spawn_file_actions_adddup2(&actions_, stdout_fd, STDOUT_FILENO)) != 0 ||
        (error = posix_spawn_file_actions_adddup2(&actions_, stderr_fd, STDERR_FILENO)) != 0 ||
        (error = posix_spawn_file_actions_addclosefrom_np(&actions_, STDERR_FILENO + 1)) != 0 ||
        (error = posix_spawn_file_actions_addchdir_np(&actions_, work_dir.c_str())) != 0) {
      return error;
    }
    sigset_t no_signals, default_signals;
    sigemptyset(&no_signals);
    sigfillset(&default_signals);
    sigdelset(&default_signals, SIGKILL);
    sigdelset(&default_signals, SIGSTOP);
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if ((error = posix_spawnattr_setflags(&attributes_, flags)) != 0 ||
        (error = posix_spawnattr_setpgroup(&attributes_, 0)) != 0 ||
        (error = posix_spawnattr_setsigmask(&attributes_, &no_signals)) != 0 ||
        (error = posix_spawnattr_setsigdefault(&attributes_, &default_signals)) != 0) {
      return error;
    }
    return 0;
  }

  const posix_spawn_file_actions_t* actions() const { return &actions_; }
  const posix_spawnattr_t* attributes() const { return &attributes_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attributes_;
};

// Splits one stream's bytes into lines.
class LineSplitter {
 public:
  // Appends `data` and hands every complete line (and over-long pieces) to `emit`.
  template <typename Emit>
  void Add(const char* data, size_t size, const Emit& emit) {
    partial_.append(data, size);
    size_t start = 0;
    while (true) {
      size_t newline = partial_.find('\n', start);
      if (newline == std::string::npos) break;
      emit(partial_.substr(start, newline + 1 - start));
      start = newline + 1;
    }
    partial_.erase(0, start);
    while (partial_.size() >= kMaxLineBytes) {
      emit(partial_.substr(0, kMaxLineBytes));
      partial_.erase(0, kMaxLineBytes);
    }
  }
  // Hands the unterminated rest, if any, to `emit`.
  template <typename Emit>
  void Finish(const Emit& emit) {
    if (!partial_.empty()) emit(std::move(partial_));
    partial_.clear();
  }

 private:
  std::string partial_;
};

}  // namespace

const char* OutputStreamName(OutputStream stream) {
  return stream == OutputStream::kStdout ? "stdout" : "stderr";
}

std::string FindOnPath(const std::string& program, const std::string& path_env) {
  if (program.empty() || program.find('/') != std::string::npos) return "";
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t end = path_env.find(':', start);
    if (end == std::string::npos) end = path_env.size();
    std::string directory = path_env.substr(start, end - start);
    if (directory.empty()) directory = ".";
    std::string candidate = directory + "/" + program;
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

struct ProcessRunner::Process {
  std::string key;
  pid_t pid = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int pid_fd = -1;
  int wake_fd = -1;  // an eventfd that Kill() writes to wake the supervising thread
  std::vector<std::string> preamble;
  std::function<void()> after_exit;  // only the supervising thread touches it
  std::thread thread;
  // Guarded by the runner's mutex_:
  bool exited = false;    // the leader has exited; its pid may no longer be signalled
  bool finished = false;  // on_exit has returned
  bool kill_requested = false;
  bool sigkill_sent = false;
  std::optional<Clock::time_point> sigkill_at;

  ~Process() {
    CloseFd(stdout_fd);
    CloseFd(stderr_fd);
    CloseFd(pid_fd);
    CloseFd(wake_fd);
  }
};

ProcessRunner::ProcessRunner(Callbacks callbacks, std::chrono::milliseconds kill_grace)
    : callbacks_(std::move(callbacks)), kill_grace_(kill_grace) {}

ProcessRunner::~ProcessRunner() {
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, process] : processes_) {
      if (process->exited) continue;
      process->kill_requested = true;
      SignalLocked(process.get(), SIGKILL);
    }
  }
  // No Start() can run concurrently with the destructor, so the map is stable while joining.
  for (auto& [key, process] : processes_) {
    if (process->thread.joinable()) process->thread.join();
  }
}

Result<pid_t> ProcessRunner::Start(const std::string& key, const ProcessSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return Status::InvalidArgument("the entrypoint is empty");
  }
  std::string program = spec.argv[0];
  if (program.find('/') == std::string::npos) {
    program = FindOnPath(program, PathOf(spec.env));
    if (program.empty()) {
      return Status::NotFound("entrypoint '" + spec.argv[0] + "' is not on the PATH");
    }
  }
  std::vector<std::string> wrapped;  // setpriv's argv, then the task's
  if (spec.run_as) {
    if (geteuid() != 0 && geteuid() != spec.run_as->uid) {
      return Status::PermissionDenied(
          "the task runs as uid " + std::to_string(spec.run_as->uid) +
          " (its linked agent user) and this agent, not root, cannot switch to it");
    }
    std::string setpriv = FindOnPath("setpriv", PathOf(spec.env));
    if (setpriv.empty()) setpriv = FindOnPath("setpriv", "/usr/bin:/bin");
    if (setpriv.empty()) {
      return Status::NotFound("setpriv (util-linux) is not installed: cannot run as uid " +
                              std::to_string(spec.run_as->uid));
    }
    wrapped = {setpriv,
               "--reuid=" + std::to_string(spec.run_as->uid),
               "--regid=" + std::to_string(spec.run_as->gid),
               "--clear-groups",
               "--",
               program};
    wrapped.insert(wrapped.end(), spec.argv.begin() + 1, spec.argv.end());
    program = setpriv;
  }
  struct stat info;
  if (stat(spec.work_dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Status::NotFound("work directory '" + spec.work_dir + "' does not exist");
  }

  {
    std::lock_guard lock(mutex_);
    ReapFinishedLocked();
    if (processes_.count(key) > 0 || starting_.count(key) > 0) {
      return Status::AlreadyExists("'" + key + "' is still running");
    }
    starting_.insert(key);
  }
  // The spawn runs without the lock, so that several launchers start processes at once.
  struct Unreserve {
    ProcessRunner* runner;
    const std::string& key;
    ~Unreserve() {
      std::lock_guard lock(runner->mutex_);
      runner->starting_.erase(key);
    }
  } unreserve{this, key};

  auto process = std::make_unique<Process>();
  process->key = key;
  process->preamble = spec.preamble;
  process->after_exit = spec.after_exit;
  int stdout_pipe[2], stderr_pipe[2];
  if (pipe2(stdout_pipe, O_CLOEXEC) != 0) return Status::IOError("pipe: " + ErrnoText(errno));
  process->stdout_fd = stdout_pipe[0];
  int stdout_write = stdout_pipe[1];
  if (pipe2(stderr_pipe, O_CLOEXEC) != 0) {
    int error = errno;
    close(stdout_write);
    return Status::IOError("pipe: " + ErrnoText(error));
  }
  process->stderr_fd = stderr_pipe[0];
  int stderr_write = stderr_pipe[1];
  fcntl(process->stdout_fd, F_SETFL, O_NONBLOCK);
  fcntl(process->stderr_fd, F_SETFL, O_NONBLOCK);

  std::vector<char*> argv, envp;
  for (const auto& arg : wrapped.empty() ? spec.argv : wrapped) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  for (const auto& entry : spec.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  SpawnSetup setup;
  int error = setup.Prepare(stdout_write, stderr_write, spec.work_dir);
  pid_t pid = -1;
  if (error == 0) {
    error = posix_spawn(&pid, program.c_str(), setup.actions(), setup.attributes(), argv.data(),
                        envp.data());
  }
  close(stdout_write);
  close(stderr_write);
  if (error != 0) {
    std::string what = "cannot start '" + spec.argv[0] + "': " + ErrnoText(error);
    if (error == ENOENT) return Status::NotFound(what);
    if (error == EACCES || error == EPERM) return Status::PermissionDenied(what);
    return Status::IOError(what);
  }
  process->pid = pid;
  // glibc 2.36's <sys/pidfd.h> lacks extern "C", so the system call is made directly.
  process->pid_fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  process->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (process->pid_fd < 0 || process->wake_fd < 0) {
    int open_error = errno;
    kill(-pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return Status::IOError("cannot watch process " + std::to_string(pid) + ": " +
                           ErrnoText(open_error));
  }
  std::lock_guard lock(mutex_);
  Process* raw = process.get();
  processes_.emplace(key, std::move(process));
  raw->thread = std::thread([this, raw] { Supervise(raw); });
  return pid;
}

bool ProcessRunner::Kill(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(key);
  if (it == processes_.end()) return false;
  return KillLocked(it->second.get());
}

bool ProcessRunner::Signal(const std::string& key, int signal_number) {
  std::lock_guard lock(mutex_);
  auto it = processes_.find(key);
  if (it == processes_.end() || it->second->exited) return false;
  SignalLocked(it->second.get(), signal_number);
  return true;
}

void ProcessRunner::KillAll() {
  std::lock_guard lock(mutex_);
  for (auto& [key, process] : processes_) KillLocked(process.get());
}

namespace {
void Wake(int wake_fd) {
  uint64_t one = 1;
  if (write(wake_fd, &one, sizeof one) < 0) {
    // The eventfd counter cannot overflow from single increments; nothing to do.
  }
}
}  // namespace

void ProcessRunner::WakeAll() {
  std::lock_guard lock(mutex_);
  for (auto& [key, process] : processes_) {
    if (!process->exited) Wake(process->wake_fd);
  }
}

bool ProcessRunner::KillLocked(Process* process) {
  if (process->exited) return false;
  if (process->kill_requested) return true;
  process->kill_requested = true;
  process->sigkill_at = Clock::now() + kill_grace_;
  SignalLocked(process, SIGTERM);
  Wake(process->wake_fd);
  return true;
}

void ProcessRunner::SignalLocked(Process* process, int signal_number) {
  // Only while the leader is unreaped: its pid (the group id) cannot have been reused then.
  if (process->exited) return;
  if (signal_number == SIGKILL) process->sigkill_sent = true;
  kill(-process->pid, signal_number);
}

size_t ProcessRunner::RunningCount() const {
  std::lock_guard lock(mutex_);
  return static_cast<size_t>(
      std::count_if(processes_.begin(), processes_.end(),
                    [](const auto& entry) { return !entry.second->finished; }));
}

bool ProcessRunner::WaitAllExited(std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline, [&] {
    return std::all_of(processes_.begin(), processes_.end(),
                       [](const auto& entry) { return entry.second->finished; });
  });
}

void ProcessRunner::ReapFinishedLocked() {
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (it->second->finished) {
      // The thread has done everything but return; joining is immediate.
      if (it->second->thread.joinable()) it->second->thread.join();
      it = processes_.erase(it);
    } else {
      ++it;
    }
  }
}

void ProcessRunner::Supervise(Process* process) {
  if (callbacks_.on_started) callbacks_.on_started(process->key, process->pid);

  uint64_t next_seq = 0;
  LineSplitter splitters[2];
  auto emitter = [&](OutputStream stream) {
    return [&, stream](std::string text) {
      if (!callbacks_.on_line) return;
      OutputLine line;
      line.key = process->key;
      line.seq = next_seq++;
      line.stream = stream;
      line.text = std::move(text);
      line.unix_micros = NowUnixMicros();
      callbacks_.on_line(line);
    };
  };
  for (const auto& text : process->preamble) emitter(OutputStream::kStderr)(text + "\n");
  int* pipe_fds[2] = {&process->stdout_fd, &process->stderr_fd};
  const OutputStream streams[2] = {OutputStream::kStdout, OutputStream::kStderr};

  ProcessExit result;
  bool leader_exited = false;
  Clock::time_point drain_deadline{};
  std::vector<char> buffer(64 * 1024);

  while (!leader_exited || process->stdout_fd >= 0 || process->stderr_fd >= 0) {
    Clock::time_point now = Clock::now();
    if (leader_exited && now >= drain_deadline) break;

    std::optional<Clock::time_point> wake_at;
    {
      std::lock_guard lock(mutex_);
      if (process->sigkill_at && !process->sigkill_sent && !process->exited) {
        if (now >= *process->sigkill_at) {
          SignalLocked(process, SIGKILL);
        } else {
          wake_at = process->sigkill_at;
        }
      }
    }
    // Once the leader exited, what is left is at most the pipes' buffers: read it whatever
    // may_read says, so that the drain ends. While it says no, WakeAll asks again.
    const bool reading = leader_exited || !callbacks_.may_read || callbacks_.may_read();
    if (leader_exited) wake_at = wake_at ? std::min(*wake_at, drain_deadline) : drain_deadline;
    int timeout_ms = -1;
    if (wake_at) {
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(*wake_at - now);
      timeout_ms = static_cast<int>(std::max<int64_t>(0, wait.count()));
    }

    pollfd fds[4];
    int count = 0;
    fds[count++] = {process->wake_fd, POLLIN, 0};
    int pid_index = -1;
    if (!leader_exited) {
      pid_index = count;
      fds[count++] = {process->pid_fd, POLLIN, 0};
    }
    int pipe_index[2] = {-1, -1};
    for (int i = 0; i < 2; ++i) {
      if (*pipe_fds[i] < 0 || !reading) continue;
      pipe_index[i] = count;
      fds[count++] = {*pipe_fds[i], POLLIN, 0};
    }
    if (poll(fds, static_cast<nfds_t>(count), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      break;  // Only a bug (bad descriptor) gets here; the reap below still runs.
    }
    if (fds[0].revents & POLLIN) {
      uint64_t ignored;
      if (read(process->wake_fd, &ignored, sizeof ignored) < 0) {
        // Already reset by an earlier read: nothing to do.
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (pipe_index[i] < 0 || fds[pipe_index[i]].revents == 0) continue;
      ssize_t n = read(*pipe_fds[i], buffer.data(), buffer.size());
      if (n > 0) {
        splitters[i].Add(buffer.data(), static_cast<size_t>(n), emitter(streams[i]));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        CloseFd(*pipe_fds[i]);
      }
    }
    if (pid_index >= 0 && (fds[pid_index].revents & POLLIN)) {
      siginfo_t info;
      std::memset(&info, 0, sizeof info);
      // Look without reaping, so that the group id stays reserved while the rest of the group is
      // killed; then reap.
      if (waitid(P_PID, static_cast<id_t>(process->pid), &info, WEXITED | WNOWAIT) == 0) {
        if (info.si_code == CLD_EXITED) {
          result.exit_code = info.si_status;
        } else {
          result.signal = info.si_status;
        }
        {
          std::lock_guard lock(mutex_);
          kill(-process->pid, SIGKILL);
          process->exited = true;
          result.kill_requested = process->kill_requested;
        }
        while (waitid(P_PID, static_cast<id_t>(process->pid), &info, WEXITED) < 0 &&
               errno == EINTR) {
        }
        if (process->after_exit) std::exchange(process->after_exit, nullptr)();
        leader_exited = true;
        drain_deadline = Clock::now() + ProcessRunner::kDrainAfterExit;
      } else if (errno != EINTR) {
        break;
      }
    }
  }

  if (!leader_exited) {
    // Only reached on an unexpected poll/waitid failure: make sure the task is gone and reaped.
    int status = 0;
    {
      std::lock_guard lock(mutex_);
      kill(-process->pid, SIGKILL);
    }
    while (waitpid(process->pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (process->after_exit) std::exchange(process->after_exit, nullptr)();
    std::lock_guard lock(mutex_);
    process->exited = true;
    result.kill_requested = process->kill_requested;
    if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    } else {
      result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    }
  }
  for (int i = 0; i < 2; ++i) splitters[i].Finish(emitter(streams[i]));
  CloseFd(process->stdout_fd);
  CloseFd(process->stderr_fd);

  if (callbacks_.on_exit) callbacks_.on_exit(process->key, result);
  std::lock_guard lock(mutex_);
  process->finished = true;
  changed_.notify_all();
}

}  // namespace cairn::agent
