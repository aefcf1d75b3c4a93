// ProcessRunner against real child processes: exit codes, signals, output lines with seq, the
// environment and work dir, killing whole process groups, and output left unread (throttled).
#include "agent/process_runner.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tests/support/test_support.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kRunnerTimeout = 10s;

// Records every callback of a ProcessRunner and lets a test wait for them.
class Recorder {
 public:
  ProcessRunner::Callbacks Callbacks() {
    ProcessRunner::Callbacks callbacks;
    callbacks.on_started = [this](const std::string& key, pid_t pid) {
      std::lock_guard lock(mutex_);
      started_[key] = pid;
      events_.push_back("started " + key);
      changed_.notify_all();
    };
    callbacks.on_line = [this](const OutputLine& line) {
      std::lock_guard lock(mutex_);
      lines_[line.key].push_back(line);
      events_.push_back("line " + line.key);
      changed_.notify_all();
    };
    callbacks.on_exit = [this](const std::string& key, const ProcessExit& exit) {
      std::lock_guard lock(mutex_);
      exits_[key] = exit;
      events_.push_back("exit " + key);
      changed_.notify_all();
    };
    return callbacks;
  }

  std::optional<ProcessExit> WaitExit(const std::string& key, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return exits_.count(key) > 0; })) {
      return std::nullopt;
    }
    return exits_[key];
  }

  // Waits for the first line of `key` and returns its text.
  std::optional<std::string> WaitFirstLine(const std::string& key,
                                           std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return !lines_[key].empty(); })) {
      return std::nullopt;
    }
    return lines_[key].front().text;
  }

  std::vector<OutputLine> Lines(const std::string& key) {
    std::lock_guard lock(mutex_);
    return lines_[key];
  }
  std::vector<std::string> Events() {
    std::lock_guard lock(mutex_);
    return events_;
  }
  bool Started(const std::string& key) {
    std::lock_guard lock(mutex_);
    return started_.count(key) > 0;
  }
  std::optional<pid_t> WaitStarted(const std::string& key, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return started_.count(key) > 0; })) {
      return std::nullopt;
    }
    return started_[key];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, pid_t> started_;
  std::map<std::string, std::vector<OutputLine>> lines_;
  std::map<std::string, ProcessExit> exits_;
  std::vector<std::string> events_;
};

ProcessSpec Shell(const std::string& script, const std::string& work_dir) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
  spec.work_dir = work_dir;
  return spec;
}

// True once process `pid` has ended, waiting on a pidfd (no polling of /proc).
bool WaitProcessGone(pid_t pid, std::chrono::milliseconds timeout) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // already gone and reaped
  pollfd entry{fd, POLLIN, 0};
  int ready = poll(&entry, 1, static_cast<int>(timeout.count()));
  close(fd);
  return ready == 1;
}

class ProcessRunnerTest : public ::testing::Test {
 protected:
  std::unique_ptr<ProcessRunner> MakeRunner(std::chrono::milliseconds grace = 5s) {
    return std::make_unique<ProcessRunner>(recorder_.Callbacks(), grace);
  }
  cairn::testing::TempDir dir_;
  Recorder recorder_;
};

// Where the kernel has `pid` sleeping ("pipe_write" or "anon_pipe_write", by kernel version:
// blocked writing to a full pipe).
std::string WaitChannelOf(pid_t pid) {
  std::ifstream wchan("/proc/" + std::to_string(pid) + "/wchan");
  std::string channel;
  std::getline(wchan, channel);
  return channel;
}

