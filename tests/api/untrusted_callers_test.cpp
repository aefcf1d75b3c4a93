// What an authenticated but careless or hostile caller can still send (issue 16): secrets reach no
// one but their owner, admins and the agents that run the work; an agent's reports and logs count
// only for allocations it holds; a retried submission creates one task.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <regex>

#include "events/sealing.h"
#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

constexpr const char* kMarkedSecret = "planted-secret-1234";  // marked secret: no person sees it
constexpr const char* kOwnersValue = "owner-visible-5678";    // the owner's and admins' only

class UntrustedCallersTest : public ApiTest {
 protected:
  // A session of a new plain user.
  std::string NewUser(const std::string& name) {
    const std::string caller = token_;
    LoginAs("admin");
    CallJson("POST", "/api/v1/users",
             json{{"user", {{"username", name}, {"admin", false}, {"active", true}}},
                  {"password", ""},
                  {"isHashed", true}}
                 .dump());
    LoginAs(name);
    std::string session = token_;
    token_ = caller;
    return session;
  }

  // Calls as `agent_id` with its own credential (base/password.h AgentCredential).
  net::ClientResponse AsAgent(const std::string& agent_id, const std::string& method,
                              const std::string& target, const json& body) {
    return Call(method, target, body.dump(),
                {{"Authorization", "Bearer " + AgentCredential(agent_token_, agent_id)}});
  }

  json SecretEnvironment() {
    return {{"environment_variables",
             {std::string("API_KEY=") + kMarkedSecret, std::string("PLAIN=") + kOwnersValue}},
            {"secret_environment_variables", {"API_KEY"}}};
  }

  // The allocation of `task_id` and the agent it went to, from the event stream.
  std::pair<std::string, std::string> AllocationOf(const std::string& task_id) {
    for (const auto& event : EventsOfType("allocationAssigned")) {
      const json& assigned = event["allocationAssigned"];
      if (assigned["taskId"] == task_id) return {assigned["allocationId"], assigned["agentId"]};
    }
    ADD_FAILURE() << "task " << task_id << " was not placed";
    return {};
  }
};

