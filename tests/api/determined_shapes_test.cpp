// The `det` CLI's contract, endpoint by endpoint, as shared/reference/determined-rest.md records
// it: the request sequence of each command and the keys its generated client requires (a
// missing one is a KeyError in the CLI). The real CLI cannot be installed here, so this test
// replays its calls and checks the answers' shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "master/master.h"
#include "net/http_client.h"
#include "tests/api/api_fixture.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using api_testing::CreateExperimentBody;
using nlohmann::json;

class DeterminedShapesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MasterConfig config;
    config.port = 0;
    config.data_dir = dir_.Sub("data");
    config.log.data_dir = config.data_dir;
    config.security.authz = authz_;
    auto master = Master::Start(config);
    ASSERT_TRUE(master.ok()) << master.status().ToString();
    master_ = std::move(*master);
    client_ = std::make_unique<net::Client>("127.0.0.1", master_->port());
    agent_token_ = api_testing::AgentTokenOf(config.data_dir);
    LogInAsDetermined();
  }

  // Just the session's bearer header.
  std::map<std::string, std::string> Session() const {
    return {{"Authorization", "Bearer " + token_}};
  }

  // What the CLI does before its first call: log in as Determined's default user.
  void LogInAsDetermined() {
    json login = Call("POST", "/api/v1/auth/login",
                      R"({"username":"determined","password":"","isHashed":true})");
    token_ = login["token"];
  }

  // The CLI sends JSON bodies without a Content-Type, with a bearer token once logged in, and
  // treats anything but 200 as failure.
  json Call(const std::string& method, const std::string& target, const std::string& body = "") {
    std::map<std::string, std::string> headers = {{"Accept", "*/*"},
                                                  {"User-Agent", "python-requests/2.28.1"}};
    const std::string token = api_testing::TokenForRoute(method, target, token_, agent_token_);
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    auto response = client_->Request(method, target, body, headers);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok()) return json();
    EXPECT_EQ(response->status, 200) << method << " " << target << ": " << response->body;
    json parsed = json::parse(response->body, nullptr, false);
    EXPECT_TRUE(parsed.is_object()) << response->body;
    return parsed;
  }

  static void ExpectKeys(const json& object, const std::vector<std::string>& keys,
                         const std::string& what) {
    ASSERT_TRUE(object.is_object()) << what << ": " << object.dump();
    for (const auto& key : keys) {
      EXPECT_TRUE(object.contains(key) && !object[key].is_null())
          << what << " lacks required key '" << key << "': " << object.dump();
    }
  }

  testing::TempDir dir_;
  std::unique_ptr<Master> master_;
  std::unique_ptr<net::Client> client_;
  std::string token_;
  std::string agent_token_;
  events::AuthzType authz_ = events::AUTHZ_TYPE_UNSPECIFIED;  // the master's own default
};

// Roles apply (security.authz.type: rbac).
class DeterminedRbacShapesTest : public DeterminedShapesTest {
 protected:
  void SetUp() override {
    authz_ = events::AUTHZ_TYPE_RBAC;
    DeterminedShapesTest::SetUp();
  }
};

TEST_F(DeterminedShapesTest, LoginWhoamiAndLogout) {
  json info = Call("GET", "/info");
  ExpectKeys(info, {"version"}, "/info");
  json login = Call("POST", "/api/v1/auth/login",
                    R"({"username":"determined","password":"","isHashed":true})");
  ExpectKeys(login, {"token", "user"}, "login");
  ExpectKeys(login["user"], {"username", "admin", "active", "id"}, "login.user");
  token_ = login["token"];
  json me = Call("GET", "/api/v1/me");
  ExpectKeys(me["user"], {"username", "admin", "active", "id"}, "me.user");
  Call("POST", "/api/v1/auth/logout");
  // The session ended: its token is refused (the CLI forgets it and logs in again).
  auto refused = client_->Request("GET", "/api/v1/me", "", {{"Authorization", "Bearer " + token_}});
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 401) << refused->body;
  token_.clear();
  json master = Call("GET", "/api/v1/master");
  ExpectKeys(
      master,
      {"version", "masterId", "clusterId", "clusterName", "strictJobQueueControl", "hasCustomLogo"},
      "master");
}

