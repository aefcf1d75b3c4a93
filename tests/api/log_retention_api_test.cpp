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

  // Runs a command through the agent protocol that prints `lines` lines ("line N", padded to
  // `width` bytes with the newline when given) and exits unless `exit` is false; returns its id.
  std::string RunCommandWithLogs(int lines, bool exit = true, size_t width = 0) {
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
                       {"log", Padded("line " + std::to_string(seq), width)},
                       {"timestamp", "2025-03-20T12:00:00Z"}});
    }
    CallJson("POST", "/api/v1/task/logs", json{{"logs", batch}}.dump());
    if (exit) {
      CallJson("POST", "/api/v1/allocations/" + allocation + "/exited",
               json{{"taskId", id}, {"agentId", "a1"}, {"exitCode", 0}}.dump());
    }
    return id;
  }

  static std::string Padded(std::string text, size_t width) {
    if (text.size() + 1 < width) text.append(width - 1 - text.size(), '.');
    return text + "\n";
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

// Bounded by size: each task's log to log_max_task_bytes (its oldest lines go, a marker says so),
// and all logs to log_max_total_bytes (the longest-ended tasks' logs go first, recorded as
// TaskLogsExpired with the bound as the reason; a running task's are never taken).
class LogSizeBoundApiTest : public LogRetentionApiTest {
 protected:
  void SetUp() override {
    configure_ = [](MasterConfig& config) {
      config.retention.log_retention_days = -1;  // age alone would keep everything
      config.retention.log_max_task_bytes = 1000;
      config.retention.log_max_total_bytes = 1000;
    };
    ApiTest::SetUp();
  }
};

TEST_F(LogSizeBoundApiTest, ALoudTasksOldestLinesGoBehindAMarkerItsOwnerReads) {
  RegisterAgent("a1", 2, "inc-1");
  const std::string id = RunCommandWithLogs(150, /*exit=*/false, 20);  // 3,000 bytes printed
  const auto logs = Logs(id);
  ASSERT_GT(logs.size(), 2u);
  EXPECT_EQ(logs[0].first, "task");
  EXPECT_NE(logs[0].second.find("oldest lines"), std::string::npos) << logs[0].second;
  EXPECT_NE(logs[0].second.find("log_max_task_bytes"), std::string::npos) << logs[0].second;
  size_t bytes = 0;
  for (size_t i = 1; i < logs.size(); ++i) {
    if (logs[i].first == "task") bytes += logs[i].second.size();
  }
  EXPECT_LE(bytes, 1000u);
  EXPECT_GE(bytes, 500u);
  EXPECT_EQ(logs.back().second, Padded("line 149", 20)) << "the newest line stays";
}

TEST_F(LogSizeBoundApiTest, ASweepOverTheClusterBoundRemovesTheLongestEndedTasksLogsFirst) {
  RegisterAgent("a1", 4, "inc-1");
  const std::string first = RunCommandWithLogs(15, true, 20);  // 300 bytes each
  const std::string second = RunCommandWithLogs(15, true, 20);
  const std::string third = RunCommandWithLogs(15, true, 20);
  const std::string running = RunCommandWithLogs(15, /*exit=*/false, 20);
  const size_t third_lines = Logs(third).size(), running_lines = Logs(running).size();
  EXPECT_EQ(third_lines, 17u) << "fifteen of its own and two of the master's";
  LoginAs("admin");
  // 1,200 bytes held, 1,000 allowed: down to 750, the two longest-ended go.
  json answer = CallJson("POST", "/api/v1/cleanup_logs");
  EXPECT_EQ(answer["removedCount"], "30");
  EXPECT_EQ(Logs(first).size(), 2u) << "only the master's lines, drawn from the events";
  EXPECT_EQ(Logs(second).size(), 2u);
  EXPECT_EQ(Logs(third).size(), third_lines);
  EXPECT_EQ(Logs(running).size(), running_lines) << "a running task's log is never taken";
  std::vector<json> expired = EventsOfType("taskLogsExpired");
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0]["taskLogsExpired"]["taskIds"], json::array({first, second}));
  const std::string reason = expired[0]["taskLogsExpired"]["reason"];
  EXPECT_EQ(reason.rfind("log_max_total_bytes 1000 (master.yaml): the logs held 1200 bytes", 0), 0u)
      << reason;
  // Under the bound now: the next sweep takes nothing.
  EXPECT_EQ(CallJson("POST", "/api/v1/cleanup_logs")["removedCount"], "0");
}

}  // namespace
}  // namespace cairn::api_testing
