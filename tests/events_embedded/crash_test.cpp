// The embedded log across real process deaths: a writer process (cairn-log-crash-writer) is
// SIGKILLed mid-append, round after round on the same log, and every append it acknowledged must
// be there, intact, after recovery. Also: a read-only follower in another process than the
// writer, and a writer that hits an I/O error.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "tests/events_embedded/log_test_util.h"
#include "tests/support/test_support.h"

namespace cairn::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kSegmentBytes[] = "262144";

bool StartsWith(const std::string& line, const std::string& prefix) {
  return line.compare(0, prefix.size(), prefix) == 0;
}

std::optional<uint64_t> NumberAfter(const std::string& line, const std::string& prefix) {
  if (!StartsWith(line, prefix)) return std::nullopt;
  return std::stoull(line.substr(prefix.size()));
}

// The highest offset the writer reported as acknowledged, once all its output is in.
std::optional<uint64_t> MaxAcked(ChildProcess& child) {
  std::optional<uint64_t> max;
  for (const std::string& line : child.Lines()) {
    if (auto acked = NumberAfter(line, "acked ")) max = std::max(max.value_or(0), *acked);
  }
  return max;
}

// Waits until the writer has exited and its stdout is fully read.
void DrainOutput(ChildProcess& child) {
  auto waited = child.Wait(seconds(10));
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  auto eof = child.WaitForLine([](const std::string&) { return false; }, seconds(10));
  ASSERT_EQ(eof.status().code(), StatusCode::kUnavailable) << "stdout did not close";
}

Result<std::unique_ptr<ChildProcess>> StartWriter(const std::string& dir,
                                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {BinaryPath("cairn-log-crash-writer"),
                                   dir,
                                   "--segment-bytes",
                                   kSegmentBytes,
                                   "--max-batch",
                                   "1000"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return ChildProcess::Start(argv);
}

EmbeddedLogOptions WriterOptions() {
  EmbeddedLogOptions options;
  options.segment_bytes = std::stoull(kSegmentBytes);
  return options;
}

TEST(EmbeddedLogCrashTest, AcknowledgedAppendsSurviveKill9) {
  TempDir temp;
  const std::string dir = temp.Sub("log");
  uint64_t verified_end = 0;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto child = StartWriter(dir);
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    auto start = (*child)->WaitForLine([](const std::string& l) { return StartsWith(l, "start "); },
                                       seconds(10));
    ASSERT_TRUE(start.ok()) << start.status().ToString();
    EXPECT_EQ(*NumberAfter(*start, "start "), verified_end) << "the writer lost or invented events";

    // Let it acknowledge a varying number of appends, then kill it wherever it is.
    int acks = 0;
    const int wanted_acks = 3 + 4 * round;
    auto acked = (*child)->WaitForLine(
        [&](const std::string& line) {
          return StartsWith(line, "acked ") && ++acks >= wanted_acks;
        },
        seconds(15));
    ASSERT_TRUE(acked.ok()) << acked.status().ToString();

    // While it runs, it holds the log: nobody else may open it for writing.
    auto intruder = OpenEmbeddedLog(dir, WriterOptions());
    EXPECT_EQ(intruder.status().code(), StatusCode::kFailedPrecondition);

    (*child)->Signal(SIGKILL);
    ASSERT_NO_FATAL_FAILURE(DrainOutput(**child));
    auto status = (*child)->Wait(seconds(1));
    ASSERT_TRUE(status.ok());
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
    std::optional<uint64_t> max_acked = MaxAcked(**child);
    ASSERT_TRUE(max_acked.has_value());

    auto log = OpenOrDie(dir, WriterOptions());
    ASSERT_NE(log, nullptr);
    auto end = log->EndOffset();
    ASSERT_TRUE(end.ok());
    EXPECT_GE(*end, *max_acked + 1) << "an acknowledged append was lost";
    ASSERT_NO_FATAL_FAILURE(ExpectLogHoldsTestEvents(*log, *end));
    verified_end = *end;
  }
  EXPECT_GT(SegmentFiles(dir).size(), 1u) << "the rounds should have rolled segments";
}

TEST(EmbeddedLogCrashTest, ReadOnlyFollowerInAnotherProcessSeesTheWritersAppends) {
  TempDir temp;
  const std::string dir = temp.Sub("log");
  auto child = StartWriter(dir);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  ASSERT_TRUE(
      (*child)
          ->WaitForLine([](const std::string& l) { return StartsWith(l, "start "); }, seconds(10))
          .ok());
  EmbeddedLogOptions follow;
  follow.read_only = true;
  follow.poll_interval = milliseconds(5);
  auto follower = OpenOrDie(dir, follow);
  ASSERT_NE(follower, nullptr);
  auto reader = follower->OpenReader(0);
  ASSERT_TRUE(reader.ok());

  // Follow the live writer well past a segment roll (256 KiB is ~900 events).
  constexpr uint64_t kWanted = 3000;
  std::vector<Envelope> seen;
  auto deadline = std::chrono::steady_clock::now() + seconds(15);
  while (seen.size() < kWanted && std::chrono::steady_clock::now() < deadline) {
    auto got = (*reader)->Next(500, milliseconds(500));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    for (auto& event : *got) seen.push_back(std::move(event));
  }
  ASSERT_GE(seen.size(), kWanted);
  ExpectTestEvents(seen, 0);
  (*child)->Signal(SIGKILL);
  ASSERT_NO_FATAL_FAILURE(DrainOutput(**child));
}

TEST(EmbeddedLogCrashTest, WriteErrorStopsAppendsAndRecoveryKeepsAcknowledgedEvents) {
  TempDir temp;
  const std::string dir = temp.Sub("log");
  // RLIMIT_FSIZE makes the writer's segment writes fail with EFBIG part-way through a batch.
  auto child = StartWriter(dir, {"--fsize-limit", "40000"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  auto after_error = (*child)->WaitForLine(
      [](const std::string& line) { return StartsWith(line, "after-error "); }, seconds(15));
  ASSERT_TRUE(after_error.ok()) << after_error.status().ToString();
  ASSERT_NO_FATAL_FAILURE(DrainOutput(**child));
  auto status = (*child)->Wait(seconds(1));
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 3);
  bool saw_error = false;
  for (const std::string& line : (*child)->Lines()) {
    if (StartsWith(line, "error ")) {
      saw_error = true;
      EXPECT_NE(line.find("IOError"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(saw_error);
  EXPECT_NE(after_error->find("IOError"), std::string::npos)
      << "after a failed write the log must refuse appends: " << *after_error;
  std::optional<uint64_t> max_acked = MaxAcked(**child);
  ASSERT_TRUE(max_acked.has_value());

  auto log = OpenOrDie(dir, WriterOptions());
  ASSERT_NE(log, nullptr);
  auto end = log->EndOffset();
  ASSERT_TRUE(end.ok());
  EXPECT_GE(*end, *max_acked + 1);
  ASSERT_NO_FATAL_FAILURE(ExpectLogHoldsTestEvents(*log, *end));
  AppendTestEvents(*log, 10);
  ExpectLogHoldsTestEvents(*log, *end + 10);
}

}  // namespace
}  // namespace cairn::testing
