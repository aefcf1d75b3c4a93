// The Reporter against FakeMaster: reports of different allocations are in flight at the same
// time, while each allocation's items still reach the master in the protocol's order
// (PROTOCOL.md §4). The fake holds calls unanswered to make the concurrency observable.
#include "agent/reporter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "tests/agent/fake_master.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;
using testing::FakeMaster;
using Calls = std::vector<FakeMaster::Call>;

constexpr auto kReporterTimeout = 15s;
constexpr size_t kLanes = 8;

class ReporterTest : public ::testing::Test {
 protected:
  static ReportQueue::Options Options() {
    ReportQueue::Options options;
    options.lanes = kLanes;
    return options;
  }

  std::unique_ptr<Reporter> MakeReporter() {
    RetryPolicy policy;
    policy.initial_backoff = 10ms;
    policy.max_backoff = 100ms;
    Result<std::unique_ptr<MasterClient>> client =
        MasterClient::Create(master_.url(), "agent-1", policy);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::make_unique<Reporter>(std::move(client).value(), Options());
  }

  // `count` allocation ids and how many lanes they fill.
  static std::pair<std::vector<std::string>, size_t> Allocations(size_t count) {
    ReportQueue queue(Options());
    std::vector<std::string> ids;
    std::set<size_t> lanes;
    for (size_t i = 0; i < count; ++i) {
      ids.push_back("alloc-" + std::to_string(i));
      lanes.insert(queue.LaneOf(ids.back()));
    }
    return {ids, lanes.size()};
  }

  // The one call to `path`; fails the test when there is not exactly one.
  FakeMaster::Call OnlyCall(const std::string& path) {
    Calls calls = master_.CallsTo(path);
    EXPECT_EQ(calls.size(), 1u) << path;
    return calls.empty() ? FakeMaster::Call{} : calls.front();
  }

  FakeMaster master_;
};

// While the master takes lines more slowly than tasks print them, the reporter asks for output to
// be left unread once throttle_lines wait, and lets it be read again once they are delivered.
TEST_F(ReporterTest, AsksForOutputToWaitWhileTheMasterFallsBehind) {
  ReportQueue::Options options = Options();
  options.throttle_lines = 10;
  options.max_batch_lines = 1;
  RetryPolicy policy;
  policy.initial_backoff = 10ms;
  Result<std::unique_ptr<MasterClient>> client =
      MasterClient::Create(master_.url(), "agent-1", policy);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  master_.HoldCalls("/task/logs");
  Reporter reporter(std::move(client).value(), options);
  std::atomic<int> rooms{0};
  reporter.OnRoomForLines([&rooms] { ++rooms; });
  EXPECT_TRUE(reporter.MayReadLines());
  for (int i = 0; i < 11; ++i) {
    reporter.AddLine({"task-1", "alloc-1", static_cast<uint64_t>(i), "stdout", "line\n", 1});
  }
  // One batch is held at the master; the other ten wait in the queue: the threshold.
  ASSERT_TRUE(master_.WaitForHeld(1, kReporterTimeout));
  EXPECT_FALSE(reporter.MayReadLines());
  EXPECT_EQ(rooms.load(), 0);
  master_.ReleaseHeld();
  EXPECT_TRUE(reporter.Drain(std::chrono::steady_clock::now() + kReporterTimeout));
  EXPECT_TRUE(reporter.MayReadLines());
  EXPECT_EQ(rooms.load(), 1) << "the readers are woken once, when the queue has room again";
  EXPECT_EQ(master_.CallsTo("/api/v1/task/logs").size(), 11u) << "every line delivered";
}