TEST_F(DeterminedShapesTest, CmdRunListAndTheirTasks) {
  // The cluster has an agent (a command no agent could ever run is refused at submission).
  Call("POST", "/api/v1/agents/a1/register", R"({"incarnation":"i","slots":1})");
  Call("GET", "/api/v1/me");
  json launched = Call("POST", "/api/v1/commands", R"({"config":{"entrypoint":["echo","hi"]}})");
  ExpectKeys(launched, {"command", "config"}, "launch");
  const std::vector<std::string> ntsc = {"id",       "description",  "state", "startTime",
                                         "username", "resourcePool", "jobId", "workspaceId"};
  ExpectKeys(launched["command"], ntsc, "v1Command");
  std::string state = launched["command"]["state"];
  EXPECT_EQ(state.rfind("STATE_", 0), 0u) << state;
  std::string id = launched["command"]["id"];

  json commands = Call("GET", "/api/v1/commands?users=determined");
  ASSERT_EQ(commands["commands"].size(), 1u);
  ExpectKeys(commands["commands"][0],
             {"id", "username", "description", "state", "resourcePool", "workspaceId"},
             "cmd list entry");
  json workspaces = Call("GET", "/api/v1/workspaces");
  ExpectKeys(workspaces["workspaces"][0],
             {"id", "name", "archived", "errorMessage", "immutable", "numExperiments",
              "numProjects", "pinned", "state", "userId", "username"},
             "workspace");
  json task = Call("GET", "/api/v1/tasks/" + id);
  ExpectKeys(task["task"], {"taskId", "taskType", "startTime", "allocations"}, "v1Task");
  EXPECT_FALSE(task["task"].contains("taskState")) << "only GENERIC_TASK_STATE_* may go there";
  json summaries = Call("GET", "/api/v1/tasks");
  EXPECT_TRUE(summaries["allocationIdToSummary"].is_object());
}

TEST_F(DeterminedShapesTest, JobListNeedsPoolsAndPaginatedJobs) {
  Call("POST", "/api/v1/agents/a1/register", R"({"incarnation":"i","slots":1})");
  Call("POST", "/api/v1/commands", R"({"config":{"entrypoint":["true"]}})");
  json pools = Call("GET", "/api/v1/resource-pools");
  ASSERT_FALSE(pools["resourcePools"].empty());
  bool has_default_compute = false;
  for (const auto& pool : pools["resourcePools"]) {
    ExpectKeys(pool,
               {"name",
                "description",
                "type",
                "defaultComputePool",
                "defaultAuxPool",
                "preemptible",
                "numAgents",
                "slotsAvailable",
                "slotsUsed",
                "auxContainerCapacity",
                "auxContainersRunning",
                "auxContainerCapacityPerAgent",
                "minAgents",
                "maxAgents",
                "slotType",
                "schedulerType",
                "schedulerFittingPolicy",
                "location",
                "imageId",
                "instanceType",
                "masterUrl",
                "masterCertName",
                "startupScript",
                "containerStartupScript",
                "agentDockerNetwork",
                "agentDockerRuntime",
                "agentDockerImage",
                "agentFluentImage",
                "maxIdleAgentPeriod",
                "maxAgentStartingPeriod",
                "details",
                "resourceManagerMetadata",
                "clusterName"},
               "v1ResourcePool");
    has_default_compute |= pool["defaultComputePool"].get<bool>();
  }
  EXPECT_TRUE(has_default_compute) << "det job list dies with 'Pool None not found' otherwise";
  json jobs = Call("GET", "/api/v1/job-queues-v2?limit=100&offset=0&orderBy=ORDER_BY_ASC");
  ExpectKeys(jobs["pagination"], {"endIndex", "total"}, "pagination");
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  ExpectKeys(jobs["jobs"][0]["full"],
             {"jobId", "type", "name", "entityId", "submissionTime", "username", "resourcePool",
              "isPreemptible", "requestedSlots", "allocatedSlots", "workspaceId"},
             "v1Job");
  std::string summary_state = jobs["jobs"][0]["full"]["summary"]["state"];
  EXPECT_TRUE(summary_state == "STATE_QUEUED" || summary_state == "STATE_SCHEDULED" ||
              summary_state == "STATE_SCHEDULED_BACKFILLED")
      << summary_state;
  EXPECT_TRUE(jobs["jobs"][0]["full"]["summary"]["jobsAhead"].is_number_integer());
}

