// Exactly-once under crashes: a helper process follows an embedded log with tiny batches and is
// killed with SIGKILL mid-way, again and again; the projection it finally completes must equal
// a fresh rebuild byte for byte (digests).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <map>

#include "events/event_log.h"
#include "projections/projections.h"
#include "tests/projections/history.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::History;
using testing::TempDir;

bool StartsWith(const std::string& line, const std::string& prefix) {
  return line.rfind(prefix, 0) == 0;
}

uint64_t NumberAfter(const std::string& line, const std::string& prefix) {
  return std::stoull(line.substr(prefix.size()));
}

std::unique_ptr<ChildProcess> StartHelper(const std::string& data_dir,
                                          const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {testing::BinaryPath("cairn_projection_crash_helper"), "--data",
                                   data_dir};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto child = ChildProcess::Start(argv);
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  return child.ok() ? std::move(child).value() : nullptr;
}

// Kills the helper (started with `flags`) mid-way again and again, then lets it finish: its
// projections must equal a rebuild's.
void KillAgainAndAgainThenCompare(const std::vector<std::string>& flags) {
  TempDir dir;
  History history;
  history.AddWorkload(6, 2500);
  const uint64_t total = history.events().size();
  LogConfig config;
  config.data_dir = dir.path();
  {
    auto log = OpenEventLog(config);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE(history.AppendTo(**log).ok());
  }

  constexpr int kRounds = 12;
  int killed_mid_way = 0;
  uint64_t reached = 0;
  for (int round = 0; round < kRounds; ++round) {
    auto child = StartHelper(dir.path(), flags);
    ASSERT_NE(child, nullptr);
    auto start =
        child->WaitForLine([](const std::string& l) { return StartsWith(l, "start "); }, 30s);
    ASSERT_TRUE(start.ok()) << start.status().ToString();
    const uint64_t started_at = NumberAfter(*start, "start ");
    EXPECT_GE(started_at, reached) << "a restart lost committed progress";
    const uint64_t kill_after = started_at + 150 + 50 * static_cast<uint64_t>(round % 4);
    auto progress = child->WaitForLine(
        [&](const std::string& l) {
          return (StartsWith(l, "applied ") && NumberAfter(l, "applied ") >= kill_after) ||
                 StartsWith(l, "done ");
        },
        30s);
    ASSERT_TRUE(progress.ok()) << progress.status().ToString();
    child->Signal(SIGKILL);
    auto wait_status = child->Wait(30s);
    ASSERT_TRUE(wait_status.ok());
    if (WIFSIGNALED(*wait_status) && !StartsWith(*progress, "done ")) ++killed_mid_way;
    for (const auto& line : child->Lines()) {
      if (StartsWith(line, "applied ")) reached = std::max(reached, NumberAfter(line, "applied "));
    }
  }
  EXPECT_GE(killed_mid_way, kRounds - 1);
  EXPECT_LT(reached, total) << "the helper finished before it could be killed mid-way";

  auto child = StartHelper(dir.path(), flags);
  ASSERT_NE(child, nullptr);
  auto done = child->WaitForLine([](const std::string& l) { return StartsWith(l, "done "); }, 60s);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(NumberAfter(*done, "done "), total);
  auto exit_status = child->Wait(30s);
  ASSERT_TRUE(exit_status.ok());
  EXPECT_TRUE(WIFEXITED(*exit_status) && WEXITSTATUS(*exit_status) == 0);
  std::map<std::string, std::string> recovered;
  for (const auto& line : child->Lines()) {
    if (!StartsWith(line, "digest ")) continue;
    size_t space = line.find(' ', 7);
    recovered[line.substr(7, space - 7)] = line.substr(space + 1);
  }

  config.read_only = true;
  auto log = OpenEventLog(config);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  auto rebuilt = RebuildProjections(dir.Sub("fresh"), log->get(), {}, std::nullopt);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  ASSERT_EQ(recovered.size(), rebuilt->size());
  for (const auto& summary : *rebuilt) {
    EXPECT_EQ(summary.next_offset, total);
    EXPECT_EQ(recovered[summary.name], summary.digest) << summary.name;
  }
}

TEST(CrashTest, SigkillMidBatchNeverAppliesAnEventTwiceNorLosesOne) {
  KillAgainAndAgainThenCompare({"--batch", "3"});
}

// A catch-up in bulk commits by ingesting table files, each with its projector's checkpoint; a
// kill between or during ingests must not lose or repeat an event either.
TEST(CrashTest, SigkillDuringABulkCatchUpNeverAppliesAnEventTwiceNorLosesOne) {
  KillAgainAndAgainThenCompare({"--batch", "100", "--bulk", "65536"});
}

}  // namespace
}  // namespace cairn