TEST_F(ReporterTest, SendsReportsOfDifferentAllocationsInParallel) {
  // Ids until every lane has one: then every sender has a report to send.
  ReportQueue queue(Options());
  std::map<size_t, std::string> one_per_lane;
  for (int i = 0; i < 1000 && one_per_lane.size() < kLanes; ++i) {
    std::string id = "alloc-" + std::to_string(i);
    one_per_lane.emplace(queue.LaneOf(id), id);
  }
  ASSERT_EQ(one_per_lane.size(), kLanes) << "the hash leaves lanes unused";
  master_.HoldCalls("/started");
  std::unique_ptr<Reporter> reporter = MakeReporter();
  for (const auto& [lane, id] : one_per_lane) reporter->AddStarted({id, "task-" + id, 1});
  // All of them reach the master before it answers any.
  EXPECT_TRUE(master_.WaitForHeld(kLanes, kReporterTimeout));
  master_.ReleaseHeld();
  EXPECT_TRUE(reporter->Drain(std::chrono::steady_clock::now() + kReporterTimeout));
  for (const auto& [lane, id] : one_per_lane)
    EXPECT_EQ(OnlyCall(testing::AllocationPath(id, "started")).status, 200);
}

TEST_F(ReporterTest, SendsEachExitOnlyAfterItsStartWasAnsweredWhileSendingInParallel) {
  auto [ids, lanes] = Allocations(64);
  master_.HoldCalls("/started");
  std::unique_ptr<Reporter> reporter = MakeReporter();
  for (const auto& id : ids) {
    reporter->AddStarted({id, "task-" + id, 1});
    reporter->AddExited({id, "task-" + id, 0, std::nullopt, ""});
  }
  // Every lane's sender waits on a started report while exits are queued behind them all.
  EXPECT_TRUE(master_.WaitForHeld(lanes, kReporterTimeout));
  master_.ReleaseHeld();
  EXPECT_TRUE(reporter->Drain(std::chrono::steady_clock::now() + kReporterTimeout));
  for (const auto& id : ids) {
    FakeMaster::Call started = OnlyCall(testing::AllocationPath(id, "started"));
    FakeMaster::Call exited = OnlyCall(testing::AllocationPath(id, "exited"));
    EXPECT_GT(exited.arrived, started.answered) << id;
  }
}

TEST_F(ReporterTest, SendsEachExitOnlyAfterItsLinesWereAnsweredWhileSendingInParallel) {
  constexpr uint64_t kLinesEach = 3;
  auto [ids, lanes] = Allocations(64);
  master_.HoldCalls("/api/v1/task/logs");
  std::unique_ptr<Reporter> reporter = MakeReporter();
  for (const auto& id : ids) {
    for (uint64_t seq = 0; seq < kLinesEach; ++seq) {
      TaskLogLine line;
      line.task_id = "task-" + id;
      line.allocation_id = id;
      line.seq = seq;
      line.stdtype = "stdout";
      line.text = "line\n";
      reporter->AddLine(std::move(line));
    }
    reporter->AddExited({id, "task-" + id, 0, std::nullopt, ""});
  }
  EXPECT_TRUE(master_.WaitForHeld(lanes, kReporterTimeout));
  master_.ReleaseHeld();
  EXPECT_TRUE(reporter->Drain(std::chrono::steady_clock::now() + kReporterTimeout));

  // When the last of each allocation's lines was answered, and how many arrived.
  std::map<std::string, uint64_t> last_answer;
  std::map<std::string, uint64_t> line_count;
  for (const auto& call : master_.CallsTo("/api/v1/task/logs")) {
    for (const auto& line : call.body["logs"]) {
      std::string id = line["allocationId"];
      last_answer[id] = std::max(last_answer[id], call.answered);
      ++line_count[id];
    }
  }
  for (const auto& id : ids) {
    EXPECT_EQ(line_count[id], kLinesEach) << id;
    EXPECT_GT(OnlyCall(testing::AllocationPath(id, "exited")).arrived, last_answer[id]) << id;
  }
}

TEST_F(ReporterTest, DrainGivesUpOnEveryLaneAtTheDeadline) {
  auto [ids, lanes] = Allocations(64);
  master_.HoldCalls("/started");
  std::unique_ptr<Reporter> reporter = MakeReporter();
  for (const auto& id : ids) reporter->AddStarted({id, "task-" + id, 1});
  ASSERT_TRUE(master_.WaitForHeld(lanes, kReporterTimeout));
  // Every sender is stuck in a call the master does not answer: Drain must cancel them all.
  EXPECT_FALSE(reporter->Drain(std::chrono::steady_clock::now() + 50ms));
  master_.ReleaseHeld();
}

}  // namespace
}  // namespace cairn::agent
