// Determined's task semantics where its users' scripts can tell, with real processes: a one-string
// entrypoint runs under /bin/sh -c, the context's startup-hook.sh is sourced first, a variable
// named without a value is unset, the log ends with the master's lifecycle lines and offers its
// filter values, and deleting a workspace kills its live commands.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

std::vector<std::string> MasterLines(const std::vector<json>& lines) {
  std::vector<std::string> texts;
  for (const auto& line : lines) {
    if (line["source"] == "master") texts.push_back(line["message"]);
  }
  return texts;
}

TEST(DeterminedSemantics, CommandsRunAsDeterminedsEntrypointRunsThem) {
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 2);

  // `det cmd run 'env | grep -q TEST=TEST'` sends a list of one string.
  const std::string grep =
      cluster.Submit({{"entrypoint", {"env | grep -q TEST=TEST"}},
                      {"environment", {{"environment_variables", {"TEST=TEST", "HOME"}}}}});
  std::vector<json> lines = cluster.FollowLogLines(grep);
  EXPECT_EQ(cluster.Get("/api/v1/tasks/" + grep)["task"]["cairn"]["exitCode"], 0);
  std::vector<std::string> closing = MasterLines(lines);
  ASSERT_EQ(closing.size(), 2u);
  EXPECT_EQ(closing[0], "resources exited successfully with a zero exit code\n");
  EXPECT_NE(closing[1].find("was terminated: allocation stopped early after all resources "
                            "exited: resources exited successfully"),
            std::string::npos)
      << closing[1];

  // A variable named without a value is unset (Docker's reading of Determined's entry).
  const std::string unset =
      cluster.Submit({{"entrypoint", {"echo ${HOME-unset}"}},
                      {"environment", {{"environment_variables", {"HOME"}}}}});
  EXPECT_EQ(cluster.FollowLogs(unset), "unset\n");

  // The context's startup-hook.sh is sourced before the command.
  TempDir context;
  {
    std::ofstream hook(context.Sub("startup-hook.sh"));
    hook << "export HOOKED=yes\n";
  }
  auto client = cluster.Client();
  auto launched = client.Request("POST", "/api/v1/commands",
                                 json{{"config", {{"entrypoint", {"echo", "$HOOKED"}}}},
                                      {"files", ModelDefinition(context.path())}}
                                     .dump());
  ASSERT_TRUE(launched.ok());
  ASSERT_EQ(launched->status, 200) << launched->body;
  const std::string hooked = json::parse(launched->body)["command"]["id"];
  // Two arguments run without a shell: the hook's variable reaches the environment, not the
  // argument.
  EXPECT_EQ(cluster.FollowLogs(hooked), "$HOOKED\n");
  auto shelled = client.Request("POST", "/api/v1/commands",
                                json{{"config", {{"entrypoint", {"echo $HOOKED"}}}},
                                     {"files", ModelDefinition(context.path())}}
                                    .dump());
  ASSERT_TRUE(shelled.ok());
  ASSERT_EQ(shelled->status, 200) << shelled->body;
  EXPECT_EQ(cluster.FollowLogs(json::parse(shelled->body)["command"]["id"]), "yes\n");

  // A failure says so at ERROR, as Determined's master does.
  const std::string failing = cluster.Submit({{"entrypoint", "echo oops >&2; exit 7"}});
  lines = cluster.FollowLogLines(failing);
  closing = MasterLines(lines);
  ASSERT_FALSE(closing.empty());
  EXPECT_EQ(
      closing[0],
      "crashed: resources failed with non-zero exit code: exited with code 7 (exit code 7)\n");
  EXPECT_EQ(lines[lines.size() - 2]["level"], "LOG_LEVEL_ERROR");

  // `det task logs` offers the filter values of the task's lines.
  auto fields = client.Request("GET", "/api/v1/tasks/" + failing + "/logs/fields");
  ASSERT_TRUE(fields.ok());
  ASSERT_EQ(fields->status, 200) << fields->body;
  json result = json::parse(fields->body.substr(0, fields->body.find('\n')))["result"];
  EXPECT_EQ(result["agentIds"], json::array({"agent-1"}));
  EXPECT_EQ(result["stdtypes"], json::array({"stderr"}));
  EXPECT_EQ(result["sources"], json::array({"master", "task"}));
  EXPECT_EQ(result["allocationIds"].size(), 1u);
  for (const char* key : {"containerIds", "rankIds"}) EXPECT_TRUE(result[key].is_array()) << key;
}

