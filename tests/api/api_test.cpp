// The master's REST API over real HTTP on loopback, with the real embedded log and RocksDB
// projections in a temporary directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "base/gzip.h"
#include "base/log.h"
#include "tests/api/api_fixture.h"

namespace cairn {
namespace {

using nlohmann::json;
using namespace api_testing;

TEST_F(ApiTest, InfoLoginAndMeFollowDeterminedsFlow) {
  json info = CallJson("GET", "/info");
  EXPECT_EQ(info["version"], "0.38.1");
  json login = CallJson("POST", "/api/v1/auth/login",
                        R"({"username":"admin","password":"","isHashed":true})");
  std::string token = login["token"];
  EXPECT_EQ(login["user"]["username"], "admin");
  auto me = Call("GET", "/api/v1/me", "", {{"Authorization", "Bearer " + token}});
  EXPECT_EQ(me.status, 200);
  EXPECT_EQ(json::parse(me.body)["user"]["id"], 1);
  auto bad_token = Call("GET", "/api/v1/me", "", {{"Authorization", "Bearer cairn1.admin.00"}});
  EXPECT_EQ(bad_token.status, 401);
  auto bad_password = Call("POST", "/api/v1/auth/login", R"({"username":"admin","password":"x"})");
  EXPECT_EQ(bad_password.status, 401);
  EXPECT_EQ(json::parse(bad_password.body)["message"], "invalid credentials");
}

TEST_F(ApiTest, BadInputGetsAClearErrorAndAppendsNothing) {
  size_t before = Events().size();
  struct Case {
    std::string method, target, body;
    int status;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"POST", "/api/v1/commands", "{not json", 400, "malformed JSON"},
      {"POST", "/api/v1/commands", "[1,2]", 400, "must be an object"},
      {"POST", "/api/v1/commands", "{}", 400, "config"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":7}})", 400, "config.entrypoint"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":[]}})", 400, "config.entrypoint"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"],"resources":{"slots":"x"}}})",
       400, "config.resources.slots: expected an integer"},
      {"POST", "/api/v1/commands",
       R"({"config":{"entrypoint":["a"],"resources":{"priority":500}}})", 400, "between 1 and 99"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"],"colour":"red"}})", 400,
       "config.colour: unknown field"},
      {"POST", "/api/v1/commands",
       R"({"config":{"entrypoint":["a"],"resources":{"resource_pool":"gpu"}}})", 400,
       "resource pool gpu does not exist"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"]},"templateName":"t"})", 404,
       "template t not found"},
      {"POST", "/api/v1/commands",
       R"({"config":{"entrypoint":["a"]},"files":[{"path":"../x","content":""}]})", 400, "files:"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"]},"force":1})", 400,
       "force must be a boolean"},
      {"POST", "/api/v1/commands",
       R"({"config":{"entrypoint":["a"],"resources":{"max_slots":-1}}})", 400,
       "config.resources.max_slots: must be at least 0"},
      {"POST", "/api/v1/job-queues", R"({"updates":[{"jobId":"nope","priority":5}]})", 404,
       "job nope not found"},
      {"POST", "/api/v1/commands/nope/set_priority", R"({"priority":5})", 404,
       "command nope not found"},
      {"POST", "/api/v1/tensorboards", R"({"experimentIds":[1],"filters":{"x":1}})", 501,
       "TensorBoard filters are not supported"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"],"pbs":{}}})", 501,
       "config.pbs is not supported"},
      {"POST", "/api/v1/commands",
       "{\"config\":{\"entrypoint\":[\"" + std::string(70000, 'a') + "\"]}}", 413, "too large"},
      {"POST", "/api/v1/commands/nope/kill", "", 404, "task nope not found"},
      {"GET", "/api/v1/tasks/nope", "", 404, "task nope not found"},
      {"GET", "/api/v1/tasks/nope/logs", "", 404, "not found"},
      {"GET", "/api/v1/nothing-here", "", 404, "no route"},
      {"DELETE", "/api/v1/commands", "", 405, "not allowed"},
      {"POST", "/api/v1/experiments", "{}", 400, "config: required"},
      {"POST", "/api/v1/experiments", R"({"config":"name: x\nbogus: 1\n"})", 400, "bogus"},
      {"POST", "/api/v1/experiments",
       R"({"config":"entrypoint: m:T\nsearcher: {name: single, metric: l, max_length: {batches: 1}}\n",)"
       R"("modelDefinition":[{"path":"../m.py","type":48,"content":""}]})",
       400, "modelDefinition"},
      {"POST", "/api/v1/experiments", R"({"config":"x: 1","parentId":3})", 501, "forking"},
      {"GET", "/api/v1/experiments/abc", "", 400, "experiment id must be"},
      {"GET", "/api/v1/experiments/99", "", 404, "experiment 99 not found"},
      {"POST", "/api/v1/experiments/99/pause", "", 404, "experiment 99 not found"},
      {"GET", "/api/v1/trials/99/workloads", "", 404, "trial 99 not found"},
      {"GET", "/api/v1/templates/nope", "", 404, "template nope not found"},
      {"POST", "/api/v1/templates/bad%20name", R"({"config":{}})", 400, "bad template name"},
      {"POST", "/api/v1/allocations/nope/workloads", R"({"sequence":0})", 404, "allocation nope"},
      {"POST", "/api/v1/models", "{}", 400, "name: required"},
      {"GET", "/api/v1/models/m1/versions/1/metrics", "", 501, "model version metrics"},
      {"POST", "/api/v1/workspaces", R"({"name":"team","checkpointStorageConfig":{"type":"s3"}})",
       400, "checkpointStorageConfig.bucket: required"},
      {"POST", "/api/v1/workspaces", R"({"name":"team","checkpointStorageConfig":{"type":"gcs"}})",
       501, "gcs"},
      {"POST", "/api/v1/workspaces", R"({"name":""})", 400, "1 to 80 characters"},
      {"POST", "/api/v1/workspaces/1/namespace-bindings", "{}", 501, "namespace bindings"},
      {"POST", "/api/v1/workspaces/1/projects", R"({"name":"p","key":"K"})", 501, "key"},
      {"GET", "/api/v1/projects/99", "", 404, "project 99 not found"},
      {"POST", "/api/v1/resource-pools/default/workspace-bindings", "{}", 400,
       "at least one workspace"},
      {"POST", "/api/v1/resource-pools/default/workspace-bindings",
       R"({"workspaceNames":["nope"]})", 404, "workspace nope not found"},
      {"POST", "/api/v1/roles/add-assignments",
       R"({"userRoleAssignments":[{"userId":1,"roleAssignment":{"role":{"roleId":9}}}]})", 404,
       "role 9 not found"},
      {"PUT", "/api/v1/groups/7", R"({"groupId":8})", 400, "differs from the path's"},
      {"GET", "/api/v1/groups/7", "", 404, "group 7 not found"},
      {"POST", "/api/v1/groups/search", R"({"limit":-1})", 400, "limit: must not be negative"},
      {"POST", "/api/v1/experiments/1/archive", "", 404, "experiment 1 not found"},
      {"DELETE", "/api/v1/experiments/1", "", 404, "experiment 1 not found"},
      {"POST", "/api/v1/experiments/continue", R"({"id":1,"overrideConfig":"x: ["})", 404,
       "experiment 1 not found"},
      {"POST", "/api/v1/trials/1/kill", "", 404, "trial 1 not found"},
      {"DELETE", "/api/v1/checkpoints", R"({"checkpointUuids":[]})", 400, "checkpointUuids"},
      {"GET", "/api/v1/checkpoints/00000000-0000-4000-8000-000000000000", "", 404, "not found"},
      {"GET", "/api/v1/trials/1/summarize", "", 501, "is not supported"},
      {"GET", "/api/v1/trials/1/profiler/available_series", "", 404, "trial 1 not found"},
      {"GET", "/api/v1/events?from=abc", "", 400, "from must be"},
      {"GET", "/api/v1/events?from=999999", "", 400, "past the end"},
      {"POST", "/api/v1/allocations/x.1/exited", R"({"taskId":"x","agentId":"a1"})", 400,
       "exitCode or signal"},
      {"POST", "/api/v1/allocations/x.1/exited", R"({"taskId":"x","exitCode":0})", 400,
       "agentId: required"},
      {"POST", "/api/v1/allocations/x.1/started", R"({"taskId":"x","agentId":"a1"})", 404,
       "allocation x.1"},
      {"POST", "/api/v1/agents/bad%2Fid/register", R"({"incarnation":"i","slots":1})", 400,
       "bad agent id"},
      {"POST", "/api/v1/agents/a1/register", R"({"incarnation":"i","slots":-1})", 400, "slots"},
      {"POST", "/api/v1/task/logs",
       R"({"logs":[{"taskId":"t","allocationId":"a","agentId":"a1","log":"x","seq":0}]})", 404,
       "unknown allocation a"},
  };
  for (const auto& c : cases) {
    auto response = Call(c.method, c.target, c.body);
    EXPECT_EQ(response.status, c.status) << c.method << " " << c.target << ": " << response.body;
    auto body = json::parse(response.body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << response.body;
    EXPECT_NE(body.value("message", "").find(c.message_part), std::string::npos)
        << c.target << ": " << response.body;
    EXPECT_TRUE(body.contains("code"));
  }
  EXPECT_EQ(Events().size(), before) << "a refused command must not append an event";
}

TEST_F(ApiTest, ACommandThatCanNeverFitIsRefusedUnlessForced) {
  RegisterAgent("a1", 2, "inc-1");
  size_t before = Events().size();
  auto refused = Call("POST", "/api/v1/commands",
                      R"({"config":{"entrypoint":["true"],"resources":{"slots":4}}})");
  EXPECT_EQ(refused.status, 400) << refused.body;
  std::string message = json::parse(refused.body).value("message", "");
  EXPECT_NE(message.find("can never fit"), std::string::npos) << message;
  EXPECT_NE(message.find("force"), std::string::npos) << message;
  EXPECT_EQ(Call("POST", "/api/v1/commands",
                 R"({"config":{"entrypoint":["true"],"resources":{"slots":4}},"force":"yes"})")
                .status,
            400);
  EXPECT_EQ(Events().size(), before) << "a refused command must not append an event";

  std::string forced = SubmitForced({{"entrypoint", {"true"}}, {"resources", {{"slots", 4}}}});
  json command = CallJson("GET", "/api/v1/commands/" + forced);
  EXPECT_EQ(command["command"]["state"], "STATE_QUEUED");
  json task = CallJson("GET", "/api/v1/tasks/" + forced + "?explain=true")["task"];
  EXPECT_NE(task["explanation"].get<std::string>().find("needs 4 slot"), std::string::npos)
      << task.dump();
}

TEST_F(ApiTest, AWriteCarriesItsOffsetAndAReadCanWaitForIt) {
  RegisterAgent("a1", 1, "inc-1");
  auto response = Call("POST", "/api/v1/commands", R"({"config":{"entrypoint":["true"]}})");
  ASSERT_EQ(response.status, 200);
  ASSERT_TRUE(response.headers.count("cairn-offset"));
  std::string offset = response.headers["cairn-offset"];
  std::string id = json::parse(response.body)["command"]["id"];
  json task = CallJson("GET", "/api/v1/tasks/" + id + "?minOffset=" + offset);
  EXPECT_EQ(task["task"]["taskId"], id);
  auto too_far = Call("GET", "/api/v1/tasks/" + id + "?minOffset=abc");
  EXPECT_EQ(too_far.status, 400);
}

TEST_F(ApiTest, ACommandListTakesDeterminedsOffsetAndLimit) {
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Submit({{"entrypoint", {"true"}}}));
  LoginAs("admin");
  ids.push_back(Submit({{"entrypoint", {"true"}}}));
  auto listed = [&](const std::string& query) {
    std::vector<std::string> found;
    // Kept whole: iterating a member of the temporary answer would read freed memory.
    const json answer = CallJson("GET", "/api/v1/commands" + query);
    for (const auto& command : answer["commands"]) {
      found.push_back(command["id"]);
    }
    return found;
  };
  EXPECT_EQ(listed(""), ids);
  EXPECT_EQ(listed("?offset=1&limit=2"), (std::vector<std::string>{ids[1], ids[2]}));
  EXPECT_EQ(listed("?offset=3"), (std::vector<std::string>{ids[3], ids[4]}));
  EXPECT_EQ(listed("?limit=2&users=admin"), (std::vector<std::string>{ids[4]}))
      << "filters apply before the page is cut";
  EXPECT_EQ(listed("?offset=1&users=determined"),
            (std::vector<std::string>{ids[1], ids[2], ids[3]}));
  EXPECT_TRUE(listed("?offset=9&limit=3").empty());
  EXPECT_EQ(Call("GET", "/api/v1/commands?limit=-1").status, 400);
  // No agent: every command waits. A state filter (Cairn's) keeps them, or none.
  EXPECT_EQ(listed("?states=STATE_QUEUED&states=STATE_RUNNING"), ids);
  EXPECT_TRUE(listed("?states=STATE_RUNNING").empty());
  EXPECT_EQ(listed("?limit=2&states=STATE_QUEUED&users=determined"),
            (std::vector<std::string>{ids[0], ids[1]}));
  auto unknown = Call("GET", "/api/v1/commands?states=STATE_SLEEPING");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(unknown.body.find("STATE_SLEEPING"), std::string::npos) << unknown.body;
}

TEST_F(ApiTest, TheAgentProtocolRunsACommandsWholeStory) {
  json registered = RegisterAgent("a1", 2, "inc-1");
  EXPECT_EQ(registered["placements"]["transport"], "http");
  std::string id = Submit({{"entrypoint", {"echo", "hi"}}});
  // The placement reaches the agent's filtered tail.
  std::vector<json> orders;
  net::Client streamer = LoggedInClient();
  ASSERT_TRUE(streamer
                  .StreamLines("GET", "/api/v1/events?from=0&agent=a1",
                               [&](std::string_view line) {
                                 orders.push_back(json::parse(line));
                                 return true;
                               })
                  .ok());
  ASSERT_EQ(orders.size(), 1u);
  const json& assigned = orders[0]["allocationAssigned"];
  EXPECT_EQ(assigned["taskId"], id);
  EXPECT_EQ(assigned["agentIncarnation"], "inc-1");
  std::string allocation = assigned["allocationId"];
  EXPECT_NE(assigned["reason"].get<std::string>().find("best fit on agent a1"), std::string::npos);

  CallJson("POST", "/api/v1/allocations/" + allocation + "/started",
           json{{"taskId", id}, {"agentId", "a1"}, {"pid", 99}}.dump());
  json line = {{"taskId", id},
               {"allocationId", allocation},
               {"agentId", "a1"},
               {"seq", 0},
               {"stdtype", "stdout"},
               {"log", "hi\n"},
               {"timestamp", "2025-03-20T12:00:00Z"}};
  std::string logs = json{{"logs", {line}}}.dump();
  CallJson("POST", "/api/v1/task/logs", logs);
  CallJson("POST", "/api/v1/task/logs", logs);  // a retried batch is stored once
  auto exited = Call("POST", "/api/v1/allocations/" + allocation + "/exited",
                     json{{"taskId", id}, {"agentId", "a1"}, {"exitCode", 0}}.dump());
  ASSERT_EQ(exited.status, 200);
  json task =
      CallJson("GET", "/api/v1/tasks/" + id + "?minOffset=" + exited.headers["cairn-offset"]);
  EXPECT_EQ(task["task"]["cairn"]["state"], "TASK_STATE_TERMINATED");
  EXPECT_EQ(task["task"]["cairn"]["exitCode"], 0);
  EXPECT_TRUE(task["task"].contains("endTime"));
  json command = CallJson("GET", "/api/v1/commands/" + id);
  EXPECT_EQ(command["command"]["state"], "STATE_TERMINATED");

  std::vector<json> log_lines;
  ASSERT_TRUE(streamer
                  .StreamLines("GET", "/api/v1/tasks/" + id + "/logs?follow=true",
                               [&](std::string_view l) {
                                 log_lines.push_back(json::parse(l));
                                 return true;
                               })
                  .ok());
  // The task's line, then the master's closing lines (Determined's lifecycle lines).
  ASSERT_EQ(log_lines.size(), 3u);
  EXPECT_EQ(log_lines[1]["result"]["source"], "master");
  EXPECT_EQ(log_lines[1]["result"]["message"],
            "resources exited successfully with a zero exit code\n");
  for (const char* key : {"id", "taskId", "timestamp", "level", "message", "log"}) {
    EXPECT_TRUE(log_lines[0]["result"].contains(key)) << "det needs " << key;
  }
  EXPECT_EQ(log_lines[0]["result"]["message"], "hi\n");
  EXPECT_EQ(log_lines[0]["result"]["level"], "LOG_LEVEL_INFO");

  auto wrong = Call("POST", "/api/v1/agents/a1/heartbeat", R"({"incarnation":"other"})");
  EXPECT_EQ(wrong.status, 409);
  EXPECT_EQ(Call("POST", "/api/v1/agents/a1/heartbeat", R"({"incarnation":"inc-1"})").status, 200);
  json agents = CallJson("GET", "/api/v1/agents");
  ASSERT_EQ(agents["agents"].size(), 1u);
  EXPECT_EQ(agents["agents"][0]["slots"].size(), 2u);
}

TEST_F(ApiTest, ARetriedRegistrationResumesFromTheIncarnationsFirstEvent) {
  json first = RegisterAgent("a1", 1, "inc-1");
  std::string id = Submit({{"entrypoint", {"true"}}});
  json retried = RegisterAgent("a1", 1, "inc-1");
  EXPECT_EQ(retried["resumeFrom"], first["resumeFrom"])
      << "a lost answer retried must not skip the orders placed since";
  json renewed = RegisterAgent("a1", 1, "inc-2");
  EXPECT_NE(renewed["resumeFrom"], first["resumeFrom"]);
  EXPECT_FALSE(id.empty());
}

TEST_F(ApiTest, AMasterThatCannotBindClaimsNoEpoch) {
  MasterConfig config;
  config.port = master_->port();  // taken by the running master
  config.data_dir = dir_.Sub("second");
  config.log.data_dir = config.data_dir;
  auto second = Master::Start(config);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("second/log"))) << "no log opened, no epoch";
}