TEST_F(DeterminedShapesTest, JobUpdateAnswersAnEmptyObject) {
  Call("POST", "/api/v1/agents/a1/register", R"({"incarnation":"i","slots":1})");
  json launched = Call("POST", "/api/v1/commands", R"({"config":{"entrypoint":["true"]}})");
  std::string job_id = launched["command"]["jobId"];
  // `det job update <jobId> --priority 5`, byte for byte.
  json updated = Call("POST", "/api/v1/job-queues",
                      R"({"updates":[{"jobId":")" + job_id +
                          R"(","priority":5,"resourcePool":null,"weight":null}]})");
  EXPECT_EQ(updated, json::object());
  json jobs = Call("GET", "/api/v1/job-queues-v2?limit=100&offset=0&orderBy=ORDER_BY_ASC");
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  EXPECT_EQ(jobs["jobs"][0]["full"]["priority"], 5);
}

TEST_F(DeterminedShapesTest, AgentAndSlotList) {
  json registered = Call("POST", "/api/v1/agents/a1/register", R"({"incarnation":"i","slots":2})");
  // A registration answers once durable; this read waits for the projection to show it.
  json agents = Call("GET", "/api/v1/agents?minOffset=" + registered["offset"].get<std::string>());
  ASSERT_EQ(agents["agents"].size(), 1u);
  const json& agent = agents["agents"][0];
  ExpectKeys(agent, {"id", "slotStats"}, "v1Agent");
  ExpectKeys(agent["slotStats"], {"typeStats", "brandStats"}, "slotStats");
  for (const auto& [type, stats] : agent["slotStats"]["typeStats"].items()) {
    EXPECT_TRUE(type == "TYPE_CPU" || type == "TYPE_CUDA" || type == "TYPE_ROCM") << type;
    ExpectKeys(stats, {"disabled", "draining", "total"}, "typeStats");
  }
  for (const auto& [path, slot] : agent["slots"].items()) {
    EXPECT_EQ(path.rfind("/agents/a1/slots/", 0), 0u) << path;
    EXPECT_EQ(slot["device"]["type"], "TYPE_CPU");
  }
}

// det slot disable/enable as the CLI sends them (disable with an empty request object), by an
// admin; each answers the slot (v1Slot).
TEST_F(DeterminedShapesTest, SlotDisableAndEnable) {
  Call("POST", "/api/v1/agents/a1/register", R"({"incarnation":"i","slots":2})");
  auto refused = client_->Request("POST", "/api/v1/agents/a1/slots/0/disable", "{}", Session());
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 403) << "not for a non-admin: " << refused->body;
  token_ = Call("POST", "/api/v1/auth/login",
                R"({"username":"admin","password":"","isHashed":true})")["token"];
  json disabled = Call("POST", "/api/v1/agents/a1/slots/0/disable", "{}");
  ExpectKeys(disabled["slot"], {"id", "device", "enabled"}, "v1Slot");
  EXPECT_EQ(disabled["slot"]["id"], "0");
  EXPECT_EQ(disabled["slot"]["enabled"], false);
  json agent = Call("GET", "/api/v1/agents/a1")["agent"];
  EXPECT_EQ(agent["slots"]["/agents/a1/slots/0"]["enabled"], false);
  EXPECT_EQ(agent["slotStats"]["typeStats"]["TYPE_CPU"]["disabled"], 1);
  EXPECT_EQ(Call("POST", "/api/v1/agents/a1/slots/0/enable")["slot"]["enabled"], true);
  for (const std::string bad :
       {"/api/v1/agents/a1/slots/2/disable", "/api/v1/agents/a1/slots/x/disable"}) {
    auto answer = client_->Request("POST", bad, "{}", Session());
    ASSERT_TRUE(answer.ok());
    EXPECT_EQ(answer->status, 400) << bad << ": " << answer->body;
  }
  auto missing = client_->Request("POST", "/api/v1/agents/nobody/slots/0/enable", "", Session());
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404) << missing->body;
}

