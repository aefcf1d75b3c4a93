// The master's REST API over real HTTP on loopback, with the real embedded log and RocksDB
// projections in a temporary directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "api/http/http_client.h"
#include "api/master.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using nlohmann::json;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override { StartMaster(); }

  void StartMaster() {
    MasterConfig config;
    config.port = 0;
    config.data_dir = dir_.Sub("data");
    config.log.data_dir = config.data_dir;
    config.max_request_body_bytes = 64 * 1024;
    auto master = Master::Start(config);
    ASSERT_TRUE(master.ok()) << master.status().ToString();
    master_ = std::move(*master);
    client_ = std::make_unique<http::Client>("127.0.0.1", master_->port());
  }

  http::ClientResponse Call(const std::string& method, const std::string& target,
                            const std::string& body = "",
                            std::map<std::string, std::string> headers = {}) {
    auto response = client_->Request(method, target, body, headers);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : http::ClientResponse{};
  }

  json CallJson(const std::string& method, const std::string& target, const std::string& body = "",
                int expected_status = 200) {
    auto response = Call(method, target, body);
    EXPECT_EQ(response.status, expected_status) << method << " " << target << ": " << response.body;
    return json::parse(response.body, nullptr, false);
  }

  std::vector<json> Events() {
    std::vector<json> events;
    http::Client streamer("127.0.0.1", master_->port());
    auto status = streamer.StreamLines("GET", "/api/v1/events?from=0", [&](std::string_view line) {
      events.push_back(json::parse(line));
      return true;
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return events;
  }

  std::string Submit(const json& config, const std::string& extra = "") {
    json body = json{{"config", config}};
    if (!extra.empty()) body = json::parse(extra);
    auto reply = CallJson("POST", "/api/v1/commands", body.dump());
    return reply["command"]["id"].get<std::string>();
  }

  json RegisterAgent(const std::string& id, int slots, const std::string& incarnation) {
    return CallJson("POST", "/api/v1/agents/" + id + "/register",
                    json{{"incarnation", incarnation}, {"slots", slots}, {"hostname", "h"}}.dump());
  }

  testing::TempDir dir_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<http::Client> client_;
};

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
  EXPECT_EQ(bad_password.status, 403);
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
       400, "config.resources.slots must be an integer"},
      {"POST", "/api/v1/commands",
       R"({"config":{"entrypoint":["a"],"resources":{"priority":500}}})", 400, "between 1 and 99"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"],"colour":"red"}})", 400,
       "unknown field config.colour"},
      {"POST", "/api/v1/commands",
       R"({"config":{"entrypoint":["a"],"resources":{"resource_pool":"gpu"}}})", 400,
       "resource pool gpu does not exist"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"]},"templateName":"t"})", 501,
       "templates"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"],"bind_mounts":[]}})", 501,
       "config.bind_mounts is not supported"},
      {"POST", "/api/v1/commands",
       "{\"config\":{\"entrypoint\":[\"" + std::string(70000, 'a') + "\"]}}", 413, "too large"},
      {"POST", "/api/v1/commands/nope/kill", "", 404, "task nope not found"},
      {"GET", "/api/v1/tasks/nope", "", 404, "task nope not found"},
      {"GET", "/api/v1/tasks/nope/logs", "", 404, "not found"},
      {"GET", "/api/v1/nothing-here", "", 404, "no route"},
      {"DELETE", "/api/v1/commands", "", 405, "not allowed"},
      {"POST", "/api/v1/experiments", "{}", 501, "experiments"},
      {"GET", "/api/v1/events?from=abc", "", 400, "from must be"},
      {"GET", "/api/v1/events?from=999999", "", 400, "past the end"},
      {"POST", "/api/v1/allocations/x.1/exited", R"({"taskId":"x"})", 400, "exitCode or signal"},
      {"POST", "/api/v1/allocations/x.1/started", R"({"taskId":"x"})", 404, "allocation x.1"},
      {"POST", "/api/v1/agents/bad%2Fid/register", R"({"incarnation":"i","slots":1})", 400,
       "bad agent id"},
      {"POST", "/api/v1/agents/a1/register", R"({"incarnation":"i","slots":-1})", 400, "slots"},
      {"POST", "/api/v1/task/logs",
       R"({"logs":[{"taskId":"t","allocationId":"a","log":"x","seq":0}]})", 404, "unknown task"},
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