TEST_F(ApiTest, KillingAQueuedCommandEndsIt) {
  std::string id = SubmitForced({{"entrypoint", {"sleep", "100"}}});
  json killed = CallJson("POST", "/api/v1/commands/" + id + "/kill");
  EXPECT_EQ(killed["command"]["state"], "STATE_TERMINATED");
  EXPECT_NE(killed["command"]["exitStatus"].get<std::string>().find("before it was scheduled"),
            std::string::npos);
}

TEST_F(ApiTest, ARestartedMasterReplaysItsHistory) {
  std::string id = SubmitForced({{"entrypoint", {"true"}}});
  master_->Stop();
  StartMaster();
  json master = CallJson("GET", "/api/v1/master");
  EXPECT_EQ(master["cairn"]["writerEpoch"], 2);
  auto end = Events().size();
  json task = CallJson("GET", "/api/v1/tasks/" + id + "?minOffset=" + std::to_string(end - 1));
  EXPECT_EQ(task["task"]["cairn"]["state"], "TASK_STATE_QUEUED");
  std::string second = SubmitForced({{"entrypoint", {"true"}}});
  json queue = CallJson("GET", "/api/v1/job-queues-v2");
  ASSERT_EQ(queue["jobs"].size(), 2u);
  EXPECT_EQ(queue["jobs"][1]["full"]["jobId"], second);
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

using nlohmann::json;
using namespace api_testing;

// det master config and det master logs: admins only; no secret in the configuration.
TEST_F(ApiTest, AdminsReadTheMastersConfigurationAndRecentLogs) {
  EXPECT_EQ(Call("GET", "/api/v1/master/config").status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/master/logs").status, 403);
  LoginAs("admin");
  auto config = Call("GET", "/api/v1/master/config");
  ASSERT_EQ(config.status, 200) << config.body;
  json shown = json::parse(config.body)["config"];
  EXPECT_EQ(shown["data_dir"], dir_.Sub("data"));
  EXPECT_EQ(shown["log"]["backend"], "embedded");
  EXPECT_TRUE(shown["resource_pools"].is_array()) << "Determined's list of pools";
  ASSERT_FALSE(agent_token_.empty());
  EXPECT_EQ(config.body.find(agent_token_), std::string::npos) << "a secret reached the answer";

  // The master's own lines, oldest first, with increasing ids; ?offset=-N keeps the last N.
  log::Info("api_test", "a line for det master logs");
  auto logs = Call("GET", "/api/v1/master/logs?offset=-3");
  ASSERT_EQ(logs.status, 200) << logs.body;
  std::vector<json> entries;
  std::istringstream lines(logs.body);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) entries.push_back(json::parse(line)["result"]["logEntry"]);
  }
  ASSERT_EQ(entries.size(), 3u) << logs.body;
  EXPECT_LT(entries[0]["id"].get<int64_t>(), entries[2]["id"].get<int64_t>());
  bool found = false;
  for (const auto& entry : entries) {
    EXPECT_FALSE(entry["timestamp"].get<std::string>().empty());
    found |= entry["message"] == "api_test: a line for det master logs";
  }
  EXPECT_TRUE(found) << logs.body;
  EXPECT_EQ(Call("GET", "/api/v1/master/logs?offset=x").status, 400);
}