// `det task logs --head N` sends limit=N; `--tail N` limit=N&orderBy=ORDER_BY_DESC and
// reverses what it gets.
TEST(DeterminedSemantics, LogsHonourHeadAndTail) {
  Cluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  const std::string id = cluster.Submit({{"entrypoint", {"seq", "1", "5"}}});
  ASSERT_EQ(cluster.FollowLogs(id), "1\n2\n3\n4\n5\n");
  auto client = cluster.Client();
  auto messages = [&](const std::string& query) {
    std::vector<std::string> out;
    auto status = client.StreamLines("GET", "/api/v1/tasks/" + id + "/logs" + query,
                                     [&](std::string_view line) {
                                       if (!line.empty()) {
                                         out.push_back(json::parse(line)["result"]["message"]);
                                       }
                                       return true;
                                     });
    EXPECT_TRUE(status.ok()) << query << ": " << status.ToString();
    return out;
  };
  EXPECT_EQ(messages("?limit=2"), (std::vector<std::string>{"1\n", "2\n"}));
  std::vector<std::string> tail = messages("?limit=4&orderBy=ORDER_BY_DESC");
  ASSERT_EQ(tail.size(), 4u);
  EXPECT_NE(tail[0].find("was terminated"), std::string::npos) << tail[0];
  EXPECT_EQ(tail[1], "resources exited successfully with a zero exit code\n");
  EXPECT_EQ(tail[2], "5\n");
  EXPECT_EQ(tail[3], "4\n");
  EXPECT_EQ(messages("").size(), 7u) << "five lines and the master's two";
  EXPECT_EQ(client.Request("GET", "/api/v1/tasks/" + id + "/logs?limit=-1")->status, 400);
  EXPECT_EQ(client.Request("GET", "/api/v1/tasks/" + id + "/logs?orderBy=sideways")->status, 400);
}

TEST(DeterminedSemantics, DeletingAWorkspaceKillsItsLiveCommands) {
  Cluster cluster;
  // Under rbac a deleted workspace's work is no one's to see but admins'; under basic (the
  // master's default) everyone's.
  cluster.SetAuthz("basic");
  cluster.StartMaster();
  cluster.StartAgent("agent-1", 1);
  auto client = cluster.Client();
  auto created = client.Request("POST", "/api/v1/workspaces", R"({"name":"scratch"})");
  ASSERT_TRUE(created.ok());
  const int32_t workspace = json::parse(created->body)["workspace"]["id"];
  auto launched = client.Request(
      "POST", "/api/v1/commands",
      json{{"config", {{"entrypoint", {"sleep", "600"}}}}, {"workspaceId", workspace}}.dump());
  ASSERT_TRUE(launched.ok());
  ASSERT_EQ(launched->status, 200) << launched->body;
  const std::string id = json::parse(launched->body)["command"]["id"];
  cluster.WaitForEvent(
      [&](const json& e) { return e.contains("taskStarted") && e["taskStarted"]["taskId"] == id; });

  auto deleted = client.Request("DELETE", "/api/v1/workspaces/" + std::to_string(workspace));
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->status, 200) << deleted->body;
  json kill = cluster.WaitForEvent([&](const json& e) {
    return e.contains("killRequested") && e["killRequested"]["taskId"] == id;
  });
  EXPECT_EQ(kill["killRequested"]["reason"], "user requested workspace delete");
  cluster.FollowLogs(id);  // ends once the task has
  EXPECT_EQ(cluster.Get("/api/v1/tasks/" + id)["task"]["cairn"]["state"], "TASK_STATE_TERMINATED");
  EXPECT_EQ(client.Request("GET", "/api/v1/workspaces/" + std::to_string(workspace))->status, 404);
}

}  // namespace
}  // namespace cairn::testing
