// The master's REST API over real HTTP on loopback, with the real embedded log and RocksDB
// projections in a temporary directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "master/master.h"
#include "net/http_client.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using nlohmann::json;

// One pool's settings, as a master configuration resolves them.
events::ResourcePoolConfig Pool(const std::string& name, events::SchedulerType type,
                                bool preemption = false,
                                events::FittingPolicy fitting = events::FITTING_POLICY_BEST,
                                const std::string& description = "", int aux_per_agent = 100) {
  events::ResourcePoolConfig pool;
  pool.set_pool_name(name);
  pool.set_description(description);
  pool.mutable_scheduler()->set_type(type);
  pool.mutable_scheduler()->set_fitting_policy(fitting);
  pool.mutable_scheduler()->set_preemption(preemption);
  pool.mutable_scheduler()->set_default_priority(42);
  pool.set_max_aux_containers_per_agent(aux_per_agent);
  return pool;
}

events::ResourcePoolsConfigured Pools(const std::vector<events::ResourcePoolConfig>& pools,
                                      const std::string& compute, const std::string& aux) {
  events::ResourcePoolsConfigured config;
  for (const auto& pool : pools) *config.add_pools() = pool;
  config.set_default_compute_pool(compute);
  config.set_default_aux_pool(aux);
  config.set_source("api_test");
  config.set_preemption_grace_seconds(30);
  return config;
}

