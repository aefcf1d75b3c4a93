// Workspaces, projects, roles and pool bindings over REST, in the shapes Determined's CLI reads:
// who sees and changes what, the audit record of a refusal, and a restart that loses nothing.
#include <gtest/gtest.h>

#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

// A default pool and a gpu pool, both fair share.
events::ResourcePoolsConfigured TwoPools() {
  return Pools({Pool("default", events::SCHEDULER_TYPE_FAIR_SHARE),
                Pool("gpu", events::SCHEDULER_TYPE_FAIR_SHARE)},
               "default", "default");
}

class TenancyApiTest : public ApiTest {
 protected:
  int32_t CreateUser(const std::string& name) {
    LoginAs("admin");
    json created = CallJson(
        "POST", "/api/v1/users",
        json{{"user", {{"username", name}, {"active", true}}}, {"password", ""}, {"isHashed", true}}
            .dump());
    return created["user"]["id"].get<int32_t>();
  }

  void Assign(int32_t user_id, int role_id, std::optional<int32_t> workspace_id,
              const std::string& path = "/api/v1/roles/add-assignments", int status = 200) {
    json scope = {{"role", {{"roleId", role_id}}}};
    scope["scopeWorkspaceId"] = workspace_id ? json(*workspace_id) : json(nullptr);
    CallJson("POST", path,
             json{{"userRoleAssignments", {{{"userId", user_id}, {"roleAssignment", scope}}}},
                  {"groupRoleAssignments", json::array()}}
                 .dump(),
             status);
  }

  // A workspace the admin creates, and `user_id` an editor there.
  int32_t WorkspaceWithEditor(const std::string& name, int32_t user_id) {
    LoginAs("admin");
    const int32_t workspace =
        CallJson("POST", "/api/v1/workspaces", json{{"name", name}}.dump())["workspace"]["id"];
    Assign(user_id, 2, workspace);
    return workspace;
  }

  std::string Submit(int32_t workspace_id) {
    json reply = CallJson("POST", "/api/v1/commands",
                          json{{"config", {{"entrypoint", {"sleep", "60"}}}},
                               {"workspaceId", workspace_id},
                               {"force", true}}
                              .dump());
    return reply["command"]["id"];
  }
};

// GET /api/v1/commands keeps its answer while nothing it shows changed (BulkVersioned): asked
// again it must still follow every change, whether to the commands (a new one, a kill) or to
// who may see them (a role given, a role taken back).
TEST_F(TenancyApiTest, AKeptListFollowsItsCommandsAndWhoMaySeeThem) {
  const int32_t bob = CreateUser("bob");
  const int32_t carol = CreateUser("carol");
  const int32_t team = WorkspaceWithEditor("team", bob);
  auto listed = [&](const std::string& as) {
    LoginAs(as);
    std::vector<std::string> seen;
    for (int ask = 0; ask < 2; ++ask) {  // the second answer is the kept one
      json list = CallJson("GET", "/api/v1/commands?users=bob");
      std::vector<std::string> states;
      for (const auto& command : list["commands"]) {
        states.push_back(command["id"].get<std::string>() + " " +
                         command["state"].get<std::string>());
      }
      if (ask == 0) seen = states;
      EXPECT_EQ(states, seen) << "asked again, the same answer";
    }
    return seen;
  };
  LoginAs("bob");
  const std::string first = Submit(team);
  EXPECT_TRUE(listed("carol").empty()) << "carol has no role in team";
  LoginAs("admin");
  Assign(carol, 1, team);
  ASSERT_EQ(listed("carol").size(), 1u) << "a role given shows bob's command at once";
  LoginAs("bob");
  const std::string second = Submit(team);
  auto both = listed("carol");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].substr(0, second.size()), second);
  LoginAs("bob");
  CallJson("POST", "/api/v1/commands/" + first + "/kill", "{}");
  const auto after_kill = listed("carol");
  ASSERT_EQ(after_kill.size(), 2u);
  EXPECT_NE(after_kill[0], both[0]) << "the kill shows in the kept list: " << after_kill[0];
  LoginAs("admin");
  Assign(carol, 1, team, "/api/v1/roles/remove-assignments");
  EXPECT_TRUE(listed("carol").empty()) << "a role taken back hides them at once";
}

