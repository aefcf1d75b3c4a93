// The Agent end to end against FakeMaster: orders in over the event stream, real processes,
// reports out over HTTP.
#include "agent/agent.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <set>

#include "tests/agent/fake_master.h"
#include "tests/support/test_support.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;
using testing::CountCalls;
using testing::FakeMaster;
using Calls = std::vector<FakeMaster::Call>;

constexpr auto kTimeout = 15s;
const std::string kAgentId = "agent-1";

class AgentTest : public ::testing::Test {
 protected:
  AgentOptions Options() {
    AgentOptions options;
    options.agent_id = kAgentId;
    options.master_url = master_.url();
    options.devices = ArtificialCpuSlots(2);
    options.work_root = dir_.Sub("work");
    options.kill_grace = 5s;
    options.heartbeat_interval = 50ms;
    options.retry.initial_backoff = 10ms;
    options.retry.max_backoff = 100ms;
    options.stream.initial_backoff = 10ms;
    options.stream.max_backoff = 100ms;
    options.shutdown_report_budget = 5s;
    return options;
  }

  void StartAgent(AgentOptions options) {
    Result<std::unique_ptr<Agent>> created = Agent::Create(std::move(options));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    agent_ = std::move(created).value();
    Result<Registration> registration = agent_->Start();
    ASSERT_TRUE(registration.ok()) << registration.status().ToString();
    EXPECT_EQ(registration->resume_from, 10u);
  }
  void StartAgent() { StartAgent(Options()); }

  events::Envelope Assign(const std::string& allocation_id, std::vector<std::string> argv,
                          std::string incarnation = "") {
    events::Envelope order;
    auto* assigned = order.mutable_allocation_assigned();
    assigned->set_task_id("task-" + allocation_id);
    assigned->set_allocation_id(allocation_id);
    assigned->set_agent_id(kAgentId);
    assigned->set_agent_incarnation(incarnation.empty() ? agent_->incarnation() : incarnation);
    assigned->add_slot_ids(0);
    assigned->set_resource_pool("default");
    assigned->mutable_spec()->set_task_type(events::TASK_TYPE_COMMAND);
    for (auto& arg : argv) assigned->mutable_spec()->add_entrypoint(std::move(arg));
    return order;
  }

  events::Envelope Kill(const std::string& allocation_id, const std::string& reason) {
    events::Envelope order;
    auto* kill = order.mutable_kill_requested();
    kill->set_task_id("task-" + allocation_id);
    kill->set_allocation_id(allocation_id);
    kill->set_agent_id(kAgentId);
    kill->set_agent_incarnation(agent_->incarnation());
    kill->set_reason(reason);
    return order;
  }

  // Waits until the master has taken an exited report of `allocation_id`; returns its body.
  nlohmann::json WaitExited(const std::string& allocation_id) {
    bool done = master_.WaitFor(
        [&](const Calls& calls) {
          return CountCalls(calls, testing::AllocationPath(allocation_id, "exited"), "", 200) > 0;
        },
        kTimeout);
    EXPECT_TRUE(done) << "no exited report of " << allocation_id;
    for (const auto& call : master_.CallsTo(testing::AllocationPath(allocation_id, "exited"))) {
      if (call.status == 200) return call.body;
    }
    return nullptr;
  }

  bool WaitStarted(const std::string& allocation_id) {
    return master_.WaitFor(
        [&](const Calls& calls) {
          return CountCalls(calls, testing::AllocationPath(allocation_id, "started")) > 0;
        },
        kTimeout);
  }

  // Every log line the master got for `allocation_id`, by seq.
  std::map<uint64_t, nlohmann::json> LogLines(const std::string& allocation_id) {
    std::map<uint64_t, nlohmann::json> lines;
    for (const auto& call : master_.CallsTo("/api/v1/task/logs")) {
      for (const auto& line : call.body["logs"]) {
        if (line["allocationId"] != allocation_id) continue;
        EXPECT_EQ(lines.count(line["seq"].get<uint64_t>()), 0u) << "seq shipped twice";
        lines[line["seq"].get<uint64_t>()] = line;
      }
    }
    return lines;
  }

