// security.authz.type: basic, the master's default (Determined's open-source model): no roles;
// every active user sees everything and creates work, projects, models and templates anywhere;
// changing someone else's work, a workspace or project, and cluster-wide settings take the admin
// flag. Also the parts of Determined's behaviour its tools read whatever the model: the login's
// status codes and the master configuration's shape.
#include <gtest/gtest.h>

#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

class BasicAuthzTest : public ApiTest {
 protected:
  void SetUp() override {
    authz_ = events::AUTHZ_TYPE_BASIC;
    StartMaster();
  }

  int32_t CreateUser(const std::string& name, bool active = true) {
    LoginAs("admin");
    json created = CallJson("POST", "/api/v1/users",
                            json{{"user", {{"username", name}, {"active", active}}},
                                 {"password", ""},
                                 {"isHashed", true}}
                                .dump());
    return created["user"]["id"].get<int32_t>();
  }

  int32_t CreateWorkspace(const std::string& name) {
    return CallJson("POST", "/api/v1/workspaces", json{{"name", name}}.dump())["workspace"]["id"];
  }

  std::string SubmitIn(int32_t workspace_id) {
    return CallJson("POST", "/api/v1/commands",
                    json{{"config", {{"entrypoint", {"sleep", "60"}}}},
                         {"workspaceId", workspace_id},
                         {"force", true}}
                        .dump())["command"]["id"];
  }
};

TEST_F(BasicAuthzTest, RolesAreOffAndTheCliIsToldSo) {
  LoginAs("determined");
  EXPECT_FALSE(CallJson("GET", "/api/v1/master")["rbacEnabled"]);
  json summary = CallJson("GET", "/api/v1/permissions/summary");
  EXPECT_TRUE(summary["roles"].empty()) << summary.dump();
  EXPECT_TRUE(summary["assignments"].empty()) << summary.dump();
  // Assigning a role is refused with the way to turn roles on, even for an admin.
  const int32_t user = CreateUser("ana");
  auto refused = Call(
      "POST", "/api/v1/roles/add-assignments",
      json{{"userRoleAssignments",
            {{{"userId", user},
              {"roleAssignment", {{"role", {{"roleId", 2}}}, {"scopeWorkspaceId", nullptr}}}}}},
           {"groupRoleAssignments", json::array()}}
          .dump());
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_NE(refused.body.find("security.authz.type"), std::string::npos) << refused.body;
}

TEST_F(BasicAuthzTest, AnyUserCreatesAnywhereButOnlyOwnersAndAdminsChangeWork) {
  CreateUser("ana");
  CreateUser("ben");
  RegisterAgent("a1", 1, "inc-1");
  LoginAs("ana");
  const int32_t lab = CreateWorkspace("lab");
  const std::string command = SubmitIn(lab);

  LoginAs("ben");
  // Under rbac ben, with no role in lab, could neither see nor create anything there.
  EXPECT_EQ(CallJson("GET", "/api/v1/commands/" + command)["command"]["id"], command);
  const std::string own = SubmitIn(lab);
  json project = CallJson("POST", "/api/v1/workspaces/" + std::to_string(lab) + "/projects",
                          json{{"name", "bens"}, {"workspaceId", lab}}.dump())["project"];
  json experiment_body = CreateExperimentBody(false);
  experiment_body["projectId"] = project["id"];
  json experiment = CallJson("POST", "/api/v1/experiments", experiment_body.dump());
  EXPECT_EQ(experiment["experiment"]["workspaceId"], lab) << experiment.dump();
  CallJson("POST", "/api/v1/models", json{{"name", "bens-model"}, {"workspaceId", lab}}.dump());

  // Changing someone else's work is the owner's or an admin's.
  auto refused = Call("POST", "/api/v1/commands/" + command + "/kill");
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_NE(refused.body.find("only its owner or an admin"), std::string::npos) << refused.body;
  EXPECT_EQ(
      Call("PATCH", "/api/v1/workspaces/" + std::to_string(lab), R"({"name":"bens-lab"})").status,
      403)
      << "the workspace is ana's";
  EXPECT_EQ(Call("POST", "/api/v1/agents/a1/disable").status, 403) << "agents are admins'";
  CallJson("POST", "/api/v1/commands/" + own + "/kill");  // its own

  LoginAs("ana");
  CallJson("PATCH", "/api/v1/workspaces/" + std::to_string(lab), R"({"name":"ana-lab"})");
  // The workspace's owner changes the projects in it, as in Determined.
  CallJson("PATCH", "/api/v1/projects/" + std::to_string(project["id"].get<int32_t>()),
           R"({"name":"bens-renamed"})");
  LoginAs("admin");
  CallJson("POST", "/api/v1/commands/" + command + "/kill");
}

TEST_F(BasicAuthzTest, PoolBindingsAreAdminsAndTemplatesShowTheirValuesToEveryReader) {
  CreateUser("ana");
  LoginAs("ana");
  const int32_t lab = CreateWorkspace("lab");
  const std::string bindings = "/api/v1/resource-pools/default/workspace-bindings";
  const std::string body = json{{"workspaceIds", {lab}}}.dump();
  EXPECT_EQ(Call("POST", bindings, body).status, 403);
  CallJson("POST", "/api/v1/templates/env",
           json{{"name", "env"},
                {"config", {{"environment", {{"environment_variables", {"WANDB_MODE=offline"}}}}}},
                {"workspaceId", lab}}
               .dump());
  LoginAs("determined");
  json shown = CallJson("GET", "/api/v1/templates/env");
  EXPECT_EQ(shown["template"]["config"]["environment"]["environment_variables"][0],
            "WANDB_MODE=offline")
      << "Determined shows template values to every reader without RBAC: " << shown.dump();
  LoginAs("admin");
  CallJson("POST", bindings, body);
}