TEST_F(TenancyApiTest, AViewerIsRefusedAKillAndOnlyTheRefusalIsRecorded) {
  const int32_t viewer = CreateUser("viewer");
  const int32_t editor = CreateUser("editor");
  LoginAs("admin");
  json created = CallJson("POST", "/api/v1/workspaces", R"({"name":"team"})");
  EXPECT_EQ(created["namespaceBindings"], json::object()) << "the CLI iterates it";
  for (const char* key : {"id", "name", "archived", "errorMessage", "immutable", "numExperiments",
                          "numProjects", "pinned", "state", "userId", "username"}) {
    EXPECT_TRUE(created["workspace"].contains(key)) << key << " is required by the CLI";
  }
  const int32_t team = created["workspace"]["id"];
  Assign(viewer, 1, team);
  Assign(editor, 2, team);
  LoginAs("editor");
  const std::string id = Submit(team);
  EXPECT_EQ(CallJson("GET", "/api/v1/commands/" + id)["command"]["workspaceId"], team);

  LoginAs("viewer");
  EXPECT_EQ(CallJson("GET", "/api/v1/commands/" + id)["command"]["id"], id) << "viewers read";
  const size_t before = Events().size();
  auto refused = Call("POST", "/api/v1/commands/" + id + "/kill");
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("PERMISSION_TYPE_UPDATE_NSC"), std::string::npos) << refused.body;
  std::vector<json> after = Events();
  ASSERT_EQ(after.size(), before + 1) << "only the refusal's record";
  EXPECT_TRUE(after.back().contains("accessDenied")) << after.back().dump();
  EXPECT_EQ(after.back()["actor"], "user:viewer");
  EXPECT_EQ(Call("POST", "/api/v1/commands",
                 R"({"config":{"entrypoint":["true"]},"workspaceId":)" + std::to_string(team) + "}")
                .status,
            403)
      << "viewers create nothing";

  // A user without a role there neither sees the work nor the workspace.
  CreateUser("outsider");
  LoginAs("outsider");
  EXPECT_EQ(Call("GET", "/api/v1/commands/" + id).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/workspaces/" + std::to_string(team)).status, 404);
  json listed = CallJson("GET", "/api/v1/commands");
  for (const auto& command : listed["commands"]) EXPECT_NE(command["id"], id);
  json workspaces = CallJson("GET", "/api/v1/workspaces");
  ASSERT_EQ(workspaces["workspaces"].size(), 1u) << "only Uncategorized: " << workspaces.dump();
  json queue = CallJson("GET", "/api/v1/job-queues-v2");
  bool limited = false;
  for (const auto& job : queue["jobs"]) limited |= job.contains("limited");
  EXPECT_TRUE(limited) << "others' jobs show without whose they are: " << queue.dump();

  LoginAs("editor");
  CallJson("POST", "/api/v1/commands/" + id + "/kill");  // its owner may
}

// The event stream as people read it (api/event_visibility.h): the work of workspaces where
// they hold a role, their own sessions and the cluster; an admin reads what an agent reads.
TEST_F(TenancyApiTest, TheEventStreamShowsAPersonOnlyWhatTheirWorkspacesAllow) {
  const int32_t editor = CreateUser("editor");
  const int32_t outsider = CreateUser("outsider");
  const int32_t team = WorkspaceWithEditor("team", editor);
  LoginAs("editor");
  const std::string team_work = Submit(team);
  LoginAs("determined");
  const std::string shared_work = Submit(1);
  auto stream_as = [&](const std::string& user) {
    LoginAs(user);
    return EventsAs(token_);
  };
  auto mentions = [](const std::vector<json>& events, const std::string& text) {
    size_t count = 0;
    for (const auto& event : events) count += event.dump().find(text) != std::string::npos;
    return count;
  };
  const std::vector<json> everything = Events();  // as the agent
  ASSERT_GT(mentions(everything, team_work), 0u);

  const std::vector<json> outsiders = stream_as("outsider");
  EXPECT_EQ(mentions(outsiders, team_work), 0u) << "work of a workspace it has no role in";
  EXPECT_EQ(mentions(outsiders, "\"team\""), 0u) << "nor the workspace itself";
  EXPECT_GT(mentions(outsiders, shared_work), 0u) << "Uncategorized work is everyone's";
  EXPECT_GT(mentions(outsiders, "writerEpochClaimed"), 0u) << "the cluster is everyone's";
  for (const auto& event : outsiders) {
    if (event.contains("sessionStarted")) {
      EXPECT_EQ(event["sessionStarted"]["userId"], outsider) << "only its own sessions";
    }
  }
  EXPECT_LT(outsiders.size(), everything.size());

  const std::vector<json> editors = stream_as("editor");
  EXPECT_GT(mentions(editors, team_work), 0u) << "the editor's workspace";
  EXPECT_GT(mentions(editors, "\"team\""), 0u);

  const size_t admins = stream_as("admin").size();  // its login is an event too: count after it
  EXPECT_EQ(admins, Events().size()) << "admins read every event";
}