// det config-policies set/describe/delete as the CLI sends them: the document as text in, the
// policies as an object out; a non-admin may read the global ones but not set them.
TEST_F(DeterminedShapesTest, ConfigPoliciesSetDescribeAndDelete) {
  EXPECT_EQ(Call("GET", "/api/v1/config-policies/global/NTSC")["configPolicies"], json::object());
  auto refused = client_->Request("PUT", "/api/v1/config-policies/global/NTSC",
                                  R"({"workloadType":"NTSC","configPolicies":"{}"})", Session());
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 403) << refused->body;
  token_ = Call("POST", "/api/v1/auth/login",
                R"({"username":"admin","password":"","isHashed":true})")["token"];
  const json body = {{"workloadType", "EXPERIMENT"},
                     {"workspaceId", 1},
                     {"configPolicies",
                      "invariant_config:\n  description: x\nconstraints:\n  priority_limit: 10\n"}};
  json set = Call("PUT", "/api/v1/config-policies/workspaces/1/EXPERIMENT", body.dump());
  EXPECT_EQ(set["configPolicies"],
            json::parse(
                R"({"invariant_config":{"description":"x"},"constraints":{"priority_limit":10}})"))
      << set;
  EXPECT_EQ(Call("GET", "/api/v1/config-policies/workspaces/1/EXPERIMENT"), set);
  EXPECT_EQ(Call("GET", "/api/v1/config-policies/workspaces/1/NTSC")["configPolicies"],
            json::object());
  Call("DELETE", "/api/v1/config-policies/workspaces/1/EXPERIMENT");
  EXPECT_EQ(Call("GET", "/api/v1/config-policies/workspaces/1/EXPERIMENT")["configPolicies"],
            json::object());
  for (const auto& [target, expected] : std::vector<std::pair<std::string, int>>{
           {"/api/v1/config-policies/global/TASKS", 400},
           {"/api/v1/config-policies/workspaces/77/NTSC", 404}}) {
    auto answer = client_->Request("GET", target, "", Session());
    ASSERT_TRUE(answer.ok());
    EXPECT_EQ(answer->status, expected) << target << ": " << answer->body;
  }
}