// One pool "default" under the priority scheduler: the queue is ordered by priority.
events::ResourcePoolsConfigured PriorityPool() {
  return Pools({Pool("default", events::SCHEDULER_TYPE_PRIORITY)}, "default", "default");
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override { StartMaster(); }

  // Starts a master on `data` (a fresh directory unless a test restarts on the same one), with
  // `pools` as its resource pools when given.
  void StartMaster(std::optional<events::ResourcePoolsConfigured> pools = std::nullopt,
                   const std::string& data = "data") {
    client_.reset();
    master_.reset();
    MasterConfig config;
    config.port = 0;
    config.data_dir = dir_.Sub(data);
    config.log.data_dir = config.data_dir;
    config.max_request_body_bytes = 64 * 1024;
    // The master records its pools (ResourcePoolsConfigured) as it starts.
    if (pools) config.pools = *pools;
    auto master = Master::Start(config);
    ASSERT_TRUE(master.ok()) << master.status().ToString();
    master_ = std::move(*master);
    client_ = std::make_unique<http::Client>("127.0.0.1", master_->port());
  }

  http::ClientResponse Call(const std::string& method, const std::string& target,
                            const std::string& body = "",
                            std::map<std::string, std::string> headers = {}) {
    if (!token_.empty() && !headers.count("Authorization")) {
      headers["Authorization"] = "Bearer " + token_;
    }
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

  // Later calls act as `user` (Determined's built-ins have blank passwords).
  void LoginAs(const std::string& user) {
    token_.clear();
    json login = CallJson("POST", "/api/v1/auth/login",
                          json{{"username", user}, {"password", ""}, {"isHashed", true}}.dump());
    token_ = login["token"];
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

  // A command queued whatever the pool's capacity.
  std::string SubmitForced(const json& config) {
    auto reply =
        CallJson("POST", "/api/v1/commands", json{{"config", config}, {"force", true}}.dump());
    return reply["command"]["id"].get<std::string>();
  }

  json RegisterAgent(const std::string& id, int slots, const std::string& incarnation,
                     const std::string& pool = "") {
    json body = {{"incarnation", incarnation}, {"slots", slots}, {"hostname", "h"}};
    if (!pool.empty()) body["resourcePool"] = pool;
    return CallJson("POST", "/api/v1/agents/" + id + "/register", body.dump());
  }

  // An agent whose slots count as the pool's capacity but take no work: what is submitted
  // stays queued.
  void RegisterDisabledAgent(const std::string& id, int slots) {
    RegisterAgent(id, slots, "inc-" + id);
    CallJson("POST", "/api/v1/agents/" + id + "/disable");
  }

  std::vector<std::string> QueueOrder(const std::string& query = "") {
    json queue = CallJson("GET", "/api/v1/job-queues-v2" + query);
    std::vector<std::string> ids;
    for (const auto& job : queue["jobs"]) ids.push_back(job["full"]["jobId"]);
    return ids;
  }

  json Job(const std::string& job_id) {
    json queue = CallJson("GET", "/api/v1/job-queues-v2");
    for (const auto& job : queue["jobs"]) {
      if (job["full"]["jobId"] == job_id) return job["full"];
    }
    ADD_FAILURE() << "job " << job_id << " is not in the queue: " << queue.dump();
    return json::object();
  }

  std::vector<json> EventsOfType(const std::string& key) {
    std::vector<json> found;
    for (const auto& event : Events()) {
      if (event.contains(key)) found.push_back(event);
    }
    return found;
  }

  testing::TempDir dir_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<http::Client> client_;
  std::string token_;
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
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"]},"force":1})", 400,
       "force must be a boolean"},
      {"POST", "/api/v1/commands",
       R"({"config":{"entrypoint":["a"],"resources":{"max_slots":-1}}})", 400,
       "config.resources.max_slots must not be negative"},
      {"POST", "/api/v1/job-queues", R"({"updates":[{"jobId":"nope","priority":5}]})", 404,
       "job nope not found"},
      {"POST", "/api/v1/commands/nope/set_priority", R"({"priority":5})", 404,
       "command nope not found"},
      {"POST", "/api/v1/shells", "{}", 501, "shells"},
      {"POST", "/api/v1/commands", R"({"config":{"entrypoint":["a"],"bind_mounts":[]}})", 501,
       "config.bind_mounts is not supported"},
      {"POST", "/api/v1/commands",
       "{\"config\":{\"entrypoint\":[\"" + std::string(70000, 'a') + "\"]}}", 413, "too large"},
      {"POST", "/api/v1/commands/nope/kill", "", 404, "task nope not found"},
      {"GET", "/api/v1/tasks/nope", "", 404, "task nope not found"},
      {"GET", "/api/v1/tasks/nope/logs", "", 404, "not found"},
      {"GET", "/api/v1/nothing-here", "", 404, "no route"},
      {"DELETE", "/api/v1/commands", "", 405, "not allowed"},
      {"POST", "/api/v1/experiments", "{}", 400, "config is required"},
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
      {"POST", "/api/v1/models", "{}", 501, "model registry"},
      {"POST", "/api/v1/experiments/1/archive", "", 501, "archive is not supported"},
      {"DELETE", "/api/v1/experiments/1", "", 501, "deleting an experiment"},
      {"GET", "/api/v1/trials/1/metrics", "", 501, "is not supported"},
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
  StartMaster(PriorityPool(), "priority");
  RegisterDisabledAgent("a1", 4);
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
  const json& job = queue["jobs"][0]["full"];
  EXPECT_EQ(job["priority"], 5);
  EXPECT_EQ(job["weight"], 1.0);
  EXPECT_EQ(job["type"], "TYPE_COMMAND");
  EXPECT_EQ(job["entityId"], high) << "a command is its own job";
  EXPECT_EQ(job["isPreemptible"], false) << "only trials are preemptible";
  EXPECT_EQ(job["requestedSlots"], 1);
  EXPECT_EQ(job["allocatedSlots"], 0);
  EXPECT_EQ(job["username"], "determined");
  EXPECT_EQ(job["resourcePool"], "default");
  json page = CallJson("GET", "/api/v1/job-queues-v2?limit=1&offset=1");
  ASSERT_EQ(page["jobs"].size(), 1u);
  EXPECT_EQ(page["jobs"][0]["full"]["jobId"], mid);
  EXPECT_EQ(QueueOrder("?orderBy=ORDER_BY_DESC"), (std::vector<std::string>{low, mid, high}));
  json pools = CallJson("GET", "/api/v1/resource-pools");
  EXPECT_EQ(pools["resourcePools"][0]["defaultComputePool"], true);
  EXPECT_EQ(pools["resourcePools"][0]["schedulerType"], "SCHEDULER_TYPE_PRIORITY")
      << "det job list shows a Priority column for it";
  EXPECT_EQ(pools["resourcePools"][0].size(), 33u) << "Determined's 30 required keys and more";
}

// The seeds have a job queue under fair share too: real positions, not Determined's -1.
TEST_F(ApiTest, AFairSharePoolsQueueIsInSubmissionOrderWithRealPositions) {
  RegisterDisabledAgent("a1", 4);
  std::string first = Submit({{"entrypoint", {"true"}}, {"resources", {{"priority", 60}}}});
  std::string second = Submit({{"entrypoint", {"true"}}, {"resources", {{"priority", 5}}}});
  json queue = CallJson("GET", "/api/v1/job-queues-v2");
  ASSERT_EQ(queue["jobs"].size(), 2u);
  EXPECT_EQ(queue["jobs"][0]["full"]["jobId"], first);
  EXPECT_EQ(queue["jobs"][1]["full"]["jobId"], second);
  EXPECT_EQ(queue["jobs"][0]["full"]["summary"]["jobsAhead"], 0);
  EXPECT_EQ(queue["jobs"][1]["full"]["summary"]["jobsAhead"], 1);
  json pools = CallJson("GET", "/api/v1/resource-pools");
  EXPECT_EQ(pools["resourcePools"][0]["schedulerType"], "SCHEDULER_TYPE_FAIR_SHARE");
}

TEST_F(ApiTest, AQueueUpdateChangesThePriorityAndIsRecordedWithItsActor) {
  StartMaster(PriorityPool(), "priority");
  RegisterDisabledAgent("a1", 4);
  LoginAs("admin");
  std::string a = Submit({{"entrypoint", {"true"}}});
  std::string b = Submit({{"entrypoint", {"true"}}});
  std::string c = Submit({{"entrypoint", {"true"}}});
  ASSERT_EQ(QueueOrder(), (std::vector<std::string>{a, b, c}));
  // Exactly what `det job update <id> --priority 5` sends.
  auto response =
      Call("POST", "/api/v1/job-queues",
           json{{"updates",
                 {{{"jobId", c}, {"priority", 5}, {"resourcePool", nullptr}, {"weight", nullptr}}}}}
               .dump());
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(json::parse(response.body), json::object());
  ASSERT_TRUE(response.headers.count("cairn-offset"));
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{c, a, b}));
  EXPECT_EQ(Job(c)["priority"], 5);
  auto changes = EventsOfType("jobQueueChanged");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0]["actor"], "user:admin");
  EXPECT_EQ(changes[0]["jobQueueChanged"]["jobId"], c);
  EXPECT_EQ(changes[0]["jobQueueChanged"]["priority"], 5);
  EXPECT_EQ(changes[0]["offset"], response.headers["cairn-offset"]);
  // The task follows its job.
  json task = CallJson("GET", "/api/v1/tasks/" + c);
  EXPECT_EQ(task["task"]["cairn"]["priority"], 5);
}