TEST_F(TenancyApiTest, WorkspacesAndProjectsAsTheCliDrivesThem) {
  LoginAs("determined");
  const int32_t team = CallJson("POST", "/api/v1/workspaces",
                                R"({"name":"team","agentUserGroup":null,
                                    "checkpointStorageConfig":null,"defaultComputePool":null,
                                    "defaultAuxPool":null})")["workspace"]["id"];
  // The creator administers it: the CLI's by-name lookups find it both ways.
  json exact = CallJson("GET", "/api/v1/workspaces?nameCaseSensitive=team");
  ASSERT_EQ(exact["workspaces"].size(), 1u);
  EXPECT_EQ(CallJson("GET", "/api/v1/workspaces?name=TEAM")["workspaces"].size(), 1u);
  EXPECT_EQ(CallJson("GET", "/api/v1/workspaces?nameCaseSensitive=TEAM")["workspaces"].size(), 0u);
  EXPECT_EQ(Call("POST", "/api/v1/workspaces", R"({"name":"Team"})").status, 409);
  json project = CallJson(
      "POST", "/api/v1/workspaces/" + std::to_string(team) + "/projects",
      json{{"name", "vision"}, {"workspaceId", team}, {"description", nullptr}, {"key", nullptr}}
          .dump())["project"];
  EXPECT_EQ(project["workspaceId"], team);
  for (const char* key : {"id", "name", "key", "archived", "errorMessage", "immutable", "notes",
                          "numActiveExperiments", "numExperiments", "numRuns", "state", "userId",
                          "username", "workspaceId"}) {
    EXPECT_TRUE(project.contains(key)) << key << " is required by the CLI";
  }
  json found =
      CallJson("GET", "/api/v1/workspaces/" + std::to_string(team) + "/projects?name=VISION");
  ASSERT_EQ(found["projects"].size(), 1u);
  EXPECT_EQ(found["pagination"]["total"], 1);

  // Edits send every key, null meaning "leave it".
  json edited = CallJson("PATCH", "/api/v1/workspaces/" + std::to_string(team),
                         R"({"name":"blue","agentUserGroup":null,"checkpointStorageConfig":null,
                             "defaultComputeResourcePool":"default","defaultAuxResourcePool":null})");
  EXPECT_EQ(edited["workspace"]["name"], "blue");
  EXPECT_EQ(edited["workspace"]["defaultComputePool"], "default");
  EXPECT_EQ(edited["workspace"]["numProjects"], 1);

  // Its checkpoint storage, as `det workspace edit --checkpoint-storage-config` sends it: checked,
  // in Determined's keys, credentials masked for every reader; {} removes it.
  const std::string path = "/api/v1/workspaces/" + std::to_string(team);
  EXPECT_EQ(
      Call("PATCH", path, R"({"checkpointStorageConfig":{"type":"s3","bucket":"B!"}})").status,
      400);
  json stored = CallJson("PATCH", path,
                         R"({"checkpointStorageConfig":{"type":"s3","bucket":"team-ckpt",
                             "access_key":"AK","secret_key":"planted-secret-77"}})")["workspace"];
  EXPECT_EQ(stored["checkpointStorageConfig"]["bucket"], "team-ckpt") << stored.dump();
  EXPECT_EQ(stored["checkpointStorageConfig"]["secret_key"], "********") << stored.dump();
  EXPECT_EQ(stored["checkpointStorageConfig"]["save_trial_best"], 1) << "defaults filled";
  EXPECT_EQ(Call("GET", path).body.find("planted-secret-77"), std::string::npos);
  std::string stream;  // as the workspace's own admin reads it
  for (const auto& event : EventsAs(token_)) stream += event.dump();
  EXPECT_NE(stream.find("team-ckpt"), std::string::npos) << "the change is in the stream";
  EXPECT_EQ(stream.find("planted-secret-77"), std::string::npos) << "its credential is not";
  json kept = CallJson("PATCH", path, R"({"name":"blue","checkpointStorageConfig":null})");
  EXPECT_EQ(kept["workspace"]["checkpointStorageConfig"]["bucket"], "team-ckpt") << "null: left";
  json cleared = CallJson("PATCH", path, R"({"checkpointStorageConfig":{}})");
  EXPECT_TRUE(cleared["workspace"]["checkpointStorageConfig"].is_null()) << cleared.dump();

  // A workspace with a project but no work is deleted at once, and then is gone.
  CallJson("POST", "/api/v1/workspaces/" + std::to_string(team) + "/archive");
  EXPECT_EQ(CallJson("GET", "/api/v1/workspaces/" + std::to_string(team))["workspace"]["archived"],
            true);
  EXPECT_EQ(
      Call("POST", "/api/v1/workspaces/" + std::to_string(team) + "/projects", R"({"name":"late"})")
          .status,
      404)
      << "an archived workspace takes no new projects (Determined's 404)";
  json deleted = CallJson("DELETE", "/api/v1/workspaces/" + std::to_string(team));
  EXPECT_EQ(deleted["completed"], true);
  EXPECT_EQ(Call("GET", "/api/v1/workspaces/" + std::to_string(team)).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/projects/" + project["id"].dump()).status, 404);
}