// A past state shows a page of the experiments not ended at a moment (100 by default), and how
// many; experimentLimit=0 asks for all of them.
TEST_F(ApiTest, APastStateShowsAPageOfItsExperiments) {
  for (int i = 0; i < 3; ++i) {
    CallJson("POST", "/api/v1/experiments", api_testing::CreateExperimentBody(false).dump());
  }
  LoginAs("admin");
  const std::string last = std::to_string(
      std::stoull(CallJson("GET", "/api/v1/master")["cairn"]["appliedOffset"].get<std::string>()) -
      1);
  json whole = CallJson("GET", "/api/v1/history/state?experimentLimit=0&at=" + last);
  EXPECT_EQ(whole["experiments"].size(), 3u);
  EXPECT_FALSE(whole.contains("experimentsTotal"));
  json by_default = CallJson("GET", "/api/v1/history/state?at=" + last);
  EXPECT_EQ(by_default["experiments"], whole["experiments"]);
  EXPECT_EQ(by_default["experimentsTotal"], 3);
  json page = CallJson("GET", "/api/v1/history/state?experimentLimit=2&at=" + last);
  ASSERT_EQ(page["experiments"].size(), 2u);
  EXPECT_EQ(page["experimentsTotal"], 3);
  EXPECT_EQ(page["experiments"][0], whole["experiments"][0]);
  EXPECT_EQ(page["experiments"][1], whole["experiments"][1]);
  CallJson("GET", "/api/v1/history/state?experimentLimit=-1&at=" + last, "", 400);
}