TEST_F(ApiTest, AheadOfAndBehindOfMoveAJobInTheQueue) {
  StartMaster(PriorityPool(), "priority");
  RegisterDisabledAgent("a1", 4);
  std::string a = Submit({{"entrypoint", {"true"}}});
  std::string b = Submit({{"entrypoint", {"true"}}});
  std::string c = Submit({{"entrypoint", {"true"}}});
  auto update = [&](const json& one) {
    CallJson("POST", "/api/v1/job-queues", json{{"updates", {one}}}.dump());
  };
  update({{"jobId", c}, {"aheadOf", a}});
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{c, a, b}));
  update({{"jobId", a}, {"behindOf", b}});
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{c, b, a}));
  // Moving next to a job of another priority takes that job's priority.
  std::string urgent = Submit({{"entrypoint", {"true"}}, {"resources", {{"priority", 10}}}});
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{urgent, c, b, a}));
  update({{"jobId", a}, {"aheadOf", urgent}});
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{a, urgent, c, b}));
  EXPECT_EQ(Job(a)["priority"], 10);
  json queue = CallJson("GET", "/api/v1/job-queues-v2");
  for (size_t i = 0; i < queue["jobs"].size(); ++i) {
    EXPECT_EQ(queue["jobs"][i]["full"]["summary"]["jobsAhead"], i);
  }
  // Several updates in one request apply in order.
  CallJson(
      "POST", "/api/v1/job-queues",
      json{{"updates", {{{"jobId", b}, {"priority", 1}}, {{"jobId", c}, {"aheadOf", b}}}}}.dump());
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{c, b, a, urgent}));
}