TEST_F(TenancyApiTest, BindingsRouteWorkAndSurviveARestartWithTheRoles) {
  StartMaster(TwoPools(), "two-pools");
  const int32_t alice = CreateUser("alice");
  const int32_t team = WorkspaceWithEditor("team", alice);
  // Only cluster admins bind; the CLI names workspaces.
  LoginAs("alice");
  EXPECT_EQ(Call("POST", "/api/v1/resource-pools/gpu/workspace-bindings",
                 R"({"resourcePoolName":"gpu","workspaceNames":["team"]})")
                .status,
            403);
  LoginAs("admin");
  CallJson("POST", "/api/v1/resource-pools/gpu/workspace-bindings",
           R"({"resourcePoolName":"gpu","workspaceNames":["team"]})");
  EXPECT_EQ(CallJson("GET", "/api/v1/resource-pools/gpu/workspace-bindings")["workspaceIds"],
            json::array({team}));
  json pools = CallJson("GET", "/api/v1/workspaces/1/available-resource-pools");
  EXPECT_EQ(pools["resourcePools"], json::array({"default"})) << "gpu is team's now";

  LoginAs("alice");
  auto refused = Call("POST", "/api/v1/commands",
                      R"({"config":{"entrypoint":["true"],"resources":{"resource_pool":"gpu"}},
                          "force":true})");
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("not available to workspace"), std::string::npos) << refused.body;
  json in_team = CallJson(
      "POST", "/api/v1/commands",
      json{{"config", {{"entrypoint", {"true"}}, {"resources", {{"resource_pool", "gpu"}}}}},
           {"workspaceId", team},
           {"force", true}}
          .dump());
  EXPECT_EQ(in_team["command"]["resourcePool"], "gpu");

  // A restart on the same data rebuilds the same workspaces, roles and bindings.
  json summary_before = CallJson("GET", "/api/v1/permissions/summary");
  StartMaster(TwoPools(), "two-pools");
  LoginAs("alice");
  EXPECT_EQ(CallJson("GET", "/api/v1/permissions/summary"), summary_before);
  EXPECT_EQ(CallJson("GET", "/api/v1/resource-pools/gpu/workspace-bindings")["workspaceIds"],
            json::array({team}));
  json roles = CallJson("GET", "/api/v1/roles/search/by-user/" + std::to_string(alice));
  ASSERT_EQ(roles["roles"].size(), 1u) << roles.dump();
  EXPECT_EQ(roles["roles"][0]["role"]["name"], "Editor");
  LoginAs("admin");
  Assign(alice, 2, team, "/api/v1/roles/remove-assignments");
  Assign(alice, 2, team, "/api/v1/roles/remove-assignments", 404);
}

// Determined's ModelRegistryViewer: the workspace's models and their versions, nothing else.
TEST_F(TenancyApiTest, AModelRegistryViewerReadsTheWorkspacesModelsAndNothingElse) {
  const int32_t reader = CreateUser("reader");
  LoginAs("admin");
  const int32_t team =
      CallJson("POST", "/api/v1/workspaces", R"({"name":"team"})")["workspace"]["id"];
  CallJson("POST", "/api/v1/models", json{{"name", "resnet"}, {"workspaceId", team}}.dump());
  const std::string command = Submit(team);
  Assign(reader, 5, team);
  json roles = CallJson("POST", "/api/v1/roles/search/by-ids", R"({"roleIds":[5]})");
  EXPECT_EQ(roles["roles"][0]["role"]["name"], "ModelRegistryViewer") << roles.dump();
  EXPECT_EQ(roles["roles"][0]["role"]["permissions"].size(), 1u) << roles.dump();

  LoginAs("reader");
  json models = CallJson("GET", "/api/v1/models");
  ASSERT_EQ(models["models"].size(), 1u) << models.dump();
  EXPECT_EQ(models["models"][0]["name"], "resnet");
  EXPECT_EQ(CallJson("GET", "/api/v1/models/resnet")["model"]["name"], "resnet");
  EXPECT_EQ(Call("GET", "/api/v1/commands/" + command).status, 404) << "not the workspace's work";
  EXPECT_EQ(Call("GET", "/api/v1/workspaces/" + std::to_string(team)).status, 404);
  EXPECT_EQ(
      Call("POST", "/api/v1/models", json{{"name", "mine"}, {"workspaceId", team}}.dump()).status,
      403)
      << "reading is all it may do";
  json summary = CallJson("GET", "/api/v1/permissions/summary");
  bool holds = false;
  for (const auto& assignment : summary["assignments"]) {
    holds |= assignment["roleId"] == 5 && assignment["scopeWorkspaceIds"] == json::array({team});
  }
  EXPECT_TRUE(holds) << summary.dump();
}

}  // namespace
}  // namespace cairn::api_testing