// det user-group create/list/describe/add-user/remove-user/change-name/delete and det rbac
// assign-role -g, in the CLI's request order (group_name_to_group_id searches by name first).
TEST_F(DeterminedRbacShapesTest, UserGroupsAndTheirRoles) {
  auto refused = client_->Request("POST", "/api/v1/groups", R"({"name":"vision"})", Session());
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 403) << "only cluster admins make groups: " << refused->body;
  token_ = Call("POST", "/api/v1/auth/login",
                R"({"username":"admin","password":"","isHashed":true})")["token"];
  int determined_id = 0;
  const json users = Call("GET", "/api/v1/users");
  for (const auto& user : users["users"]) {
    if (user["username"] == "determined") determined_id = user["id"];
  }
  ASSERT_NE(determined_id, 0) << users;
  json created = Call("POST", "/api/v1/groups",
                      json{{"name", "vision"}, {"addUsers", {determined_id}}}.dump());
  ExpectKeys(created["group"], {"groupId", "name", "users"}, "v1GroupDetails");
  ASSERT_EQ(created["group"]["users"].size(), 1u);
  EXPECT_EQ(created["group"]["users"][0]["username"], "determined");
  const int group_id = created["group"]["groupId"];

  json found = Call("POST", "/api/v1/groups/search", R"({"name":"vision","limit":1,"offset":0})");
  ASSERT_EQ(found["groups"].size(), 1u) << found;
  EXPECT_EQ(found["groups"][0]["group"]["groupId"], group_id);
  EXPECT_EQ(found["groups"][0]["numMembers"], 1);
  EXPECT_EQ(Call("POST", "/api/v1/groups/search",
                 json{{"limit", 10}, {"userId", determined_id}}.dump())["groups"]
                .size(),
            1u);
  EXPECT_EQ(Call("POST", "/api/v1/groups/search", R"({"name":"nope","limit":1})")["groups"],
            json::array());

  // A role for the group in workspace 1, seen by role, by group, by member and by workspace.
  const json assignment = {
      {"groupRoleAssignments",
       {{{"groupId", group_id},
         {"roleAssignment", {{"role", {{"roleId", 2}}}, {"scopeWorkspaceId", 1}}}}}}};
  Call("POST", "/api/v1/roles/add-assignments", assignment.dump());
  json by_group = Call("GET", "/api/v1/roles/search/by-group/" + std::to_string(group_id));
  ASSERT_EQ(by_group["roles"].size(), 1u) << by_group;
  EXPECT_EQ(by_group["assignments"][0]["scopeWorkspaceIds"], json::array({1})) << by_group;
  json by_ids = Call("POST", "/api/v1/roles/search/by-ids", R"({"roleIds":[2]})");
  ASSERT_EQ(by_ids["roles"][0]["groupRoleAssignments"].size(), 1u) << by_ids;
  EXPECT_EQ(by_ids["roles"][0]["groupRoleAssignments"][0]["groupId"], group_id);
  json by_user = Call("GET", "/api/v1/roles/search/by-user/" + std::to_string(determined_id));
  bool through_group = false;
  for (const auto& role : by_user["roles"]) {
    for (const auto& held : role["groupRoleAssignments"]) {
      through_group = through_group || held["groupId"] == group_id;
    }
  }
  EXPECT_TRUE(through_group) << "a member's roles include the group's: " << by_user;
  EXPECT_EQ(Call("GET", "/api/v1/roles/workspace/1")["groups"][0]["groupId"], group_id);

  json renamed = Call("PUT", "/api/v1/groups/" + std::to_string(group_id),
                      json{{"groupId", group_id}, {"name", "vision-team"}}.dump());
  EXPECT_EQ(renamed["group"]["name"], "vision-team");
  json emptied = Call("PUT", "/api/v1/groups/" + std::to_string(group_id),
                      json{{"groupId", group_id}, {"removeUsers", {determined_id}}}.dump());
  EXPECT_EQ(emptied["group"]["users"], json::array());
  EXPECT_EQ(Call("GET", "/api/v1/groups/" + std::to_string(group_id))["group"]["name"],
            "vision-team");
  Call("DELETE", "/api/v1/groups/" + std::to_string(group_id));
  EXPECT_EQ(Call("POST", "/api/v1/groups/search", R"({"limit":10})")["groups"], json::array());
  EXPECT_EQ(Call("POST", "/api/v1/roles/search/by-ids",
                 R"({"roleIds":[2]})")["roles"][0]["groupRoleAssignments"],
            json::array())
      << "the group's role went with it";
  auto gone = client_->Request("GET", "/api/v1/groups/" + std::to_string(group_id), "", Session());
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->status, 404) << gone->body;
}

TEST_F(DeterminedShapesTest, ExperimentCreateListAndDescribe) {
  json created = Call("POST", "/api/v1/experiments", CreateExperimentBody(false).dump());
  ExpectKeys(created, {"experiment", "config"}, "create");
  const std::vector<std::string> experiment_keys = {
      "id",      "name",      "state",     "archived",       "config",       "originalConfig",
      "jobId",   "numTrials", "projectId", "projectOwnerId", "searcherType", "startTime",
      "username"};
  ExpectKeys(created["experiment"], experiment_keys, "v1Experiment");
  EXPECT_EQ(created["experiment"]["state"], "STATE_PAUSED");  // activate: false (--paused)
  int64_t id = created["experiment"]["id"];
  json listed =
      Call("GET", "/api/v1/experiments?archived=false&limit=200&offset=0&users=determined");
  ASSERT_EQ(listed["experiments"].size(), 1u);
  ExpectKeys(listed["experiments"][0], experiment_keys, "list entry");
  ExpectKeys(listed["pagination"], {"endIndex", "total"}, "pagination");
  json described = Call("GET", "/api/v1/experiments/" + std::to_string(id));
  ExpectKeys(described["experiment"], experiment_keys, "describe");
  json trials = Call("GET", "/api/v1/experiments/" + std::to_string(id) + "/trials?offset=0");
  ASSERT_EQ(trials["trials"].size(), 1u);  // the searcher's trial exists while paused
  ExpectKeys(
      trials["trials"][0],
      {"id", "experimentId", "state", "startTime", "restarts", "hparams", "totalBatchesProcessed"},
      "trialv1Trial");
  std::string trial_id = std::to_string(trials["trials"][0]["id"].get<int64_t>());
  json workloads = Call("GET", "/api/v1/trials/" + trial_id + "/workloads?limit=500&offset=0");
  EXPECT_TRUE(workloads["workloads"].is_array());
  ExpectKeys(workloads["pagination"], {"endIndex", "total"}, "workloads pagination");
}