TEST_F(UntrustedCallersTest, APlantedSecretReachesNoReadRouteOrStreamOfAnotherUser) {
  RegisterAgent("a1", 1, "i1");
  // "determined" owns a command, an experiment and a template, each with the secrets.
  const std::string task_id =
      Submit({{"entrypoint", {"sleep", "100"}}, {"environment", SecretEnvironment()}});
  json experiment = [&] {
    // base64 of "from cairn_harness import Trial\nclass T(Trial):\n  pass\n"
    const std::string model =
        "ZnJvbSBjYWlybl9oYXJuZXNzIGltcG9ydCBUcmlhbApjbGFzcyBUKFRyaWFsKToKICBwYXNzCg==";
    const std::string config =
        "entrypoint: model_def:T\nhyperparameters:\n  lr: 0.1\n"
        "searcher:\n  name: single\n  metric: loss\n  max_length: {batches: 100}\n"
        "environment:\n  environment_variables:\n    - API_KEY=" +
        std::string(kMarkedSecret) + "\n    - PLAIN=" + kOwnersValue +
        "\n  secret_environment_variables: [API_KEY]\n";
    return CallJson(
        "POST", "/api/v1/experiments",
        json{{"activate", false},
             {"config", config},
             {"modelDefinition",
              json::array(
                  {{{"path", "model_def.py"}, {"type", 48}, {"content", model}, {"mode", 33188}}})}}
            .dump());
  }();
  const std::string experiment_id = std::to_string(experiment["experiment"]["id"].get<int64_t>());
  CallJson(
      "POST", "/api/v1/templates/with-secrets",
      json{{"name", "with-secrets"}, {"config", {{"environment", SecretEnvironment()}}}}.dump());

  // Every read route, as another user, with the owner's ids in its path.
  const std::string owner_token = token_;
  token_ = NewUser("mallory");
  std::map<std::string, std::string> ids = {{"/commands/", task_id},
                                            {"/tasks/", task_id},
                                            {"/experiments/", experiment_id},
                                            {"/templates/", "with-secrets"},
                                            {"/trials/", "1"},
                                            {"/agents/", "a1"},
                                            {"/users/", "1"},
                                            {"/allocations/", task_id + ".1"}};
  int routes = 0;
  for (const auto& route : api::RouteTable()) {
    if (std::string(route.method) != "GET" || route.access == api::Access::kAgent ||
        route.access == api::Access::kAllocation) {
      continue;
    }
    std::string target = route.pattern;
    for (const auto& [prefix, id] : ids) {
      size_t at = target.find(prefix + "{");
      if (at == std::string::npos) continue;
      size_t close = target.find('}', at);
      target.replace(at + prefix.size(), close - at - prefix.size() + 1, id);
    }
    target = std::regex_replace(target, std::regex(R"(\{[^}]*\})"), "1");
    if (target == "/api/v1/events") target += "?from=0";
    auto response = Call("GET", target);
    ++routes;
    EXPECT_EQ(response.body.find(kMarkedSecret), std::string::npos) << target;
    EXPECT_EQ(response.body.find(kOwnersValue), std::string::npos) << target;
  }
  EXPECT_GT(routes, 30);

  // The owner sees the values that are not marked secret; the marked one reaches no person.
  token_ = owner_token;
  for (const std::string& target :
       {"/api/v1/commands/" + task_id, "/api/v1/experiments/" + experiment_id}) {
    auto response = Call("GET", target);
    EXPECT_NE(response.body.find(kOwnersValue), std::string::npos) << target;
    EXPECT_EQ(response.body.find(kMarkedSecret), std::string::npos) << target;
  }
  // The agent that runs the command gets everything it needs: the marked value sealed, as the
  // log keeps it, which it opens with the agent token.
  int placements = 0;
  for (const auto& event : EventsOfType("allocationAssigned")) {
    ++placements;
    events::TaskSpec spec;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                    event["allocationAssigned"]["spec"].dump(), &spec, {})
                    .ok());
    EXPECT_EQ(spec.SerializeAsString().find(kMarkedSecret), std::string::npos);
    ASSERT_TRUE(UnsealSpec(spec, SecretSealer(agent_token_)).ok());
    EXPECT_NE(spec.SerializeAsString().find(kMarkedSecret), std::string::npos);
  }
  EXPECT_GT(placements, 0);
}

