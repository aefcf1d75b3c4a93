// The GPU-hours fold (replay/usage.h) over small histories whose figures are counted by hand:
// slots × seconds held, charged when an allocation or a gang's part ends, to the user and the
// workspace its task had when it was placed, skipping what the writer-epoch fence rules out.
#include "replay/usage.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/replay/usage_events.h"

namespace cairn::replay {
namespace {

using testing::UsageHistory;

constexpr int64_t kMicrosPerSecond = 1'000'000;

UsageReport Fold(const UsageHistory& history) {
  UsageLedger ledger;
  for (const Envelope& event : history.events()) ledger.Apply(event);
  return ledger.Report();
}

int64_t UserSlotSeconds(const UsageReport& report, const std::string& user) {
  auto it = report.by_user.find(user);
  return it == report.by_user.end() ? -1 : it->second.slot_micros / kMicrosPerSecond;
}

int64_t WorkspaceSlotSeconds(const UsageReport& report, int32_t workspace_id) {
  auto it = report.by_workspace.find(workspace_id);
  return it == report.by_workspace.end() ? -1 : it->second.slot_micros / kMicrosPerSecond;
}

TEST(UsageLedgerTest, AnAllocationIsChargedItsSlotsTimesTheTimeFromPlacementToExit) {
  UsageHistory history;
  history.Claim(0, 1)
      .Submit(1, "t1", "alice", 0, 2)
      .Assign(10, "t1", "t1.1", "a1", 2)
      .Start(12, "t1", "t1.1", "a1")
      .Exit(1810, "t1", "t1.1");
  UsageReport report = Fold(history);
  // 2 slots from second 10 to second 1810: 3600 slot-seconds, one GPU-hour, in workspace 1 (the
  // event's 0).
  EXPECT_EQ(UserSlotSeconds(report, "alice"), 3600);
  EXPECT_EQ(WorkspaceSlotSeconds(report, 1), 3600);
  EXPECT_DOUBLE_EQ(GpuHours(report.by_user.at("alice").slot_micros), 1.0);
  EXPECT_EQ(report.by_user.at("alice").allocations, 1);
  EXPECT_EQ(report.workspace_names.at(1), "Uncategorized");
  EXPECT_EQ(report.open_allocations, 0);
  EXPECT_EQ(report.log_end, history.events().size());
}

TEST(UsageLedgerTest, APreemptedTaskIsChargedEachAllocationItHeld) {
  UsageHistory history;
  history.Workspace(0, 3, "vision")
      .Submit(0, "t", "bob", 3, 4)
      .Assign(0, "t", "t.1", "a1", 4)
      .Release(900, "t", "t.1")           // 4 × 900
      .Release(950, "t", "t.1")           // a repeat: nothing more
      .Assign(1000, "t", "t.2", "a2", 4)  // queued again, placed again
      .Exit(1900, "t", "t.2");            // 4 × 900
  UsageReport report = Fold(history);
  EXPECT_EQ(UserSlotSeconds(report, "bob"), 7200);
  EXPECT_EQ(report.by_user.at("bob").allocations, 2);
  EXPECT_EQ(WorkspaceSlotSeconds(report, 3), 7200);
  EXPECT_EQ(report.workspace_names.at(3), "vision");
}

TEST(UsageLedgerTest, AGangsPartsAreChargedUntilEachOfThemEnds) {
  UsageHistory history;
  history.Submit(0, "g", "carol", 1, 16)
      .AssignGang(100, "g", "g.1", {{"a1", 8}, {"a2", 8}})
      .PartExit(1900, "g", "g.1", "a2")  // a2: 8 × 1800
      .PartExit(2000, "g", "g.1", "a2")  // a part ends once
      .PartExit(2100, "g", "g.0", "a1")  // another allocation's part: not this one's
      .Exit(3700, "g", "g.1");           // a1: 8 × 3600
  UsageReport report = Fold(history);
  EXPECT_EQ(UserSlotSeconds(report, "carol"), 8 * 1800 + 8 * 3600);
  EXPECT_EQ(report.by_user.at("carol").allocations, 1);
}

TEST(UsageLedgerTest, EventsOfAFencedMasterAreNotCounted) {
  UsageHistory history;
  history.Claim(0, 1)
      .Submit(1, "t", "dave", 1, 1)
      .Submit(1, "u", "dave", 1, 1)
      .Assign(2, "u", "u.1", "a1", 1)
      .Claim(10, 2)
      // The old master still writes: its placement and its exit never happened.
      .By(1)
      .Assign(20, "t", "t.1", "a1", 1)
      .Exit(30, "u", "u.1")
      .By(2)
      .Assign(100, "t", "t.2", "a1", 1)
      .Exit(400, "t", "t.2")    // 1 × 300
      .Exit(1002, "u", "u.1");  // 1 × 1000
  UsageReport report = Fold(history);
  EXPECT_EQ(UserSlotSeconds(report, "dave"), 300 + 1000);
  EXPECT_EQ(report.by_user.at("dave").allocations, 2);
}

TEST(UsageLedgerTest, AMovedJobIsChargedWhereItsTaskWasWhenPlaced) {
  UsageHistory history;
  history.Submit(0, "trial-1-1", "erin", 2, 1, "experiment-1")
      .Assign(0, "trial-1-1", "trial-1-1.1", "a1", 1)
      .Move(50, "experiment-1", 5)
      .Exit(100, "trial-1-1", "trial-1-1.1")  // placed in 2: 1 × 100 there
      .Submit(100, "trial-1-2", "erin", 2, 1, "experiment-1")
      .Assign(100, "trial-1-2", "trial-1-2.1", "a1", 1)
      .Exit(400, "trial-1-2", "trial-1-2.1");  // the job is in 5 now: 1 × 300 there
  UsageReport report = Fold(history);
  EXPECT_EQ(WorkspaceSlotSeconds(report, 2), 100);
  EXPECT_EQ(WorkspaceSlotSeconds(report, 5), 300);
  EXPECT_EQ(UserSlotSeconds(report, "erin"), 400);
}

TEST(UsageLedgerTest, OpenZeroSlotAndBackwardAllocationsAreCountedButNotCharged) {
  UsageHistory history;
  history.Submit(0, "running", "frank", 1, 2)
      .Assign(0, "running", "running.1", "a1", 2)
      .Submit(0, "aux", "frank", 1, 0)
      .Assign(0, "aux", "aux.1", "a1", 0)
      .Exit(500, "aux", "aux.1")  // zero slots: an allocation, no GPU-hours
      .Submit(600, "skewed", "frank", 1, 1)
      .Assign(600, "skewed", "skewed.1", "a1", 1)
      .Exit(590, "skewed", "skewed.1")  // the writer's clock stepped back: nothing, not less
      .Submit(700, "queued", "frank", 1, 1)
      .Exit(800, "queued", "")                     // killed before it was placed
      .Assign(900, "queued", "queued.1", "a1", 1)  // after its end: never placed
      .Other(1000);
  UsageReport report = Fold(history);
  EXPECT_EQ(UserSlotSeconds(report, "frank"), 0);
  EXPECT_EQ(report.by_user.at("frank").allocations, 2);
  EXPECT_EQ(report.open_allocations, 1);
}

TEST(UsageLedgerTest, JsonCarriesExactMicrosecondsAndHours) {
  UsageHistory history;
  history.Workspace(0, 7, "nlp")
      .RenameWorkspace(1, 7, "language")
      .Submit(2, "t", "gina", 7, 3)
      .Assign(2, "t", "t.1", "a1", 3)
      .Exit(1202, "t", "t.1");  // 3 × 1200 = 3600 slot-seconds
  nlohmann::json json = UsageJson(Fold(history));
  EXPECT_EQ(json["logEnd"], history.events().size());
  EXPECT_EQ(json["openAllocations"], 0);
  ASSERT_EQ(json["users"].size(), 1u);
  EXPECT_EQ(json["users"][0]["user"], "gina");
  EXPECT_EQ(json["users"][0]["allocations"], 1);
  EXPECT_EQ(json["users"][0]["slotMicroseconds"], int64_t{3600} * kMicrosPerSecond);
  EXPECT_EQ(json["users"][0]["gpuHours"], 1.0);
  ASSERT_EQ(json["workspaces"].size(), 1u);
  EXPECT_EQ(json["workspaces"][0]["workspaceId"], 7);
  EXPECT_EQ(json["workspaces"][0]["name"], "language");
  EXPECT_EQ(json["workspaces"][0]["gpuHours"], 1.0);
}

TEST(UsageLedgerTest, TheTableNamesEveryUserAndWorkspace) {
  UsageHistory history;
  history.Submit(0, "t", "hana", 0, 1).Assign(0, "t", "t.1", "a1", 1).Exit(1800, "t", "t.1");
  std::ostringstream table;
  PrintUsageTable(Fold(history), table);
  EXPECT_NE(table.str().find("offsets 0 to 2"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("hana"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("0.500000"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("1 Uncategorized"), std::string::npos) << table.str();
}

}  // namespace
}  // namespace cairn::replay
