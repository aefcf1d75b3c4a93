// The job queue and the resource pools through the REST API: order, updates with their actor,
// moves, set_priority, stats, the recorded pool configuration and a pending task's explanation.
#include <gtest/gtest.h>

#include "tests/api/api_fixture.h"

namespace cairn {
namespace {

using nlohmann::json;
using namespace api_testing;

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
      {one({{"jobId", a}, {"colour", "red"}}), 400, {"updates[0].colour: unknown field"}},
      {one({{"priority", 5}}), 400, {"updates[0].jobId: required"}},
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

  json plain = CallJson("GET", "/api/v1/tasks/" + pending)["task"];
  EXPECT_TRUE(plain.contains("latestReason")) << plain.dump();
  EXPECT_FALSE(plain.contains("explanation")) << "the writer's state is read only on request";
  json task = CallJson("GET", "/api/v1/tasks/" + pending + "?explain=true")["task"];
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

  json placed = CallJson("GET", "/api/v1/tasks/" + running + "?explain=true")["task"];
  EXPECT_NE(placed["latestReason"].get<std::string>().find("a1"), std::string::npos)
      << "the placement's reason: " << placed.dump();
  EXPECT_NE(placed["explanation"].get<std::string>().find("a1"), std::string::npos);
  EXPECT_EQ(placed["jobsAhead"], 0);

  // An ended task carries the reason it ended and no live explanation.
  json killed = CallJson("POST", "/api/v1/commands/" + pending + "/kill");
  json ended = CallJson("GET", "/api/v1/tasks/" + pending + "?explain=true")["task"];
  EXPECT_NE(ended["latestReason"].get<std::string>().find("killed"), std::string::npos)
      << ended.dump();
  EXPECT_FALSE(ended.contains("explanation"));
}

// The web UI's queue asks for a page of jobs with their explanations in one request.
TEST_F(ApiTest, AQueuePageCarriesEachJobsExplanationOnRequest) {
  RegisterAgent("a1", 2, "inc-1");
  std::string running = Submit({{"entrypoint", {"sleep", "100"}}, {"resources", {{"slots", 2}}}});
  std::string pending = Submit({{"entrypoint", {"sleep", "100"}}, {"resources", {{"slots", 2}}}});

  json plain = CallJson("GET", "/api/v1/job-queues-v2?limit=10");
  ASSERT_EQ(plain["jobs"].size(), 2u) << plain.dump();
  EXPECT_FALSE(plain["jobs"][1]["full"]["cairn"].contains("explanation"))
      << "the writer's state is read only on request";
  json page = CallJson("GET", "/api/v1/job-queues-v2?limit=10&explain=true");
  ASSERT_EQ(page["jobs"].size(), 2u) << page.dump();
  const json& first = page["jobs"][0]["full"];
  const json& second = page["jobs"][1]["full"];
  EXPECT_EQ(first["jobId"], running);
  EXPECT_NE(first["cairn"]["explanation"].get<std::string>().find("a1"), std::string::npos)
      << first.dump();
  EXPECT_EQ(second["jobId"], pending);
  // The same words as the task's own explanation.
  json task = CallJson("GET", "/api/v1/tasks/" + pending + "?explain=true")["task"];
  EXPECT_EQ(second["cairn"]["explanation"], task["explanation"]);
  EXPECT_NE(second["cairn"]["explanation"].get<std::string>().find("needs 2 slot"),
            std::string::npos);

  // A page, never the whole queue, and only true or false.
  CallJson("GET", "/api/v1/job-queues-v2?explain=true", "", 400);
  CallJson("GET", "/api/v1/job-queues-v2?limit=201&explain=true", "", 400);
  CallJson("GET", "/api/v1/job-queues-v2?limit=10&explain=yes", "", 400);
}

}  // namespace
}  // namespace cairn
