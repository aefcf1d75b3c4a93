// Log retention over real HTTP: `det master cleanup-logs` (POST /api/v1/cleanup_logs) removes the
// lines of tasks that ended longer ago than the retention allows, records it (TaskLogsExpired),
// and leaves every event of the task, and the master's own lines drawn from them, in place.
#include <gtest/gtest.h>

#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

class LogRetentionApiTest : public ApiTest {
 protected:
  void SetUp() override {
    configure_ = [](MasterConfig& config) { config.retention.log_retention_days = 0; };
    ApiTest::SetUp();
  }

  // Runs a command through the agent protocol that prints `lines` lines; returns its id.
  std::string RunCommandWithLogs(int lines) {
    std::string id = Submit({{"entrypoint", {"echo", "hi"}}});
    std::string allocation;
    for (const auto& event : Events()) {
      if (event.contains("allocationAssigned") && event["allocationAssigned"]["taskId"] == id) {
        allocation = event["allocationAssigned"]["allocationId"];
      }
    }
    EXPECT_FALSE(allocation.empty());
    CallJson("POST", "/api/v1/allocations/" + allocation + "/started",
             json{{"taskId", id}, {"agentId", "a1"}, {"pid", 99}}.dump());
    json batch = json::array();
    for (int seq = 0; seq < lines; ++seq) {
      batch.push_back({{"taskId", id},
                       {"allocationId", allocation},
                       {"agentId", "a1"},
                       {"seq", seq},
                       {"stdtype", "stdout"},
                       {"log", "line " + std::to_string(seq) + "\n"},
                       {"timestamp", "2025-03-20T12:00:00Z"}});
    }
    CallJson("POST", "/api/v1/task/logs", json{{"logs", batch}}.dump());
    CallJson("POST", "/api/v1/allocations/" + allocation + "/exited",
             json{{"taskId", id}, {"agentId", "a1"}, {"exitCode", 0}}.dump());
    return id;
  }

  // The task's log lines as `det task logs` reads them: (source, message).
  std::vector<std::pair<std::string, std::string>> Logs(const std::string& id) {
    std::vector<std::pair<std::string, std::string>> lines;
    auto status = LoggedInClient().StreamLines(
        "GET", "/api/v1/tasks/" + id + "/logs", [&](std::string_view line) {
          json result = json::parse(line)["result"];
          lines.emplace_back(result["source"], result["message"]);
          return true;
        });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return lines;
  }
};

TEST_F(LogRetentionApiTest, CleanupRemovesEndedTasksLinesAndKeepsTheirEvents) {
  RegisterAgent("a1", 2, "inc-1");
  const std::string id = RunCommandWithLogs(3);
  const auto before = Logs(id);
  ASSERT_EQ(before.size(), 5u) << "three lines of the task, two of the master";
  EXPECT_EQ(before[0], (std::pair<std::string, std::string>{"task", "line 0\n"}));

  EXPECT_EQ(Call("POST", "/api/v1/cleanup_logs").status, 403) << "admins only";
  LoginAs("admin");
  json answer = CallJson("POST", "/api/v1/cleanup_logs");
  EXPECT_EQ(answer["removedCount"], "3");
  const auto after = Logs(id);
  ASSERT_EQ(after.size(), 2u) << "the master's lines come from the events, which stay";
  EXPECT_EQ(after[0].first, "master");
  // Recorded, by whom and why; the task's own events all remain.
  std::vector<std::string> kinds;
  for (const auto& event : Events()) {
    if (event.contains("taskLogsExpired")) {
      EXPECT_EQ(event["taskLogsExpired"]["taskIds"], json::array({id}));
      EXPECT_EQ(event["actor"], "user:admin");
      const std::string reason = event["taskLogsExpired"]["reason"];
      EXPECT_EQ(reason.rfind("log_retention_days 0 (master.yaml); ended before ", 0), 0u) << reason;
    }
    for (const char* kind : {"taskSubmitted", "taskStarted", "taskExited", "taskLogsExpired"}) {
      if (event.contains(kind)) kinds.push_back(kind);
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"taskSubmitted", "taskStarted", "taskExited",
                                             "taskLogsExpired"}));
  // Nothing more is due: the next sweep removes and records nothing.
  EXPECT_EQ(CallJson("POST", "/api/v1/cleanup_logs")["removedCount"], "0");
  size_t expiries = 0;
  for (const auto& event : Events()) expiries += event.contains("taskLogsExpired") ? 1 : 0;
  EXPECT_EQ(expiries, 1u);
}

}  // namespace
}  // namespace cairn::api_testing