// projectOwnerId is the project's creator (the built-in Uncategorized project is admin's, id 1).
TEST_F(DeterminedShapesTest, AnExperimentNamesItsProjectsOwner) {
  json created = Call("POST", "/api/v1/experiments", CreateExperimentBody(false).dump());
  EXPECT_EQ(created["experiment"]["projectOwnerId"], 1) << "Uncategorized";
  const int32_t me = Call("GET", "/api/v1/me")["user"]["id"];
  ASSERT_NE(me, 1);
  const int32_t workspace =
      Call("POST", "/api/v1/workspaces", R"({"name":"mine"})")["workspace"]["id"];
  const int32_t project =
      Call("POST", "/api/v1/workspaces/" + std::to_string(workspace) + "/projects",
           R"({"name":"p"})")["project"]["id"];
  json body = CreateExperimentBody(false);
  body["projectId"] = project;
  const int64_t id = Call("POST", "/api/v1/experiments", body.dump())["experiment"]["id"];
  json described = Call("GET", "/api/v1/experiments/" + std::to_string(id));
  EXPECT_EQ(described["experiment"]["projectId"], project);
  EXPECT_EQ(described["experiment"]["projectOwnerId"], me);
}

// `det experiment create --test`: validateOnly answers with a zero-valued experiment the CLI can
// parse, and creates nothing.
TEST_F(DeterminedShapesTest, ExperimentCreateValidateOnly) {
  json body = CreateExperimentBody(false);
  body["validateOnly"] = true;
  json validated = Call("POST", "/api/v1/experiments", body.dump());
  ExpectKeys(validated, {"experiment", "config"}, "validateOnly");
  ExpectKeys(validated["experiment"],
             {"id", "name", "state", "archived", "config", "originalConfig", "jobId", "numTrials",
              "projectId", "projectOwnerId", "searcherType", "startTime", "username"},
             "v1Experiment");
  EXPECT_EQ(validated["experiment"]["id"], 0);
  // The configuration is the one the write side would record: defaults and storage filled in.
  EXPECT_TRUE(validated["config"]["checkpoint_storage"]["host_path"].is_string())
      << validated.dump();

  // What the write side refuses, validation refuses too, with nothing stored.
  body["config"] =
      "entrypoint: missing:Trial\nsearcher:\n  name: single\n  metric: loss\n"
      "  max_length: {batches: 1}\n";
  auto refused = client_->Request("POST", "/api/v1/experiments", body.dump(), Session());
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("the model definition has no missing.py"), std::string::npos)
      << refused->body;
  EXPECT_EQ(Call("GET", "/api/v1/experiments")["experiments"].size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("data") + "/contexts"))
      << "validateOnly stored the model definition";
}