TEST_F(ProcessRunnerTest, WhileReadingIsRefusedAPrinterBlocksAndLosesNothing) {
  std::atomic<bool> may_read{false};
  ProcessRunner::Callbacks callbacks = recorder_.Callbacks();
  callbacks.may_read = [&may_read] { return may_read.load(); };
  auto runner = std::make_unique<ProcessRunner>(std::move(callbacks), 5s);
  ProcessSpec spec;
  spec.argv = {"seq", "1", "200000"};  // 1.3 MB: far more than a pipe holds
  spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
  spec.work_dir = dir_.path();
  ASSERT_TRUE(runner->Start("a", spec).ok());
  std::optional<pid_t> pid = recorder_.WaitStarted("a", kRunnerTimeout);
  ASSERT_TRUE(pid.has_value());
  // The printer fills the pipe and then sleeps in its write: throttled, not read into memory.
  const auto deadline = Clock::now() + kRunnerTimeout;
  auto writing = [&] { return WaitChannelOf(*pid).find("pipe_write") != std::string::npos; };
  while (!writing() && Clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(writing()) << WaitChannelOf(*pid);
  EXPECT_TRUE(recorder_.Lines("a").empty()) << "nothing is read while reading is refused";
  EXPECT_FALSE(recorder_.WaitExit("a", 0ms).has_value());
  may_read = true;
  runner->WakeAll();  // what the reporter does once its queue has room
  ASSERT_TRUE(recorder_.WaitExit("a", kRunnerTimeout).has_value());
  std::vector<OutputLine> lines = recorder_.Lines("a");
  ASSERT_EQ(lines.size(), 200000u) << "every line, once";
  for (size_t i = 0; i < lines.size(); i += 9973) {
    EXPECT_EQ(lines[i].text, std::to_string(i + 1) + "\n");
    EXPECT_EQ(lines[i].seq, i);
  }
  EXPECT_EQ(lines.back().text, "200000\n");
}

TEST_F(ProcessRunnerTest, KeepsTheExitCode) {
  auto runner = MakeRunner();
  ASSERT_TRUE(runner->Start("a", Shell("exit 7", dir_.path())).ok());
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_FALSE(exit->signal.has_value());
  EXPECT_FALSE(exit->kill_requested);
  EXPECT_TRUE(runner->WaitAllExited(Clock::now() + kRunnerTimeout));
  EXPECT_EQ(runner->RunningCount(), 0u);
}

TEST_F(ProcessRunnerTest, ReportsDeathBySignal) {
  auto runner = MakeRunner();
  ASSERT_TRUE(runner->Start("a", Shell("kill -KILL $$", dir_.path())).ok());
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_FALSE(exit->exit_code.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
}

TEST_F(ProcessRunnerTest, HandsOverStdoutAndStderrLinesWithOneSeq) {
  auto runner = MakeRunner();
  ASSERT_TRUE(runner
                  ->Start("a", Shell("echo one; echo two >&2; echo three; printf 'no newline'",
                                     dir_.path()))
                  .ok());
  ASSERT_TRUE(recorder_.WaitExit("a", kRunnerTimeout).has_value());
  std::vector<OutputLine> lines = recorder_.Lines("a");
  ASSERT_EQ(lines.size(), 4u);
  std::set<uint64_t> seqs;
  std::vector<std::string> stdout_texts, stderr_texts;
  for (const auto& line : lines) {
    seqs.insert(line.seq);
    EXPECT_EQ(line.key, "a");
    EXPECT_GT(line.unix_micros, 0);
    (line.stream == OutputStream::kStdout ? stdout_texts : stderr_texts).push_back(line.text);
  }
  EXPECT_EQ(seqs, (std::set<uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(stdout_texts, (std::vector<std::string>{"one\n", "three\n", "no newline"}));
  EXPECT_EQ(stderr_texts, (std::vector<std::string>{"two\n"}));
  // Callbacks come in order: started, the lines, exit.
  std::vector<std::string> events = recorder_.Events();
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events.front(), "started a");
  EXPECT_EQ(events.back(), "exit a");
}

TEST_F(ProcessRunnerTest, SplitsAnOverlongLine) {
  auto runner = MakeRunner();
  // 100,000 bytes without a newline: one piece of 64 KiB, then the rest.
  ASSERT_TRUE(runner->Start("a", Shell("head -c 100000 /dev/zero | tr '\\0' x", dir_.path())).ok());
  ASSERT_TRUE(recorder_.WaitExit("a", kRunnerTimeout).has_value());
  std::vector<OutputLine> lines = recorder_.Lines("a");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text.size(), 64u * 1024);
  EXPECT_EQ(lines[1].text.size(), 100000u - 64 * 1024);
}

TEST_F(ProcessRunnerTest, RunsWithTheGivenEnvironmentAndWorkDir) {
  auto runner = MakeRunner();
  ProcessSpec spec = Shell("echo \"$FOO\"; echo \"${HOME-unset}\"; pwd -P", dir_.path());
  spec.env.push_back("FOO=bar baz");
  ASSERT_TRUE(runner->Start("a", spec).ok());
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  std::vector<OutputLine> lines = recorder_.Lines("a");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].text, "bar baz\n");
  EXPECT_EQ(lines[1].text, "unset\n");  // only the given environment, nothing inherited
  EXPECT_EQ(lines[2].text, std::filesystem::canonical(dir_.path()).string() + "\n");
}

TEST_F(ProcessRunnerTest, FailsToStartAMissingProgramOrWorkDir) {
  auto runner = MakeRunner();
  ProcessSpec missing_program = Shell("true", dir_.path());
  missing_program.argv = {"cairn-no-such-program"};
  Result<pid_t> started = runner->Start("a", missing_program);
  EXPECT_EQ(started.status().code(), StatusCode::kNotFound);

  ProcessSpec missing_path = missing_program;
  missing_path.argv = {dir_.Sub("absent")};
  EXPECT_EQ(runner->Start("b", missing_path).status().code(), StatusCode::kNotFound);

  ProcessSpec missing_dir = Shell("true", dir_.Sub("absent"));
  EXPECT_EQ(runner->Start("c", missing_dir).status().code(), StatusCode::kNotFound);

  ProcessSpec empty = Shell("true", dir_.path());
  empty.argv.clear();
  EXPECT_EQ(runner->Start("d", empty).status().code(), StatusCode::kInvalidArgument);

  EXPECT_TRUE(recorder_.Events().empty());
  EXPECT_FALSE(runner->Kill("a"));
}