  // The position of the first call matching, in arrival order; -1 when none.
  static int IndexOf(const Calls& calls,
                     const std::function<bool(const FakeMaster::Call&)>& match) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (match(calls[i])) return static_cast<int>(i);
    }
    return -1;
  }

  FakeMaster master_;
  cairn::testing::TempDir dir_;
  std::unique_ptr<Agent> agent_;  // destroyed before the master and the directory
};

TEST_F(AgentTest, RegistersWithItsSlotsAndHeartbeats) {
  StartAgent();
  auto registers = master_.CallsTo("/api/v1/agents/agent-1/register");
  ASSERT_EQ(registers.size(), 1u);
  const nlohmann::json& body = registers[0].body;
  EXPECT_EQ(body["incarnation"], agent_->incarnation());
  EXPECT_EQ(body["resourcePool"], "default");
  EXPECT_EQ(body["slots"], 2);
  ASSERT_EQ(body["devices"].size(), 2u);
  EXPECT_EQ(body["devices"][1]["id"], 1);
  EXPECT_EQ(body["devices"][1]["type"], "cpu");
  EXPECT_TRUE(master_.WaitFor(
      [](const Calls& calls) {
        return CountCalls(calls, "/api/v1/agents/agent-1/heartbeat", "", 200) >= 2;
      },
      kTimeout));
  auto streams = master_.CallsTo("/api/v1/events");
  ASSERT_GE(streams.size(), 1u);
  EXPECT_EQ(streams[0].query["from"], "10");
  EXPECT_EQ(streams[0].query["follow"], "true");
  EXPECT_EQ(streams[0].query["agent"], "agent-1");
}

TEST_F(AgentTest, RunsAPlacementAndReportsItsLogsAndExit) {
  StartAgent();
  master_.Publish(Assign("alloc-1", {"sh", "-c", "echo hello; echo oops >&2; exit 3"}));
  nlohmann::json exited = WaitExited("alloc-1");
  EXPECT_EQ(exited["exitCode"], 3);
  EXPECT_EQ(exited["taskId"], "task-alloc-1");
  EXPECT_EQ(exited["agentId"], "agent-1");
  EXPECT_FALSE(exited.contains("signal"));

  auto started = master_.CallsTo(testing::AllocationPath("alloc-1", "started"));
  ASSERT_EQ(started.size(), 1u);
  EXPECT_GT(started[0].body["pid"].get<int>(), 0);
  EXPECT_EQ(started[0].body["taskId"], "task-alloc-1");

  auto lines = LogLines("alloc-1");
  ASSERT_EQ(lines.size(), 2u);
  std::map<std::string, std::string> by_stream;
  for (const auto& [seq, line] : lines) {
    EXPECT_LT(seq, 2u);
    EXPECT_EQ(line["taskId"], "task-alloc-1");
    EXPECT_EQ(line["agentId"], "agent-1");
    EXPECT_EQ(line["timestamp"].get<std::string>().back(), 'Z');
    by_stream[line["stdtype"]] = line["log"];
  }
  EXPECT_EQ(by_stream["stdout"], "hello\n");
  EXPECT_EQ(by_stream["stderr"], "oops\n");

  // Started first, the exit only after the last log line.
  Calls calls = master_.Calls();
  int started_at = IndexOf(
      calls, [](const auto& c) { return c.path == testing::AllocationPath("alloc-1", "started"); });
  int exited_at = IndexOf(
      calls, [](const auto& c) { return c.path == testing::AllocationPath("alloc-1", "exited"); });
  int last_log = -1;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].path == "/api/v1/task/logs") last_log = static_cast<int>(i);
  }
  EXPECT_LT(started_at, last_log);
  EXPECT_LT(last_log, exited_at);
}