TEST_F(DeterminedShapesTest, ExperimentActionsAndSetPriority) {
  json created = Call("POST", "/api/v1/experiments", CreateExperimentBody(true).dump());
  std::string id = std::to_string(created["experiment"]["id"].get<int64_t>());
  EXPECT_EQ(created["experiment"]["state"], "STATE_ACTIVE");
  Call("POST", "/api/v1/experiments/" + id + "/pause", "{}");
  EXPECT_EQ(Call("GET", "/api/v1/experiments/" + id)["experiment"]["state"], "STATE_PAUSED");
  Call("POST", "/api/v1/experiments/" + id + "/activate", "{}");
  Call("PATCH", "/api/v1/experiments/" + id, R"({"id":)" + id + R"(,"resources":{"priority":10}})");
  json jobs = Call("GET", "/api/v1/job-queues-v2");
  bool found = false;
  for (const auto& job : jobs["jobs"]) {
    if (job["full"]["entityId"] == id || job["full"]["jobId"] == "experiment-" + id) {
      found = true;
      EXPECT_EQ(job["full"]["priority"], 10) << job.dump();
    }
  }
  EXPECT_TRUE(found) << jobs.dump();
  Call("POST", "/api/v1/experiments/" + id + "/kill", "{}");
  std::string state = Call("GET", "/api/v1/experiments/" + id)["experiment"]["state"];
  EXPECT_TRUE(state == "STATE_CANCELED" || state == "STATE_STOPPING_KILLED") << state;
}

TEST_F(DeterminedShapesTest, TemplateSetListAndDescribe) {
  // `det template set t1 tmpl.yaml`: GET (404) then POST; when it exists, PATCH with the bare
  // config.
  auto missing = client_->Request("GET", "/api/v1/templates/t1", "", Session());
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  json posted =
      Call("POST", "/api/v1/templates/t1",
           R"({"name":"t1","config":{"resources":{"slots_per_trial":2}},"workspaceId":0})");
  ExpectKeys(posted["template"], {"name", "config", "workspaceId"}, "template");
  json patched = Call("PATCH", "/api/v1/templates/t1",
                      R"({"resources":{"slots_per_trial":1},"max_restarts":2})");
  EXPECT_EQ(patched["template"]["config"]["max_restarts"], 2);
  json listed = Call("GET", "/api/v1/templates");
  ASSERT_EQ(listed["templates"].size(), 1u);
  EXPECT_TRUE(listed.contains("pagination"));
  json described = Call("GET", "/api/v1/templates/t1");
  EXPECT_EQ(described["template"]["config"]["resources"]["slots_per_trial"], 1);
  auto again =
      client_->Request("POST", "/api/v1/templates/t1", R"({"name":"t1","config":{}})", Session());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409);
  Call("DELETE", "/api/v1/templates/t1");
  EXPECT_EQ(client_->Request("GET", "/api/v1/templates/t1", "", Session())->status, 404);
}