TEST_F(ProcessRunnerTest, RefusesAKeyThatStillRuns) {
  auto runner = MakeRunner();
  ASSERT_TRUE(runner->Start("a", Shell("exec tail -f /dev/null", dir_.path())).ok());
  EXPECT_EQ(runner->Start("a", Shell("true", dir_.path())).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(runner->Kill("a"));
  ASSERT_TRUE(recorder_.WaitExit("a", kRunnerTimeout).has_value());
}

TEST_F(ProcessRunnerTest, KillSendsSigtermToTheGroup) {
  auto runner = MakeRunner(30s);
  ASSERT_TRUE(runner->Start("a", Shell("exec tail -f /dev/null", dir_.path())).ok());
  Clock::time_point killed_at = Clock::now();
  EXPECT_TRUE(runner->Kill("a"));
  EXPECT_TRUE(runner->Kill("a"));  // a second kill changes nothing
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGTERM);
  EXPECT_TRUE(exit->kill_requested);
  EXPECT_LT(Clock::now() - killed_at, 10s);  // well before the 30 s grace
  EXPECT_FALSE(runner->Kill("a"));           // it has exited
}

TEST_F(ProcessRunnerTest, KillEndsWithSigkillWhenSigtermIsIgnored) {
  constexpr auto kGrace = 300ms;
  auto runner = MakeRunner(kGrace);
  ASSERT_TRUE(
      runner->Start("a", Shell("trap '' TERM; echo ready; exec tail -f /dev/null", dir_.path()))
          .ok());
  // Only once the trap is set does the kill meet a process that ignores SIGTERM.
  ASSERT_EQ(recorder_.WaitFirstLine("a", kRunnerTimeout), "ready\n");
  Clock::time_point killed_at = Clock::now();
  ASSERT_TRUE(runner->Kill("a"));
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_GE(Clock::now() - killed_at, kGrace);
}

TEST_F(ProcessRunnerTest, GrandchildrenGetTheSigtermOfTheGroup) {
  auto runner = MakeRunner(30s);
  // The shell itself ignores SIGTERM (set after the child started, which keeps the default), so
  // the task ends early only if the child got SIGTERM too: wait then returns 128+15.
  ASSERT_TRUE(
      runner->Start("a", Shell("tail -f /dev/null & trap '' TERM; echo $!; wait $!", dir_.path()))
          .ok());
  auto first = recorder_.WaitFirstLine("a", kRunnerTimeout);
  ASSERT_TRUE(first.has_value());
  pid_t grandchild = static_cast<pid_t>(std::stol(*first));
  Clock::time_point killed_at = Clock::now();
  ASSERT_TRUE(runner->Kill("a"));
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 128 + SIGTERM);
  EXPECT_LT(Clock::now() - killed_at, 10s);  // well before the 30 s grace
  EXPECT_TRUE(WaitProcessGone(grandchild, kRunnerTimeout));
}

TEST_F(ProcessRunnerTest, GrandchildrenIgnoringSigtermDieByTheGroupSigkill) {
  auto runner = MakeRunner(200ms);
  ASSERT_TRUE(
      runner->Start("a", Shell("trap '' TERM; tail -f /dev/null & echo $!; wait", dir_.path()))
          .ok());
  auto first = recorder_.WaitFirstLine("a", kRunnerTimeout);
  ASSERT_TRUE(first.has_value());
  pid_t grandchild = static_cast<pid_t>(std::stol(*first));
  ASSERT_TRUE(runner->Kill("a"));
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_TRUE(WaitProcessGone(grandchild, kRunnerTimeout));
}

TEST_F(ProcessRunnerTest, LeftoversDieWhenTheLeaderExits) {
  auto runner = MakeRunner();
  // The background sleep keeps the output pipe open; the task still ends when sh exits.
  ASSERT_TRUE(runner->Start("a", Shell("tail -f /dev/null & echo $!", dir_.path())).ok());
  Clock::time_point started_at = Clock::now();
  auto exit = recorder_.WaitExit("a", kRunnerTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_FALSE(exit->kill_requested);
  EXPECT_LT(Clock::now() - started_at, 4s);  // not held up until the drain limit
  std::vector<OutputLine> lines = recorder_.Lines("a");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(WaitProcessGone(static_cast<pid_t>(std::stol(lines[0].text)), kRunnerTimeout));
}

TEST_F(ProcessRunnerTest, DestructorKillsWhatStillRuns) {
  auto runner = MakeRunner(30s);
  ASSERT_TRUE(
      runner->Start("a", Shell("trap '' TERM; echo ready; exec tail -f /dev/null", dir_.path()))
          .ok());
  ASSERT_TRUE(recorder_.WaitFirstLine("a", kRunnerTimeout).has_value());
  runner.reset();
  auto exit = recorder_.WaitExit("a", 0ms);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->signal, SIGKILL);
}

TEST_F(ProcessRunnerTest, FindOnPathLooksThroughEveryEntry) {
  EXPECT_EQ(FindOnPath("sh", "/nonexistent:/bin:/usr/bin").empty(), false);
  EXPECT_EQ(FindOnPath("cairn-no-such-program", "/bin:/usr/bin"), "");
  EXPECT_EQ(FindOnPath("bin/sh", "/"), "");  // names with a slash are not searched
}

}  // namespace
}  // namespace cairn::agent