TEST_F(AgentTest, GivesTheTaskItsEnvironmentAndWorkDir) {
  StartAgent();
  master_.Publish(Assign("alloc-env", {"sh", "-c",
                                       "echo \"$DET_ALLOCATION_ID $CAIRN_TASK_ID $DET_SLOT_IDS "
                                       "$DET_TASK_TYPE $DET_MASTER\"; pwd"}));
  WaitExited("alloc-env");
  auto lines = LogLines("alloc-env");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["log"], "alloc-env task-alloc-env [0] COMMAND " + master_.url() + "\n");
  EXPECT_EQ(lines[1]["log"], dir_.Sub("work") + "/alloc-env\n");
}

TEST_F(AgentTest, ADuplicatePlacementRunsOnce) {
  StartAgent();
  std::string marker = dir_.Sub("runs");
  master_.Publish(Assign("alloc-dup", {"sh", "-c", "echo run >> " + marker}));
  master_.Publish(Assign("alloc-dup", {"sh", "-c", "echo run >> " + marker}));
  // Orders are handled in order: once the next one has run, the duplicate was seen.
  master_.Publish(Assign("alloc-next", {"true"}));
  WaitExited("alloc-next");
  WaitExited("alloc-dup");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-dup", "started")).size(), 1u);
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-dup", "exited")).size(), 1u);
  std::ifstream runs(marker);
  std::string content((std::istreambuf_iterator<char>(runs)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "run\n");
}

TEST_F(AgentTest, IgnoresAnOrderForAnotherIncarnation) {
  StartAgent();
  master_.Publish(Assign("alloc-old", {"true"}, "an-earlier-incarnation"));
  master_.Publish(Assign("alloc-next", {"true"}));
  WaitExited("alloc-next");
  EXPECT_EQ(master_.CallsTo("", "/alloc-old/").size(), 0u);
}

TEST_F(AgentTest, AKillOrderStopsARunningTask) {
  StartAgent();
  master_.Publish(Assign("alloc-long", {"sleep", "30"}));
  ASSERT_TRUE(WaitStarted("alloc-long"));
  EXPECT_EQ(agent_->RunningTasks(), 1u);
  master_.Publish(Kill("alloc-long", "user asked"));
  nlohmann::json exited = WaitExited("alloc-long");
  EXPECT_EQ(exited["signal"], SIGTERM);
  EXPECT_EQ(exited["reason"], "user asked");
  EXPECT_FALSE(exited.contains("exitCode"));
}

TEST_F(AgentTest, ReRegistersWithTheSameIncarnationOn409) {
  StartAgent();
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) { return CountCalls(calls, "/heartbeat", "", 200) > 0; }, kTimeout));
  master_.ForgetAgents();
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) { return CountCalls(calls, "/register") == 2; }, kTimeout));
  auto registers = master_.CallsTo("/register");
  EXPECT_EQ(registers[1].body["incarnation"], agent_->incarnation());
  EXPECT_GE(CountCalls(master_.Calls(), "/heartbeat", "", 409), 1u);
  // Heartbeats are accepted again afterwards.
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) {
        for (size_t i = calls.size(); i-- > 0;) {
          if (calls[i].path.find("/register") != std::string::npos) return false;
          if (calls[i].path.find("/heartbeat") != std::string::npos && calls[i].status == 200) {
            return true;
          }
        }
        return false;
      },
      kTimeout));
}

TEST_F(AgentTest, ResumesTheEventStreamFromTheLastOffsetPlusOne) {
  StartAgent();
  master_.SkipOffsets(5);  // orders of other agents
  uint64_t offset = master_.Publish(Assign("alloc-a", {"true"}));
  WaitExited("alloc-a");
  master_.DropStreams();
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) { return CountCalls(calls, "/api/v1/events") >= 2; }, kTimeout));
  auto streams = master_.CallsTo("/api/v1/events");
  EXPECT_EQ(streams[1].query["from"], std::to_string(offset + 1));
  master_.Publish(Assign("alloc-b", {"true"}));
  WaitExited("alloc-b");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-a", "started")).size(), 1u);
}

