// Log retention on a real master and agent: a command's lines are removed by the scheduled sweep
// once it ended (log_retention_days 0), while its events remain, so `cairn replay audit` still
// lists its whole life.
#include <gtest/gtest.h>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

bool Mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LogRetentionE2eTest, TheScheduledSweepRemovesAnEndedTasksLinesAndTheAuditKeepsItsEvents) {
  Cluster cluster("retention_policy:\n  log_retention_days: 0\n  schedule: 1s\n");
  cluster.StartMaster();
  cluster.StartAgent("a1", 1);
  const std::string id =
      cluster.Submit({{"entrypoint", {"sh", "-c", "echo retained-line-1; echo retained-line-2"}}});
  EXPECT_TRUE(Mentions(cluster.FollowLogs(id), "retained-line-2"));
  json expired = cluster.WaitForEvent([&](const json& event) {
    if (!event.contains("taskLogsExpired")) return false;
    for (const auto& task : event["taskLogsExpired"]["taskIds"]) {
      if (task == id) return true;
    }
    return false;
  });
  EXPECT_EQ(expired["actor"], "system:log-retention");
  EXPECT_TRUE(Mentions(expired["taskLogsExpired"]["reason"], "log_retention_days 0 (master.yaml)"))
      << expired.dump();
  EXPECT_FALSE(Mentions(cluster.FollowLogs(id), "retained-line")) << "the lines are gone";

  std::string audit;
  for (const auto& line : cluster.RunCairn({"replay", "audit", "--data", cluster.data_dir(),
                                            "--entity", "task/" + id, "--include-system"})) {
    audit += line + "\n";
  }
  for (const char* kind : {"TaskSubmitted", "AllocationAssigned", "TaskStarted", "TaskExited"}) {
    EXPECT_TRUE(Mentions(audit, kind)) << kind << " missing from the audit:\n" << audit;
  }
}

}  // namespace
}  // namespace cairn::testing