// det master cluster-message set/get/clear, det master config set --log.level, det
// preview-search and det task cleanup-logs, as the CLI sends them (admins; empty bodies unsent).
TEST_F(DeterminedShapesTest, ClusterMessageLogLevelPreviewSearchAndCleanup) {
  // Not for a non-admin.
  auto refused =
      client_->Request("PUT", "/api/v1/master/cluster_message",
                       R"({"message":"hi","startTime":"2020-01-01T00:00:00Z"})", Session());
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 403) << refused->body;
  token_ = Call("POST", "/api/v1/auth/login",
                R"({"username":"admin","password":"","isHashed":true})")["token"];

  EXPECT_TRUE(Call("GET", "/api/v1/master/cluster_message")["clusterMessage"].is_null());
  EXPECT_TRUE(Call("GET", "/api/v1/master")["clusterMessage"].is_null());
  Call("PUT", "/api/v1/master/cluster_message",
       R"({"message":"maintenance at noon","startTime":"2020-01-01T00:00:00.123456Z",)"
       R"("duration":null,"endTime":null})");
  json got = Call("GET", "/api/v1/master/cluster_message");
  ExpectKeys(got["clusterMessage"], {"message", "startTime", "createdTime"}, "clusterMessage");
  EXPECT_EQ(got["clusterMessage"]["message"], "maintenance at noon");
  EXPECT_TRUE(got["clusterMessage"]["endTime"].is_null());
  EXPECT_EQ(Call("GET", "/api/v1/master")["clusterMessage"]["message"], "maintenance at noon");
  // One to come: shown by get, not yet by the master's info. A duration of Go's form only.
  Call(
      "PUT", "/api/v1/master/cluster_message",
      R"({"message":"upgrade","startTime":"2099-01-01T00:00:00Z","duration":"24h","endTime":null})");
  EXPECT_EQ(Call("GET", "/api/v1/master/cluster_message")["clusterMessage"]["endTime"],
            "2099-01-02T00:00:00.000000Z");
  EXPECT_TRUE(Call("GET", "/api/v1/master")["clusterMessage"].is_null());
  for (const char* bad :
       {R"({"message":"x","startTime":"2099-01-01T00:00:00Z","duration":"2w"})",
        R"({"message":"x","startTime":"2020-01-01T00:00:00Z","endTime":"2020-01-02T00:00:00Z"})",
        R"({"message":"x","duration":"1h","endTime":"2099-01-02T00:00:00Z"})"}) {
    auto response = client_->Request("PUT", "/api/v1/master/cluster_message", bad, Session());
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->status, 400) << bad << ": " << response->body;
  }
  Call("DELETE", "/api/v1/master/cluster_message");
  EXPECT_TRUE(Call("GET", "/api/v1/master/cluster_message")["clusterMessage"].is_null());

  // The log level, as the CLI's object-form field mask names it.
  Call("PATCH", "/api/v1/master/config",
       R"({"config":{"log":{"level":"LOG_LEVEL_DEBUG","color":true}},)"
       R"("fieldMask":{"paths":["log.color","log.level"]}})");
  auto unknown = client_->Request("PATCH", "/api/v1/master/config",
                                  R"({"config":{},"fieldMask":{"paths":["db.host"]}})", Session());
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 501) << unknown->body;
  Call("PATCH", "/api/v1/master/config",
       R"({"config":{"log":{"level":"LOG_LEVEL_INFO"}},"fieldMask":"log.level"})");

  // preview-search: a grid of 3 x 2, and adaptive ASHA's rungs (max_length 1000, 16 trials,
  // divisor 4, standard mode: brackets of 3 and 2 rungs).
  json grid = Call("POST", "/api/v1/preview-hp-search", R"({"config":{
      "entrypoint":"python3 train.py",
      "hyperparameters":{"lr":{"type":"categorical","vals":[0.1,0.01,0.001]},
                         "layers":{"type":"int","minval":1,"maxval":2,"count":2}},
      "searcher":{"name":"grid","metric":"loss","max_length":{"batches":100}}}})");
  ASSERT_EQ(grid["summary"]["trials"].size(), 1u) << grid;
  EXPECT_EQ(grid["summary"]["trials"][0]["count"], 6);
  EXPECT_EQ(grid["summary"]["trials"][0]["unit"]["maxLength"], true);
  EXPECT_EQ(grid["summary"]["config"]["name"], "grid");
  json asha = Call("POST", "/api/v1/preview-hp-search", R"({"config":{
      "entrypoint":"python3 train.py",
      "hyperparameters":{"lr":{"type":"double","minval":0.001,"maxval":0.1}},
      "searcher":{"name":"adaptive_asha","metric":"loss","max_length":{"batches":1000},
                  "max_trials":16}}})");
  int trials = 0;
  int64_t last_length = 0;
  for (const json& entry : asha["summary"]["trials"]) {
    trials += entry["count"].get<int>();
    EXPECT_EQ(entry["unit"]["maxLength"], false);
    EXPECT_EQ(entry["unit"]["name"], "batches");
    EXPECT_GT(entry["unit"]["value"].get<int64_t>(), last_length) << "by length, shortest first";
    last_length = entry["unit"]["value"];
  }
  EXPECT_EQ(trials, 16) << asha;
  EXPECT_EQ(last_length, 1000);
  auto no_searcher = client_->Request("POST", "/api/v1/preview-hp-search",
                                      R"({"config":{"entrypoint":"x"}})", Session());
  ASSERT_TRUE(no_searcher.ok());
  EXPECT_EQ(no_searcher->status, 400);

  EXPECT_EQ(Call("POST", "/api/v1/cleanup_logs")["removedCount"], "0");
}

TEST_F(DeterminedShapesTest, ErrorsUseGrpcGatewaysShape) {
  auto response = client_->Request("GET", "/api/v1/tasks/unknown", "", Session());
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 404);
  json body = json::parse(response->body);
  ExpectKeys(body, {"code", "message", "details"}, "error");
  EXPECT_EQ(body["code"], 5);
}

}  // namespace
}  // namespace cairn