TEST_F(BasicAuthzTest, LoginAnswersAsDeterminedDoes) {
  CreateUser("gone", /*active=*/false);
  token_.clear();
  auto wrong = Call("POST", "/api/v1/auth/login",
                    R"({"username":"determined","password":"nope","isHashed":false})");
  EXPECT_EQ(wrong.status, 401) << wrong.body;
  EXPECT_NE(wrong.body.find("invalid credentials"), std::string::npos) << wrong.body;
  auto unknown = Call("POST", "/api/v1/auth/login", R"({"username":"nobody","password":""})");
  EXPECT_EQ(unknown.status, 401) << unknown.body;
  auto inactive = Call("POST", "/api/v1/auth/login", R"({"username":"gone","password":""})");
  EXPECT_EQ(inactive.status, 403) << inactive.body;
  EXPECT_NE(inactive.body.find("user is not active"), std::string::npos) << inactive.body;
  // Only the password's holder learns that the user is inactive.
  auto guessed = Call("POST", "/api/v1/auth/login", R"({"username":"gone","password":"guess"})");
  EXPECT_EQ(guessed.status, 401) << guessed.body;
}

// Determined's rules for display names: nobody goes by another's name, "admin" is for admins.
TEST_F(BasicAuthzTest, ADisplayNameMayNotPassForSomeoneElse) {
  const int32_t ana = CreateUser("ana");
  CreateUser("ben");
  LoginAs("ana");
  const std::string me = "/api/v1/users/" + std::to_string(ana);
  for (const auto& [name, words] : std::vector<std::pair<std::string, std::string>>{
           {"Admin", "Non-admin user cannot be renamed 'admin'"},
           {"determined", "User cannot be renamed 'determined'"},
           {"BEN", "found a similar username or display name"}}) {
    auto refused = Call("PATCH", me, json{{"displayName", name}}.dump());
    EXPECT_EQ(refused.status, 400) << name << ": " << refused.body;
    EXPECT_NE(refused.body.find(words), std::string::npos) << refused.body;
  }
  EXPECT_EQ(CallJson("PATCH", me, R"({"displayName":"Ana the Great"})")["user"]["displayName"],
            "Ana the Great");
  LoginAs("ben");
  auto taken = Call("PATCH", "/api/v1/users/" + std::to_string(ana + 1),
                    R"({"displayName":"ana the great"})");
  EXPECT_EQ(taken.status, 400) << "another's display name, ignoring case: " << taken.body;
}

// The fields and types of Determined's MasterConfig that its tools read.
TEST_F(BasicAuthzTest, MasterConfigHasDeterminedsShape) {
  LoginAs("admin");
  json config = CallJson("GET", "/api/v1/master/config")["config"];
  const json& manager = config["resource_manager"];
  ASSERT_TRUE(manager.is_object()) << config.dump();
  EXPECT_EQ(manager["type"], "agent");
  EXPECT_EQ(manager["default_compute_resource_pool"], "default");
  EXPECT_EQ(manager["default_aux_resource_pool"], "default");
  EXPECT_TRUE(manager["scheduler"].is_object());
  EXPECT_TRUE(manager["scheduler"]["type"].is_string());
  const json& pools = config["resource_pools"];
  ASSERT_TRUE(pools.is_array()) << config.dump();
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0]["pool_name"], "default");
  EXPECT_TRUE(pools[0]["description"].is_string());
  EXPECT_TRUE(pools[0]["max_aux_containers_per_agent"].is_number_integer());
  EXPECT_TRUE(config.contains("checkpoint_storage"));
  EXPECT_TRUE(config["checkpoint_storage"].is_null() || config["checkpoint_storage"].is_object());
  ASSERT_TRUE(config["task_container_defaults"].is_object());
  EXPECT_TRUE(config["task_container_defaults"]["preemption_timeout"].is_number_integer());
  ASSERT_TRUE(config["security"].is_object());
  EXPECT_EQ(config["security"]["authz"]["type"], "basic");
}

// A restart under another model records it, and from then on decides by it.
TEST_F(BasicAuthzTest, ARestartUnderRbacTurnsRolesOn) {
  CreateUser("ana");
  LoginAs("admin");
  const int32_t lab = CreateWorkspace("lab");
  authz_ = events::AUTHZ_TYPE_RBAC;
  StartMaster();
  EXPECT_TRUE(CallJson("GET", "/api/v1/master")["rbacEnabled"]);
  LoginAs("ana");
  EXPECT_EQ(Call("GET", "/api/v1/workspaces/" + std::to_string(lab)).status, 404)
      << "without a role in lab, ana no longer sees it";
  std::vector<json> configured = EventsOfType("authorizationConfigured");
  ASSERT_EQ(configured.size(), 2u);
  EXPECT_EQ(configured[0]["authorizationConfigured"]["type"], "AUTHZ_TYPE_BASIC");
  EXPECT_EQ(configured[1]["authorizationConfigured"]["type"], "AUTHZ_TYPE_RBAC");
  EXPECT_EQ(configured[1]["actor"], "system:master");

  // A start whose master.yaml says nothing keeps the log's model: only a setting changes it.
  authz_ = events::AUTHZ_TYPE_UNSPECIFIED;
  StartMaster();
  EXPECT_TRUE(CallJson("GET", "/api/v1/master")["rbacEnabled"]);
  EXPECT_EQ(EventsOfType("authorizationConfigured").size(), 2u);
}

}  // namespace
}  // namespace cairn::api_testing