TEST_F(ApiTest, TheJobQueueOrdersByPriorityThenSubmission) {
  std::string low = Submit({{"entrypoint", {"true"}}, {"resources", {{"priority", 60}}}});
  std::string high = Submit({{"entrypoint", {"true"}}, {"resources", {{"priority", 5}}}});
  std::string mid = Submit({{"entrypoint", {"true"}}});
  json queue = CallJson("GET", "/api/v1/job-queues-v2?limit=100&offset=0&orderBy=ORDER_BY_ASC");
  ASSERT_EQ(queue["jobs"].size(), 3u);
  EXPECT_EQ(queue["jobs"][0]["full"]["jobId"], high);
  EXPECT_EQ(queue["jobs"][1]["full"]["jobId"], mid);
  EXPECT_EQ(queue["jobs"][2]["full"]["jobId"], low);
  EXPECT_EQ(queue["jobs"][2]["full"]["summary"]["jobsAhead"], 2);
  EXPECT_EQ(queue["jobs"][0]["full"]["summary"]["state"], "STATE_QUEUED");
  EXPECT_EQ(queue["pagination"]["total"], 3);
  EXPECT_EQ(queue["pagination"]["endIndex"], 3);
  json page = CallJson("GET", "/api/v1/job-queues-v2?limit=1&offset=1");
  ASSERT_EQ(page["jobs"].size(), 1u);
  EXPECT_EQ(page["jobs"][0]["full"]["jobId"], mid);
  json pools = CallJson("GET", "/api/v1/resource-pools");
  EXPECT_EQ(pools["resourcePools"][0]["defaultComputePool"], true);
  EXPECT_EQ(pools["resourcePools"][0].size(), 33u) << "Determined's 30 required keys and more";
}

TEST_F(ApiTest, AWriteCarriesItsOffsetAndAReadCanWaitForIt) {
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

TEST_F(ApiTest, TheAgentProtocolRunsACommandsWholeStory) {
  std::string id = Submit({{"entrypoint", {"echo", "hi"}}});
  json registered = RegisterAgent("a1", 2, "inc-1");
  EXPECT_EQ(registered["placements"]["transport"], "http");
  // The placement reaches the agent's filtered tail.
  std::vector<json> orders;
  http::Client streamer("127.0.0.1", master_->port());
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
  ASSERT_EQ(log_lines.size(), 1u);
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
  std::string id = Submit({{"entrypoint", {"sleep", "100"}}});
  json killed = CallJson("POST", "/api/v1/commands/" + id + "/kill");
  EXPECT_EQ(killed["command"]["state"], "STATE_TERMINATED");
  EXPECT_NE(killed["command"]["exitStatus"].get<std::string>().find("before it was scheduled"),
            std::string::npos);
}

TEST_F(ApiTest, ARestartedMasterReplaysItsHistory) {
  std::string id = Submit({{"entrypoint", {"true"}}});
  master_->Stop();
  master_.reset();
  StartMaster();
  json master = CallJson("GET", "/api/v1/master");
  EXPECT_EQ(master["cairn"]["writerEpoch"], 2);
  auto end = Events().size();
  json task = CallJson("GET", "/api/v1/tasks/" + id + "?minOffset=" + std::to_string(end - 1));
  EXPECT_EQ(task["task"]["cairn"]["state"], "TASK_STATE_QUEUED");
  std::string second = Submit({{"entrypoint", {"true"}}});
  json queue = CallJson("GET", "/api/v1/job-queues-v2");
  ASSERT_EQ(queue["jobs"].size(), 2u);
  EXPECT_EQ(queue["jobs"][1]["full"]["jobId"], second);
}

}  // namespace
}  // namespace cairn
