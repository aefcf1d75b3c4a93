// End to end with real processes: cairn-master on the embedded log, cairn-agent running real
// commands, the REST API over loopback, and the `cairn` replay tool on the same data directory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <thread>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

bool IsEventFor(const json& event, const char* type, const std::string& task_id) {
  return event.contains(type) && event[type].value("taskId", "") == task_id;
}

// Every task's story, counted from the log: each step must appear exactly once.
std::map<std::string, int> StoryOf(const std::vector<json>& events, const std::string& task_id) {
  std::map<std::string, int> counts;
  for (const auto& event : events) {
    for (const char* type :
         {"taskSubmitted", "allocationAssigned", "taskStarted", "killRequested", "taskExited"}) {
      if (IsEventFor(event, type, task_id)) counts[type]++;
    }
  }
  return counts;
}

TEST(EndToEnd, EchoFailureAndKillThroughRealProcesses) {
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 4);

  // echo hi: logs and exit 0 visible through the API.
  std::string echo = cluster.Submit({{"entrypoint", {"echo", "hi"}}});
  EXPECT_EQ(cluster.FollowLogs(echo), "hi\n");
  json echo_command = cluster.Get("/api/v1/commands/" + echo);
  EXPECT_EQ(echo_command["command"]["state"], "STATE_TERMINATED");
  EXPECT_EQ(echo_command["command"]["cairn"]["exitCode"], 0);
  EXPECT_EQ(echo_command["command"]["cairn"]["agentId"], "agent-1");

  // A failing command keeps its exit code, and stderr arrives as logs too.
  std::string failing = cluster.Submit({{"entrypoint", "echo oops >&2; exit 7"}});
  EXPECT_EQ(cluster.FollowLogs(failing), "oops\n");
  json failed = cluster.Get("/api/v1/tasks/" + failing);
  EXPECT_EQ(failed["task"]["cairn"]["exitCode"], 7);
  EXPECT_EQ(failed["task"]["cairn"]["exitReason"], "exited with code 7");

  // Task environment reaches the process.
  std::string env = cluster.Submit({{"entrypoint", "echo $DET_TASK_ID $DET_AGENT_ID $DET_SLOT_IDS"},
                                    {"resources", {{"slots", 2}}}});
  EXPECT_EQ(cluster.FollowLogs(env), env + " agent-1 [0,1]\n");

  // A kill of a running sleep: SIGTERM reaches the process group.
  std::string sleeper = cluster.Submit({{"entrypoint", {"sleep", "600"}}});
  cluster.WaitForEvent([&](const json& e) { return IsEventFor(e, "taskStarted", sleeper); });
  auto client = cluster.Client();
  auto killed = client.Request("POST", "/api/v1/commands/" + sleeper + "/kill");
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->status, 200);
  cluster.FollowLogs(sleeper);
  json task = cluster.Get("/api/v1/tasks/" + sleeper);
  EXPECT_EQ(task["task"]["cairn"]["signal"], 15);
  EXPECT_EQ(task["task"]["cairn"]["state"], "TASK_STATE_TERMINATED");

  auto events = cluster.AllEvents();
  for (const auto& id : {echo, failing, env}) {
    EXPECT_EQ(StoryOf(events, id), (std::map<std::string, int>{{"taskSubmitted", 1},
                                                               {"allocationAssigned", 1},
                                                               {"taskStarted", 1},
                                                               {"taskExited", 1}}));
  }
  EXPECT_EQ(StoryOf(events, sleeper)["killRequested"], 1);
  EXPECT_EQ(StoryOf(events, sleeper)["taskExited"], 1);

  json agents = cluster.Get("/api/v1/agents");
  ASSERT_EQ(agents["agents"].size(), 1u);
  EXPECT_EQ(agents["agents"][0]["cairn"]["runningAllocations"], 0);
}

TEST(EndToEnd, AMasterRestartInTheMiddleKeepsTheTaskStoryWhole) {
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  // The task blocks on a FIFO until the test releases it, so it spans the restart.
  std::string gate = cluster.dir().Sub("gate");
  ASSERT_EQ(mkfifo(gate.c_str(), 0600), 0);
  std::string id = cluster.Submit({{"entrypoint", "read line < " + gate + "; echo got $line"}});
  cluster.WaitForEvent([&](const json& e) { return IsEventFor(e, "taskStarted", id); });

  cluster.StopMaster(SIGKILL);  // no goodbye: a crash
  cluster.StartMaster();        // same port, same data dir: startup is replay
  // A command submitted after the restart waits for the slot the running task holds.
  std::string after = cluster.Submit({{"entrypoint", {"echo", "after"}}});
  {
    std::ofstream release(gate);
    release << "go\n";
  }
  EXPECT_EQ(cluster.FollowLogs(id), "got go\n");
  EXPECT_EQ(cluster.FollowLogs(after), "after\n");
  json task = cluster.Get("/api/v1/tasks/" + id);
  EXPECT_EQ(task["task"]["cairn"]["exitCode"], 0);

  auto events = cluster.AllEvents();
  const std::map<std::string, int> whole = {
      {"taskSubmitted", 1}, {"allocationAssigned", 1}, {"taskStarted", 1}, {"taskExited", 1}};
  EXPECT_EQ(StoryOf(events, id), whole) << "nothing ran twice, nothing was lost";
  EXPECT_EQ(StoryOf(events, after), whole);
  int epochs = 0;
  for (const auto& e : events) epochs += e.contains("writerEpochClaimed");
  EXPECT_EQ(epochs, 2);

  // A clean stop, then a second start continues on the same data.
  cluster.StopMaster(SIGTERM);
  cluster.StartMaster();
  json commands = cluster.Get("/api/v1/commands");
  EXPECT_EQ(commands["commands"].size(), 2u);
}