// The slots and queue over time, for anyone signed in: a window ending now holds the agent's
// slots and the queued command, and bad windows are refused by name.
TEST_F(ApiTest, UtilizationOverAWindowShowsSlotsAndTheQueue) {
  RegisterAgent("a1", 2, "inc-1");
  auto submitted =
      Call("POST", "/api/v1/commands",
           R"({"config":{"entrypoint":["true"],"resources":{"slots":4}},"force":true})");
  ASSERT_EQ(submitted.status, 200) << submitted.body;
  const std::string offset = submitted.headers["cairn-offset"];
  json window = CallJson("GET", "/api/v1/history/utilization?steps=10&minOffset=" + offset);
  ASSERT_EQ(window["points"].size(), 10u) << window.dump();
  const json& last = window["points"][9];
  EXPECT_EQ(last["slotsTotal"], 2);
  EXPECT_EQ(last["slotsUsed"], 0);
  EXPECT_EQ(last["tasksWaiting"], 1);
  EXPECT_EQ(last["time"], window["to"]);
  EXPECT_EQ(last["offset"], offset) << "the submission is the last change";
  EXPECT_EQ(window["stepSeconds"], 360.0);

  json before = CallJson("GET", "/api/v1/history/utilization?from=1000&to=2000&steps=1");
  EXPECT_EQ(before["points"][0]["slotsTotal"], 0) << "nothing had happened in 1970";
  EXPECT_EQ(before["from"], "1970-01-01T00:16:40.000000Z");
  for (const char* bad : {"?from=2000&to=1000", "?steps=0", "?steps=1001", "?from=yesterday",
                          "?from=1000&to=1005&steps=10"}) {
    auto refused = Call("GET", std::string("/api/v1/history/utilization") + bad);
    EXPECT_EQ(refused.status, 400) << bad << ": " << refused.body;
  }
}

}  // namespace
// A big list is rendered once and sent gzipped to a caller whose Accept-Encoding takes it
// (Determined's CLI, browsers), the same bytes as the plain answer once inflated.
TEST_F(ApiTest, ABigListGoesGzippedToCallersThatAskAndPlainToOthers) {
  for (int i = 0; i < 150; ++i) ASSERT_FALSE(Submit({{"entrypoint", {"true"}}}).empty());
  net::ClientResponse plain = Call("GET", "/api/v1/commands");
  ASSERT_EQ(plain.status, 200);
  ASSERT_GT(plain.body.size(), 64u * 1024) << "the list should be big enough to be gzipped";
  EXPECT_EQ(plain.headers.count("content-encoding"), 0u);
  net::ClientResponse gzipped =
      Call("GET", "/api/v1/commands", "", {{"Accept-Encoding", "gzip, deflate"}});
  ASSERT_EQ(gzipped.status, 200);
  EXPECT_EQ(gzipped.headers["content-encoding"], "gzip");
  EXPECT_LT(gzipped.body.size(), plain.body.size() / 4);
  auto inflated = Gunzip(gzipped.body);
  ASSERT_TRUE(inflated.ok()) << inflated.status().ToString();
  EXPECT_EQ(json::parse(*inflated), json::parse(plain.body));
}

// The whole list is assembled from each command's kept rendering: a command that changes shows
// its new state in the next list, never the kept one.
TEST_F(ApiTest, AListedCommandShowsItsChangeInTheNextList) {
  const std::string id = Submit({{"entrypoint", {"sleep", "1000"}}});
  ASSERT_FALSE(id.empty());
  auto listed = [&] {
    const json answer = CallJson("GET", "/api/v1/commands");
    for (const auto& command : answer["commands"]) {
      if (command["id"] == id) return command;
    }
    return json();
  };
  EXPECT_EQ(listed()["cairn"]["killRequested"], false);
  EXPECT_EQ(listed(), listed()) << "kept and rendered alike";
  Call("POST", "/api/v1/commands/" + id + "/kill", "{}");
  EXPECT_EQ(listed()["cairn"]["killRequested"], true);
}

}  // namespace cairn
