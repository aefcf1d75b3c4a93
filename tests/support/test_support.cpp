#include "tests/support/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/files.h"

extern char** environ;

namespace cairn::testing {

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/cairn-test-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) std::abort();
  path_ = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

int RawConnection(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string ReadUntilClosed(int fd, size_t max_bytes) {
  std::string received;
  char chunk[4096];
  ssize_t n;
  while (received.size() < max_bytes && (n = ::read(fd, chunk, sizeof chunk)) > 0) {
    received.append(chunk, static_cast<size_t>(n));
  }
  return received;
}

std::optional<int64_t> ProcStatusField(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return std::nullopt;
}

std::optional<double> PrometheusSample(const std::string& exposition, const std::string& series) {
  // A sample is a line of its own: the series, a space, the value.
  const std::string key = series + " ";
  for (size_t at = exposition.find(key); at != std::string::npos;
       at = exposition.find(key, at + 1)) {
    if (at != 0 && exposition[at - 1] != '\n') continue;
    return std::strtod(exposition.c_str() + at + key.size(), nullptr);
  }
  return std::nullopt;
}

std::optional<std::vector<std::string>> FilesHolding(const std::string& dir,
                                                     const std::string& text) {
  std::vector<std::string> holding;
  size_t files = 0;
  std::error_code error;  // a file the running master renames or removes meanwhile is passed over
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
    if (!entry.is_regular_file(error)) continue;
    auto bytes = ReadWholeFile(entry.path().string());
    if (!bytes.ok()) continue;
    ++files;
    if (bytes->find(text) != std::string::npos) holding.push_back(entry.path().string());
  }
  if (files == 0) return std::nullopt;
  return holding;
}

std::string BinaryPath(const std::string& name) {
  return std::string(CAIRN_BINARY_DIR) + "/bin/" + name;
}

std::vector<int> NiceOfThreadsNamed(const std::string& prefix) {
  std::vector<int> nices;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name.rfind(prefix, 0) != 0) continue;
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS,
                                   static_cast<id_t>(std::stoul(entry.path().filename().string())));
    if (errno == 0) nices.push_back(nice);  // else the thread has ended meanwhile
  }
  return nices;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(const std::vector<std::string>& argv,
                                                          const std::vector<std::string>& extra_env,
                                                          bool with_stderr) {
  if (argv.empty()) return Status::InvalidArgument("empty argv");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Status::IOError("pipe failed");
  // An extra variable replaces the inherited one of its name (getenv would find the first).
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const bool replaced = std::any_of(extra_env.begin(), extra_env.end(), [&](const auto& extra) {
      return name_of(extra) == name_of(*e);
    });
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto& e : extra_env) env.push_back(e);
  std::vector<char*> c_argv, c_env;
  for (const auto& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  for (const auto& e : env) c_env.push_back(const_cast<char*>(e.c_str()));
  c_env.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return Status::IOError("fork failed");
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    if (with_stderr) dup2(pipe_fds[1], STDERR_FILENO);
    execve(c_argv[0], c_argv.data(), c_env.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->stdout_fd_ = pipe_fds[0];
  ChildProcess* self = child.get();
  child->reader_ = std::thread([self] {
    char buffer[4096];
    while (true) {
      ssize_t n = read(self->stdout_fd_, buffer, sizeof buffer);
      if (n <= 0) break;
      std::lock_guard lock(self->mutex_);
      self->partial_.append(buffer, static_cast<size_t>(n));
      size_t newline;
      while ((newline = self->partial_.find('\n')) != std::string::npos) {
        self->lines_.push_back(self->partial_.substr(0, newline));
        self->partial_.erase(0, newline + 1);
      }
      self->changed_.notify_all();
    }
    std::lock_guard lock(self->mutex_);
    if (!self->partial_.empty()) self->lines_.push_back(self->partial_);
    self->partial_.clear();
    self->stdout_closed_ = true;
    self->changed_.notify_all();
  });
  child->waiter_ = std::thread([self] {
    int status = 0;
    while (waitpid(self->pid_, &status, 0) < 0 && errno == EINTR) {
    }
    std::lock_guard lock(self->mutex_);
    self->wait_status_ = status;
    self->changed_.notify_all();
  });
  return child;
}

ChildProcess::~ChildProcess() {
  Signal(SIGKILL);
  if (waiter_.joinable()) waiter_.join();
  if (reader_.joinable()) reader_.join();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

Result<std::string> ChildProcess::WaitForLine(
    const std::function<bool(const std::string&)>& predicate, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  size_t checked = 0;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    for (; checked < lines_.size(); ++checked) {
      if (predicate(lines_[checked])) return lines_[checked];
    }
    if (stdout_closed_ && wait_status_) {
      return Status::Unavailable("process exited before the expected line");
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        checked == lines_.size()) {
      return Status::DeadlineExceeded("no matching line before the deadline");
    }
  }
}

std::vector<std::string> ChildProcess::Lines() {
  std::lock_guard lock(mutex_);
  return lines_;
}

void ChildProcess::Signal(int signal_number) {
  std::lock_guard lock(mutex_);
  if (!wait_status_ && pid_ > 0) kill(pid_, signal_number);
}

Result<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return wait_status_.has_value(); })) {
    return Status::DeadlineExceeded("process still running");
  }
  return *wait_status_;
}

bool ChildProcess::running() {
  std::lock_guard lock(mutex_);
  return !wait_status_.has_value();
}

std::string FinishedProcess::Text() const {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

FinishedProcess RunToEnd(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  std::vector<std::string> shell = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1"};
  shell.insert(shell.end(), argv.begin(), argv.end());
  FinishedProcess finished;
  auto child = ChildProcess::Start(shell);
  if (!child.ok()) return finished;
  // Every line is in once stdout has closed at the exit.
  (void)(*child)->WaitForLine([](const std::string&) { return false; }, timeout);
  Result<int> status = (*child)->Wait(timeout);
  if (status.ok() && WIFEXITED(*status)) finished.exit_code = WEXITSTATUS(*status);
  finished.lines = (*child)->Lines();
  return finished;
}

Status BuildBusyboxImage(const std::string& archive, const std::string& scratch_dir) {
  const std::string layout = scratch_dir + "/layout";
  const std::string bundle = scratch_dir + "/bundle";
  const std::string rootfs = bundle + "/rootfs";
  const std::string script =
      "set -e; umoci init --layout " + layout + "; umoci new --image " + layout + ":1; " +
      "umoci unpack --image " + layout + ":1 " + bundle + "; mkdir -p " + rootfs + "/bin " +
      rootfs + "/usr " + rootfs + "/tmp " + rootfs + "/etc; cp /bin/busybox " + rootfs +
      "/bin/busybox; for tool in sh cat ls echo sleep mkdir touch env setsid pwd mknod grep; do "
      "ln -s busybox " +
      rootfs + "/bin/$tool; done; ln -s usr/lib " + rootfs + "/lib; ln -s usr/lib64 " + rootfs +
      "/lib64; echo image-marker > " + rootfs + "/marker; umoci repack --image " + layout + ":1 " +
      bundle + "; umoci config --image " + layout +
      ":1 --config.env PATH=/bin:/usr/bin --config.env IMAGE_VARIABLE=from-image; " + "tar -C " +
      layout + " -cf " + archive + " .";
  FinishedProcess built = RunToEnd({"/bin/sh", "-c", script}, std::chrono::seconds(120));
  if (built.exit_code != 0) {
    return Status::Internal("building the test image failed: " + built.Text());
  }
  return Status::Ok();
}

}  // namespace cairn::testing