TEST_F(ApiTest, BadQueueUpdatesAreRefusedWholeAndWriteNothing) {
  StartMaster(PriorityPool(), "priority");
  RegisterDisabledAgent("a1", 4);
  std::string a = Submit({{"entrypoint", {"true"}}});
  std::string b = Submit({{"entrypoint", {"true"}}});
  size_t before = Events().size();
  struct Case {
    std::string body;
    int status;
    std::vector<std::string> message_parts;
  };
  auto one = [](const json& update) { return json{{"updates", {update}}}.dump(); };
  const std::vector<Case> cases = {
      {one({{"jobId", "nope"}, {"priority", 5}}), 404, {"job nope not found"}},
      {one({{"jobId", a}, {"priority", 0}}), 400, {"priority must be between 1 and 99"}},
      {one({{"jobId", a}, {"priority", 100}}), 400, {"priority must be between 1 and 99"}},
      {one({{"jobId", a}, {"aheadOf", b}, {"behindOf", b}}), 400, {"not both"}},
      {one({{"jobId", a}, {"aheadOf", "nope"}}), 404, {"job nope not found"}},
      {one({{"jobId", a}, {"aheadOf", a}}), 400, {"relative to itself"}},
      {one({{"jobId", a}, {"weight", "heavy"}}), 400, {"updates[0].weight must be a number"}},
      {one({{"jobId", a}, {"weight", -1}}), 400, {"weight must be a positive number"}},
      {one({{"jobId", a}, {"resourcePool", "gpu"}}), 400, {"resource pool gpu does not exist"}},
      {one({{"jobId", a}, {"colour", "red"}}), 400, {"unknown field updates[0].colour"}},
      {one({{"priority", 5}}), 400, {"updates[0].jobId is required"}},
      {"{}", 400, {"updates must be a list"}},
      {"{not json", 400, {"malformed JSON"}},
      // A good update beside a bad one: neither is applied, and every error is named.
      {json{{"updates",
             {{{"jobId", a}, {"priority", 7}},
              {{"jobId", b}, {"priority", 0}},
              {{"jobId", "nope"}, {"priority", 3}}}}}
           .dump(),
       400,
       {"encountered the following errors: ", "priority must be between 1 and 99",
        "job nope not found"}},
  };
  for (const auto& c : cases) {
    auto response = Call("POST", "/api/v1/job-queues", c.body);
    EXPECT_EQ(response.status, c.status) << c.body << ": " << response.body;
    json body = json::parse(response.body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << response.body;
    for (const auto& part : c.message_parts) {
      EXPECT_NE(body.value("message", "").find(part), std::string::npos)
          << c.body << ": " << response.body;
    }
  }
  EXPECT_EQ(Events().size(), before) << "a refused update must not append an event";
  EXPECT_EQ(Job(a)["priority"], 42);
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{a, b}));
}