TEST_F(AgentTest, ResumesAfterAMasterRestartWithoutRunningAnythingTwice) {
  StartAgent();
  uint64_t offset = master_.Publish(Assign("alloc-a", {"sh", "-c", "echo once"}));
  WaitExited("alloc-a");
  master_.Restart();
  // The agent registers again with the same incarnation and reconnects after its last order.
  ASSERT_TRUE(master_.WaitFor(
      [](const Calls& calls) {
        return CountCalls(calls, "/register") >= 2 && CountCalls(calls, "/api/v1/events") >= 2;
      },
      kTimeout));
  auto registers = master_.CallsTo("/register");
  EXPECT_EQ(registers.back().body["incarnation"], agent_->incarnation());
  auto streams = master_.CallsTo("/api/v1/events");
  EXPECT_EQ(streams.back().query["from"], std::to_string(offset + 1));
  master_.Publish(Assign("alloc-b", {"true"}));
  WaitExited("alloc-b");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-a", "started")).size(), 1u);
  EXPECT_EQ(LogLines("alloc-a").size(), 1u);
}

TEST_F(AgentTest, RetriesReportsOn5xxButNotOn4xx) {
  master_.FailNext("/started", 404, 1);
  master_.FailNext("/exited", 503, 2);
  StartAgent();
  master_.Publish(Assign("alloc-r", {"true"}));
  WaitExited("alloc-r");
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-r", "started")).size(), 1u);
  auto exited = master_.CallsTo(testing::AllocationPath("alloc-r", "exited"));
  ASSERT_EQ(exited.size(), 3u);
  EXPECT_EQ(exited[0].status, 503);
  EXPECT_EQ(exited[2].status, 200);
}

TEST_F(AgentTest, ShipsManyLinesInBatchesBeforeTheExit) {
  StartAgent();
  master_.Publish(Assign("alloc-many", {"seq", "1", "2500"}));
  WaitExited("alloc-many");
  auto lines = LogLines("alloc-many");
  ASSERT_EQ(lines.size(), 2500u);
  EXPECT_EQ(lines.begin()->first, 0u);
  EXPECT_EQ(lines.rbegin()->first, 2499u);
  EXPECT_EQ(lines[2499]["log"], "2500\n");
  for (const auto& call : master_.CallsTo("/api/v1/task/logs")) {
    EXPECT_LE(call.body["logs"].size(), 1000u);
  }
}

TEST_F(AgentTest, ReportsAnEntrypointThatCannotStart) {
  StartAgent();
  master_.Publish(Assign("alloc-bad", {dir_.Sub("no-such-program")}));
  nlohmann::json exited = WaitExited("alloc-bad");
  EXPECT_EQ(exited["exitCode"], 127);
  EXPECT_NE(exited["reason"].get<std::string>().find("could not start"), std::string::npos);
  EXPECT_EQ(master_.CallsTo(testing::AllocationPath("alloc-bad", "started")).size(), 0u);
}

TEST_F(AgentTest, ShutdownStopsTasksAndReportsTheirExits) {
  StartAgent();
  master_.Publish(Assign("alloc-s", {"sleep", "30"}));
  ASSERT_TRUE(WaitStarted("alloc-s"));
  agent_->Shutdown();
  EXPECT_EQ(agent_->RunningTasks(), 0u);
  auto exited = master_.CallsTo(testing::AllocationPath("alloc-s", "exited"));
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_EQ(exited[0].body["signal"], SIGTERM);
  EXPECT_EQ(exited[0].body["reason"], "agent shutting down");
}

TEST_F(AgentTest, WritesTheTraceFile) {
  AgentOptions options = Options();
  options.trace_file = dir_.Sub("trace");
  StartAgent(options);
  master_.Publish(Assign("alloc-t", {"true"}));
  WaitExited("alloc-t");
  std::ifstream trace(dir_.Sub("trace"));
  std::string allocation_id;
  long long micros = 0;
  ASSERT_TRUE(trace >> allocation_id >> micros);
  EXPECT_EQ(allocation_id, "alloc-t");
  EXPECT_GT(micros, 1700000000LL * 1000000);
}

}  // namespace
}  // namespace cairn::agent