TEST_F(UntrustedCallersTest, ForgedExitsLogsAndRegistrationsAreRefused) {
  ASSERT_EQ(
      AsAgent("a1", "POST", "/api/v1/agents/a1/register", {{"incarnation", "i1"}, {"slots", 1}})
          .status,
      200);
  ASSERT_EQ(
      AsAgent("a2", "POST", "/api/v1/agents/a2/register", {{"incarnation", "i1"}, {"slots", 1}})
          .status,
      200);
  const std::string task_id = Submit({{"entrypoint", {"sleep", "100"}}});
  auto [allocation_id, holder] = AllocationOf(task_id);
  ASSERT_FALSE(allocation_id.empty());
  const std::string other = holder == "a1" ? "a2" : "a1";
  const std::string exited = "/api/v1/allocations/" + allocation_id + "/exited";
  auto exit_report = [&](const std::string& agent_id) {
    return json{{"taskId", task_id}, {"agentId", agent_id}, {"exitCode", 0}};
  };
  const json state_before = CallJson("GET", "/api/v1/commands/" + task_id)["command"]["state"];

  // Another agent cannot end it, as itself or by naming the holder.
  auto as_other = AsAgent(other, "POST", exited, exit_report(other));
  EXPECT_EQ(as_other.status, 403) << as_other.body;
  auto impersonating = AsAgent(other, "POST", exited, exit_report(holder));
  EXPECT_EQ(impersonating.status, 403) << impersonating.body;
  // Nor start it, write its logs, or re-register the holder.
  EXPECT_EQ(AsAgent(other, "POST", "/api/v1/allocations/" + allocation_id + "/started",
                    {{"taskId", task_id}, {"agentId", other}, {"pid", 1}})
                .status,
            403);
  json log_line = {{"taskId", task_id},
                   {"allocationId", allocation_id},
                   {"agentId", other},
                   {"log", "forged line\n"},
                   {"seq", 0}};
  auto forged_log = AsAgent(other, "POST", "/api/v1/task/logs", {{"logs", {log_line}}});
  EXPECT_EQ(forged_log.status, 403) << forged_log.body;
  EXPECT_EQ(AsAgent(other, "POST", "/api/v1/agents/" + holder + "/register",
                    {{"incarnation", "i2"}, {"slots", 1}})
                .status,
            403);
  EXPECT_EQ(CallJson("GET", "/api/v1/commands/" + task_id)["command"]["state"], state_before)
      << "a forged report changed the task";
  auto logs = Call("GET", "/api/v1/tasks/" + task_id + "/logs");
  EXPECT_EQ(logs.body.find("forged line"), std::string::npos);

  // The holder's own reports count.
  log_line["agentId"] = holder;
  log_line["log"] = "honest line\n";
  EXPECT_EQ(AsAgent(holder, "POST", "/api/v1/task/logs", {{"logs", {log_line}}}).status, 200);
  auto honest_exit = AsAgent(holder, "POST", exited, exit_report(holder));
  ASSERT_EQ(honest_exit.status, 200) << honest_exit.body;
  EXPECT_EQ(CallJson("GET", "/api/v1/commands/" + task_id + "?minOffset=" +
                                honest_exit.headers["cairn-offset"])["command"]["state"],
            "STATE_TERMINATED");

  // A new process of the holder, with its own credential, is an event that says why.
  ASSERT_EQ(AsAgent(holder, "POST", "/api/v1/agents/" + holder + "/register",
                    {{"incarnation", "i2"}, {"slots", 1}})
                .status,
            200);
  auto registrations = EventsOfType("agentRegistered");
  ASSERT_FALSE(registrations.empty());
  const std::string reason = registrations.back()["agentRegistered"].value("reason", "");
  EXPECT_NE(reason.find("replaced incarnation i1"), std::string::npos) << reason;
}

TEST_F(UntrustedCallersTest, AnIdempotencyKeyStandsForOneRequest) {
  const std::string body = json{{"config", {{"entrypoint", {"true"}}}}, {"force", true}}.dump();
  auto first = Call("POST", "/api/v1/commands", body, {{"Idempotency-Key", "submit-1"}});
  auto again = Call("POST", "/api/v1/commands", body, {{"Idempotency-Key", "submit-1"}});
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(first.body)["command"]["id"], json::parse(again.body)["command"]["id"]);
  EXPECT_EQ(EventsOfType("taskSubmitted").size(), 1u);

  const std::string other = json{{"config", {{"entrypoint", {"false"}}}}, {"force", true}}.dump();
  auto conflict = Call("POST", "/api/v1/commands", other, {{"Idempotency-Key", "submit-1"}});
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  EXPECT_NE(conflict.body.find("different request"), std::string::npos) << conflict.body;
  EXPECT_EQ(EventsOfType("taskSubmitted").size(), 1u);
}

TEST_F(UntrustedCallersTest, InvalidUtf8InAPathIsTheCallersError) {
  for (const char* target :
       {"/api/v1/agents/%ff%fe", "/api/v1/commands/%c0%af", "/api/v1/tasks?state=%ed%a0%80"}) {
    auto response = Call("GET", target);
    EXPECT_EQ(response.status, 400) << target << ": " << response.body;
    EXPECT_NE(response.body.find("not valid UTF-8"), std::string::npos) << response.body;
  }
  auto registration =
      Call("POST", "/api/v1/agents/%ff/register", json{{"incarnation", "i1"}, {"slots", 1}}.dump());
  EXPECT_EQ(registration.status, 400) << registration.body;
  // Well-formed multi-byte text is fine: a 404, not a refusal.
  EXPECT_EQ(Call("GET", "/api/v1/agents/caf%c3%a9").status, 404);
}

}  // namespace
}  // namespace cairn::api_testing