TEST_F(ApiTest, SetPriorityOfACommandIsAQueueUpdate) {
  StartMaster(PriorityPool(), "priority");
  RegisterDisabledAgent("a1", 4);
  std::string a = Submit({{"entrypoint", {"true"}}});
  std::string b = Submit({{"entrypoint", {"true"}}});
  json reply = CallJson("POST", "/api/v1/commands/" + b + "/set_priority",
                        json{{"commandId", b}, {"priority", 3}}.dump());
  EXPECT_EQ(reply["command"]["id"], b);
  EXPECT_EQ(reply["command"]["cairn"]["priority"], 3);
  EXPECT_EQ(QueueOrder(), (std::vector<std::string>{b, a}));
  auto changes = EventsOfType("jobQueueChanged");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0]["actor"], "user:determined");

  size_t before = Events().size();
  EXPECT_EQ(Call("POST", "/api/v1/commands/nope/set_priority", R"({"priority":3})").status, 404);
  auto wrong_type = Call("POST", "/api/v1/notebooks/" + a + "/set_priority", R"({"priority":3})");
  EXPECT_EQ(wrong_type.status, 404) << wrong_type.body;
  EXPECT_NE(wrong_type.body.find("notebook " + a + " not found"), std::string::npos);
  EXPECT_EQ(Call("POST", "/api/v1/commands/" + a + "/set_priority", R"({"priority":0})").status,
            400);
  EXPECT_EQ(Call("POST", "/api/v1/commands/" + a + "/set_priority", "{}").status, 400);
  EXPECT_EQ(Call("POST", "/api/v1/commands/" + a + "/set_priority",
                 json{{"commandId", b}, {"priority", 3}}.dump())
                .status,
            400);
  EXPECT_EQ(Events().size(), before);
}

TEST_F(ApiTest, QueueStatsCountQueuedAndScheduledJobsPerPool) {
  StartMaster(PriorityPool(), "priority");
  RegisterAgent("a1", 1, "inc-1");
  Submit({{"entrypoint", {"sleep", "100"}}});
  Submit({{"entrypoint", {"sleep", "100"}}});
  Submit({{"entrypoint", {"sleep", "100"}}});
  json stats = CallJson("GET", "/api/v1/job-queues/stats");
  ASSERT_EQ(stats["results"].size(), 1u);
  EXPECT_EQ(stats["results"][0]["resourcePool"], "default");
  EXPECT_EQ(stats["results"][0]["stats"]["queuedCount"], 2);
  EXPECT_EQ(stats["results"][0]["stats"]["scheduledCount"], 1);
  json scheduled = CallJson("GET", "/api/v1/job-queues-v2?states=STATE_SCHEDULED");
  ASSERT_EQ(scheduled["jobs"].size(), 1u);
  EXPECT_EQ(scheduled["jobs"][0]["full"]["allocatedSlots"], 1);
  EXPECT_EQ(scheduled["jobs"][0]["full"]["summary"]["jobsAhead"], 0);
}

TEST_F(ApiTest, ResourcePoolsListTheRecordedConfiguration) {
  StartMaster(Pools({Pool("default", events::SCHEDULER_TYPE_PRIORITY, /*preemption=*/true),
                     Pool("aux", events::SCHEDULER_TYPE_FAIR_SHARE, false,
                          events::FITTING_POLICY_WORST, "CPU-only helpers", 5)},
                    "default", "aux"),
              "pools");
  RegisterAgent("a1", 4, "inc-1", "default");
  RegisterAgent("a2", 2, "inc-1", "aux");
  std::string running = Submit({{"entrypoint", {"sleep", "100"}}});
  std::string helper = Submit({{"entrypoint", {"true"}}, {"resources", {{"slots", 0}}}});

  json pools = CallJson("GET", "/api/v1/resource-pools");
  ASSERT_EQ(pools["resourcePools"].size(), 2u);
  const json& compute = pools["resourcePools"][0];
  const json& aux = pools["resourcePools"][1];
  EXPECT_EQ(compute.size(), 33u);
  EXPECT_EQ(aux.size(), 33u);
  EXPECT_EQ(compute["name"], "default");
  EXPECT_EQ(compute["schedulerType"], "SCHEDULER_TYPE_PRIORITY");
  EXPECT_EQ(compute["schedulerFittingPolicy"], "FITTING_POLICY_BEST");
  EXPECT_EQ(compute["preemptible"], true);
  EXPECT_EQ(compute["defaultComputePool"], true);
  EXPECT_EQ(compute["defaultAuxPool"], false);
  EXPECT_EQ(compute["numAgents"], 1);
  EXPECT_EQ(compute["slotsAvailable"], 4);
  EXPECT_EQ(compute["slotsUsed"], 1);
  EXPECT_EQ(compute["details"]["priorityScheduler"]["preemption"], true);
  EXPECT_EQ(aux["name"], "aux");
  EXPECT_EQ(aux["description"], "CPU-only helpers");
  EXPECT_EQ(aux["schedulerType"], "SCHEDULER_TYPE_FAIR_SHARE");
  EXPECT_EQ(aux["schedulerFittingPolicy"], "FITTING_POLICY_WORST");
  EXPECT_EQ(aux["preemptible"], false);
  EXPECT_EQ(aux["defaultAuxPool"], true);
  EXPECT_EQ(aux["slotsAvailable"], 2);
  EXPECT_EQ(aux["auxContainerCapacityPerAgent"], 5);
  EXPECT_EQ(aux["auxContainerCapacity"], 5);
  EXPECT_EQ(aux["auxContainersRunning"], 1) << "the zero-slot command runs there";

  // A command that asks for no slot goes to the default aux pool, and its config says so.
  json command = CallJson("GET", "/api/v1/commands/" + helper);
  EXPECT_EQ(command["command"]["resourcePool"], "aux");
  EXPECT_EQ(command["config"]["resources"]["resource_pool"], "aux");
  EXPECT_EQ(command["config"]["resources"]["slots"], 0);
  EXPECT_EQ(CallJson("GET", "/api/v1/commands/" + running)["command"]["resourcePool"], "default");
}