// A follower of a task's log (`det task logs -f`) loses its connection when the master dies
// (kill -9) and asks again with the last line's id (afterId): it sees every line once and in
// order, those printed before the crash, while the master was down (the agent holds them) and
// after.
TEST(EndToEnd, AFollowerResumesAcrossAMasterCrashWithEveryLineOnceInOrder) {
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  std::string gate = cluster.dir().Sub("gate");
  ASSERT_EQ(mkfifo(gate.c_str(), 0600), 0);
  const std::string id = cluster.Submit(
      {{"entrypoint", "seq -f line-%g 1 2000; read go < " + gate + "; seq -f line-%g 2001 4000"}});
  std::vector<std::string> seen;
  std::string last_id;
  auto follow = [&](const std::string& after) {
    auto client = cluster.Client();
    std::string target = "/api/v1/tasks/" + id + "/logs?follow=true";
    if (!after.empty()) target += "&afterId=" + after;
    return client.StreamLines("GET", target, [&](std::string_view text) {
      if (text.empty()) return true;  // a keep-alive
      const json line = json::parse(text)["result"];
      last_id = line["id"];
      if (line["source"] == "task") seen.push_back(line["message"]);
      return seen.empty() || seen.back() != "line-2000\n";  // the first connection stops here
    });
  };
  ASSERT_TRUE(follow("").ok());
  ASSERT_EQ(seen.size(), 2000u);
  cluster.StopMaster(SIGKILL);
  {
    std::ofstream release(gate);  // the task prints its second half while no master listens
    release << "go\n";
  }
  cluster.StartMaster();
  // A broken stream is asked for again from its last line until the task's log ends.
  Status followed = follow(last_id);
  ASSERT_TRUE(followed.ok()) << followed.ToString();
  ASSERT_EQ(seen.size(), 4000u);
  for (size_t i = 0; i < seen.size(); ++i) {
    ASSERT_EQ(seen[i], "line-" + std::to_string(i + 1) + "\n") << "at " << i;
  }
  // A stream asked for after the last line has nothing more; a bad id is a clear error.
  std::vector<std::string> after_end;
  auto client = cluster.Client();
  ASSERT_TRUE(client
                  .StreamLines("GET", "/api/v1/tasks/" + id + "/logs?afterId=" + last_id,
                               [&](std::string_view text) {
                                 if (!text.empty()) after_end.emplace_back(text);
                                 return true;
                               })
                  .ok());
  EXPECT_TRUE(after_end.empty()) << after_end.front();
  auto refused = client.Request("GET", "/api/v1/tasks/" + id + "/logs?afterId=nonsense");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("afterId"), std::string::npos) << refused->body;
}

TEST(EndToEnd, ReplayRebuildsTheLiveProjectionsExactlyAndShowsThePast) {
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 2);
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(cluster.Submit({{"entrypoint", "echo task " + std::to_string(i)}}));
  }
  for (const auto& id : ids) cluster.FollowLogs(id);
  json submitted =
      cluster.WaitForEvent([&](const json& e) { return IsEventFor(e, "taskSubmitted", ids[5]); });
  uint64_t submitted_offset = std::stoull(submitted["offset"].get<std::string>());
  auto events = cluster.AllEvents();
  uint64_t last = events.size() - 1;
  // Let the live projections reach the end of the log, then stop so they hold still.
  cluster.Get("/api/v1/tasks/" + ids[0] + "?minOffset=" + std::to_string(last));
  cluster.ExpectRebuiltProjectionsEqualLive();

  // The past: right after the last submission, that task was still queued or just placed.
  auto past = cluster.RunCairn({"replay", "state", "--data", cluster.data_dir(), "--at-offset",
                                std::to_string(submitted_offset), "--format", "json"});
  std::string joined;
  for (const auto& line : past) joined += line + "\n";
  json state = json::parse(joined, nullptr, false);
  ASSERT_FALSE(state.is_discarded()) << joined;
  bool found = false;
  for (const auto& task : state["tasks"]) {
    if (task.value("taskId", "") != ids[5]) continue;
    found = true;
    EXPECT_NE(task.value("state", ""), "TASK_STATE_TERMINATED") << task.dump();
  }
  EXPECT_TRUE(found) << joined;
}

}  // namespace
}  // namespace cairn::testing