TEST_F(ApiTest, APendingTaskIsExplainedWithTheSlotsItNeeds) {
  RegisterAgent("a1", 2, "inc-1");
  std::string running = Submit({{"entrypoint", {"sleep", "100"}}, {"resources", {{"slots", 2}}}});
  std::string pending = Submit({{"entrypoint", {"sleep", "100"}}, {"resources", {{"slots", 2}}}});

  json task = CallJson("GET", "/api/v1/tasks/" + pending)["task"];
  EXPECT_EQ(task["cairn"]["state"], "TASK_STATE_QUEUED");
  ASSERT_TRUE(task.contains("latestReason")) << task.dump();
  ASSERT_TRUE(task.contains("explanation")) << task.dump();
  const std::string explanation = task["explanation"];
  EXPECT_NE(explanation.find("needs 2 slot"), std::string::npos) << explanation;
  EXPECT_NE(explanation.find(running), std::string::npos)
      << "the job ahead is named: " << explanation;
  EXPECT_EQ(task["jobsAhead"], 1);
  ASSERT_EQ(task["cairn"]["jobsAhead"].size(), 1u);
  EXPECT_EQ(task["cairn"]["jobsAhead"][0]["jobId"], running);
  EXPECT_EQ(task["cairn"]["jobsAhead"][0]["running"], true);

  json placed = CallJson("GET", "/api/v1/tasks/" + running)["task"];
  EXPECT_NE(placed["latestReason"].get<std::string>().find("a1"), std::string::npos)
      << "the placement's reason: " << placed.dump();
  EXPECT_NE(placed["explanation"].get<std::string>().find("a1"), std::string::npos);
  EXPECT_EQ(placed["jobsAhead"], 0);

  // An ended task carries the reason it ended and no live explanation.
  json killed = CallJson("POST", "/api/v1/commands/" + pending + "/kill");
  json ended = CallJson("GET", "/api/v1/tasks/" + pending)["task"];
  EXPECT_NE(ended["latestReason"].get<std::string>().find("killed"), std::string::npos)
      << ended.dump();
  EXPECT_FALSE(ended.contains("explanation"));
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
  json task = CallJson("GET", "/api/v1/tasks/" + forced)["task"];
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

TEST_F(ApiTest, TheAgentProtocolRunsACommandsWholeStory) {
  json registered = RegisterAgent("a1", 2, "inc-1");
  EXPECT_EQ(registered["placements"]["transport"], "http");
  std::string id = Submit({{"entrypoint", {"echo", "hi"}}});
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
