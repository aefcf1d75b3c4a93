// The model registry over real HTTP: each `det model ...` command's request sequence as
// Determined's CLI (0.38.1) sends it, checking the keys its generated client requires (a missing
// one is a KeyError in the CLI) and what it prints; then archive, moves, deletion, who sees and
// changes what, and the errors bad input gets.
#include <gtest/gtest.h>

#include "tests/api/api_fixture.h"

namespace cairn::api_testing {
namespace {

const std::vector<std::string> kModelKeys = {
    "id",       "name",        "archived", "creationTime", "lastUpdatedTime",
    "metadata", "numVersions", "userId",   "username",     "workspaceId"};
const std::vector<std::string> kVersionKeys = {"checkpoint",      "creationTime", "id",
                                               "lastUpdatedTime", "model",        "version"};

void ExpectKeys(const json& object, const std::vector<std::string>& keys, const std::string& what) {
  ASSERT_TRUE(object.is_object()) << what << ": " << object.dump();
  for (const auto& key : keys) {
    EXPECT_TRUE(object.contains(key) && !object[key].is_null())
        << what << " lacks required key '" << key << "': " << object.dump();
  }
}

// What the CLI's read_paginated asserts, and that the loop ends.
void ExpectLastPage(const json& answer, size_t total) {
  ExpectKeys(answer["pagination"], {"endIndex", "total"}, "pagination");
  EXPECT_EQ(answer["pagination"]["total"], total);
  EXPECT_EQ(answer["pagination"]["endIndex"], total);
}

// A v1ModelVersion as `det model describe/list-versions/register-version` render it: the
// checkpoint's trial, batch count ("steps_completed") and validation metrics, and the training
// metadata Determined's Checkpoint asserts (experimentConfig, experimentId) when it names a trial.
void ExpectRenderableVersion(const json& version, const std::string& uuid) {
  ExpectKeys(version, kVersionKeys, "v1ModelVersion");
  ExpectKeys(version["model"], kModelKeys, "v1ModelVersion.model");
  const json& checkpoint = version["checkpoint"];
  ExpectKeys(checkpoint, {"uuid", "state", "resources", "metadata", "training"}, "v1Checkpoint");
  EXPECT_EQ(checkpoint["uuid"], uuid);
  EXPECT_EQ(checkpoint["state"], "STATE_COMPLETED");
  EXPECT_EQ(checkpoint["metadata"]["steps_completed"], 100);
  const json& training = checkpoint["training"];
  ExpectKeys(training, {"trialId", "experimentId", "experimentConfig", "hparams"}, "training");
  EXPECT_FALSE(training["experimentConfig"].empty()) << training.dump();
  EXPECT_EQ(training["hparams"]["lr"], 0.1);
  EXPECT_EQ(training["validationMetrics"]["avgMetrics"]["loss"], 0.4);
}

class ModelsApiTest : public ApiTest {
 protected:
  // A checkpoint of a finished trial, saved through the harness's protocol as a real trial
  // process would: an agent runs the trial, which trains, validates and checkpoints.
  std::string SaveCheckpoint(const std::string& uuid = "0b9d0000-0000-4000-8000-000000000001") {
    RegisterAgent("a1", 1, "inc-1");
    CallJson("POST", "/api/v1/experiments", CreateExperimentBody(/*activate=*/true).dump());
    std::string allocation, task;
    for (const auto& event : Events()) {
      if (event.contains("allocationAssigned")) {
        allocation = event["allocationAssigned"]["allocationId"];
        task = event["allocationAssigned"]["taskId"];
      }
    }
    EXPECT_FALSE(allocation.empty()) << "the trial's run was not placed";
    CallJson("POST", "/api/v1/allocations/" + allocation + "/started",
             json{{"taskId", task}, {"agentId", "a1"}, {"pid", 7}}.dump());
    json completed = nullptr;
    for (int sequence = 0; sequence < 10; ++sequence) {
      json answer = CallJson("POST", "/api/v1/allocations/" + allocation + "/workloads",
                             json{{"sequence", sequence}, {"completed", completed}}.dump());
      const std::string kind = answer["workload"]["kind"];
      if (kind == "TRAIN") {
        completed = {{"kind", "TRAIN"}, {"batches", 100}, {"metrics", {{"loss", 0.5}}}};
      } else if (kind == "VALIDATE") {
        completed = {{"kind", "VALIDATE"}, {"metrics", {{"loss", 0.4}}}};
      } else if (kind == "CHECKPOINT") {
        completed = {{"kind", "CHECKPOINT"},
                     {"uuid", uuid},
                     {"batches", 100},
                     {"sizeBytes", 10},
                     {"resources", {{"state.json", 10}}},
                     {"metadata", {{"steps_completed", 100}}}};
      } else {
        break;
      }
    }
    return uuid;
  }

  // `det model create NAME` (the client sends every optional field as null).
  json CreateModel(const std::string& name, const std::string& workspace_name = "") {
    json body = {{"name", name},
                 {"description", nullptr},
                 {"labels", nullptr},
                 {"metadata", nullptr},
                 {"notes", nullptr},
                 {"workspaceName", workspace_name.empty() ? json() : json(workspace_name)}};
    return CallJson("POST", "/api/v1/models", body.dump())["model"];
  }

  // `det model register-version NAME UUID` through the client's Model.register_version.
  json Register(const std::string& name, const std::string& uuid, int expected_status = 200) {
    return CallJson("POST", "/api/v1/models/" + name + "/versions",
                    json{{"checkpointUuid", uuid}, {"modelName", name}}.dump(), expected_status);
  }
};

TEST_F(ModelsApiTest, DetModelCreateListAndDescribeWithoutVersions) {
  json created = CreateModel("m1");
  ExpectKeys(created, kModelKeys, "create");
  EXPECT_EQ(created["name"], "m1");
  EXPECT_EQ(created["username"], "determined");
  EXPECT_EQ(created["workspaceId"], 1);
  EXPECT_EQ(created["numVersions"], 0);
  EXPECT_EQ(created["archived"], false);
  EXPECT_EQ(created["metadata"], json::object());
  // parse_protobuf_timestamp: RFC 3339 with a Z.
  EXPECT_EQ(created["creationTime"].get<std::string>().back(), 'Z');
  CreateModel("m2");

  // `det model list`
  json listed = CallJson(
      "GET", "/api/v1/models?offset=0&orderBy=ORDER_BY_ASC&sortBy=SORT_BY_LAST_UPDATED_TIME");
  ASSERT_EQ(listed["models"].size(), 2u);
  ExpectKeys(listed["models"][0], kModelKeys, "list entry");
  EXPECT_EQ(listed["models"][0]["name"], "m1");
  ExpectLastPage(listed, 2);
  json descending =
      CallJson("GET", "/api/v1/models?offset=0&orderBy=ORDER_BY_DESC&sortBy=SORT_BY_NAME");
  EXPECT_EQ(descending["models"][0]["name"], "m2");
  json page = CallJson("GET", "/api/v1/models?offset=1&limit=1&sortBy=SORT_BY_NAME");
  ASSERT_EQ(page["models"].size(), 1u);
  EXPECT_EQ(page["models"][0]["name"], "m2");

  // `det model describe m1`: the model by name (or id), and its latest version: none.
  json described = CallJson("GET", "/api/v1/models/m1");
  ExpectKeys(described["model"], kModelKeys, "describe");
  EXPECT_EQ(CallJson("GET", "/api/v1/models/" + std::to_string(created["id"].get<int>()))["model"],
            described["model"]);
  json latest = CallJson(
      "GET", "/api/v1/models/m1/versions?limit=1&orderBy=ORDER_BY_DESC&sortBy=SORT_BY_VERSION");
  ExpectKeys(latest, {"model", "modelVersions", "pagination"}, "versions");
  EXPECT_TRUE(latest["modelVersions"].empty());

  // Names are unique; the CLI shows the error's message.
  json taken = CallJson("POST", "/api/v1/models", json{{"name", "m1"}}.dump(), 409);
  EXPECT_NE(taken["message"].get<std::string>().find("already exists"), std::string::npos);
  CallJson("GET", "/api/v1/models/nope", "", 404);
}

TEST_F(ModelsApiTest, DetModelRegisterVersionListVersionsAndDescribeAVersion) {
  const std::string uuid = SaveCheckpoint();
  CreateModel("m1");
  // `det model register-version m1 UUID`: GET the model, then POST the version.
  CallJson("GET", "/api/v1/models/m1");
  json registered = Register("m1", uuid)["modelVersion"];
  ExpectRenderableVersion(registered, uuid);
  EXPECT_EQ(registered["version"], 1);
  EXPECT_EQ(registered["model"]["numVersions"], 1);
  // --json: by the model's id, with only the uuid.
  const int model_id = registered["model"]["id"];
  json second = CallJson("POST", "/api/v1/models/" + std::to_string(model_id) + "/versions",
                         json{{"checkpointUuid", uuid}}.dump())["modelVersion"];
  EXPECT_EQ(second["version"], 2);

  // `det model list-versions m1`: the model, then every version, newest first.
  json versions = CallJson("GET", "/api/v1/models/m1/versions?offset=0&orderBy=ORDER_BY_DESC");
  ASSERT_EQ(versions["modelVersions"].size(), 2u);
  EXPECT_EQ(versions["modelVersions"][0]["version"], 2);
  ExpectRenderableVersion(versions["modelVersions"][1], uuid);
  ExpectLastPage(versions, 2);
  EXPECT_EQ(versions["model"]["numVersions"], 2);
  json by_id = CallJson("GET", "/api/v1/models/" + std::to_string(model_id) + "/versions");
  EXPECT_EQ(by_id["modelVersions"][0]["version"], 1);

  // `det model describe m1` (latest) and `--version 1`.
  json latest = CallJson(
      "GET", "/api/v1/models/m1/versions?limit=1&orderBy=ORDER_BY_DESC&sortBy=SORT_BY_VERSION");
  ASSERT_EQ(latest["modelVersions"].size(), 1u);
  EXPECT_EQ(latest["modelVersions"][0]["version"], 2);
  json first = CallJson("GET", "/api/v1/models/m1/versions/1")["modelVersion"];
  ExpectRenderableVersion(first, uuid);

  // ModelVersion.set_name / set_notes, and deletion.
  json patched = CallJson("PATCH", "/api/v1/models/m1/versions/1",
                          json{{"name", "first"}, {"notes", "the baseline"}}.dump());
  EXPECT_EQ(patched["modelVersion"]["name"], "first");
  EXPECT_EQ(patched["modelVersion"]["notes"], "the baseline");
  CallJson("PATCH", "/api/v1/models/m1/versions/1", json{{"checkpoint", {{"uuid", "x"}}}}.dump(),
           501);
  CallJson("DELETE", "/api/v1/models/m1/versions/2");
  CallJson("GET", "/api/v1/models/m1/versions/2", "", 404);
  EXPECT_EQ(CallJson("GET", "/api/v1/models/m1")["model"]["numVersions"], 1);

  // Bad references get clear errors.
  json unknown = Register("m1", "no-such-checkpoint", 404);
  EXPECT_NE(unknown["message"].get<std::string>().find("checkpoint no-such-checkpoint"),
            std::string::npos);
  Register("nope", uuid, 404);
  CallJson("POST", "/api/v1/models/m1/versions", "{}", 400);
  CallJson("GET", "/api/v1/models/m1/versions/abc", "", 400);
}

TEST_F(ModelsApiTest, UpdateArchiveMoveAndDelete) {
  const std::string uuid = SaveCheckpoint();
  CreateModel("m1");
  // Model.set_description, set_labels, add_metadata: PATCH with one field each.
  json patched =
      CallJson("PATCH", "/api/v1/models/m1", json{{"description", "digits"}}.dump())["model"];
  EXPECT_EQ(patched["description"], "digits");
  CallJson("PATCH", "/api/v1/models/m1", json{{"labels", {"vision", "prod"}}}.dump());
  patched = CallJson("PATCH", "/api/v1/models/m1",
                     json{{"metadata", {{"framework", "torch"}}}}.dump())["model"];
  EXPECT_EQ(patched["labels"], json({"vision", "prod"}));
  EXPECT_EQ(patched["metadata"]["framework"], "torch");
  EXPECT_EQ(patched["description"], "digits");
  CallJson("PATCH", "/api/v1/models/m1", json{{"metadata", "text"}}.dump(), 400);
  CallJson("PATCH", "/api/v1/models/m1", json{{"owner", "me"}}.dump(), 400);
  EXPECT_EQ(CallJson("GET", "/api/v1/model/labels")["labels"], json({"prod", "vision"}));

  // Model.archive: hidden from archived=false lists, and no new versions until unarchived.
  CallJson("POST", "/api/v1/models/m1/archive");
  EXPECT_EQ(CallJson("GET", "/api/v1/models/m1")["model"]["archived"], true);
  EXPECT_TRUE(CallJson("GET", "/api/v1/models?archived=false")["models"].empty());
  json refused = Register("m1", uuid, 409);
  EXPECT_NE(refused["message"].get<std::string>().find("archived"), std::string::npos);
  CallJson("POST", "/api/v1/models/m1/unarchive");
  Register("m1", uuid);

  // `det model move m1 -w team` (PATCH workspaceName) and the --workspace-names filter.
  const int me = CallJson("GET", "/api/v1/me")["user"]["id"];
  LoginAs("admin");
  const int team = CallJson("POST", "/api/v1/workspaces", R"({"name":"team"})")["workspace"]["id"];
  json editor = {{"role", {{"roleId", 2}}}, {"scopeWorkspaceId", team}};  // 2: Editor
  CallJson("POST", "/api/v1/roles/add-assignments",
           json{{"userRoleAssignments", {{{"userId", me}, {"roleAssignment", editor}}}},
                {"groupRoleAssignments", json::array()}}
               .dump());
  LoginAs("determined");
  json moved = CallJson("PATCH", "/api/v1/models/m1", json{{"workspaceName", "team"}}.dump());
  EXPECT_EQ(moved["model"]["workspaceId"], team);
  EXPECT_EQ(CallJson("GET", "/api/v1/models?workspaceNames=team")["models"].size(), 1u);
  EXPECT_TRUE(CallJson("GET", "/api/v1/models?workspaceNames=Uncategorized")["models"].empty());
  CallJson("PATCH", "/api/v1/models/m1", json{{"workspaceName", "nowhere"}}.dump(), 404);

  // Renamed, then `det model delete`: its versions go with it and the name is free again.
  CallJson("PATCH", "/api/v1/models/m1", json{{"name", "mnist"}}.dump());
  CallJson("GET", "/api/v1/models/m1", "", 404);
  CallJson("DELETE", "/api/v1/models/mnist");
  CallJson("GET", "/api/v1/models/mnist", "", 404);
  EXPECT_TRUE(CallJson("GET", "/api/v1/models")["models"].empty());
  CreateModel("mnist");
}

TEST_F(ModelsApiTest, UsersSeeModelsOfWorkspacesTheyViewAndChangeOnlyTheirOwn) {
  const std::string uuid = SaveCheckpoint();
  LoginAs("admin");
  CallJson("POST", "/api/v1/workspaces", R"({"name":"private"})");
  CreateModel("hidden", "private");
  json admins = CreateModel("admins");
  Register("admins", uuid);
  LoginAs("determined");
  // The private workspace's model does not exist for determined.
  json listed = CallJson("GET", "/api/v1/models");
  ASSERT_EQ(listed["models"].size(), 1u);
  EXPECT_EQ(listed["models"][0]["name"], "admins");
  CallJson("GET", "/api/v1/models/hidden", "", 404);
  CallJson("DELETE", "/api/v1/models/hidden", "", 404);
  CallJson("POST", "/api/v1/models", json{{"name", "x"}, {"workspaceName", "private"}}.dump(), 404);
  // The admin's model is visible but not determined's to change or delete.
  json refused = CallJson("DELETE", "/api/v1/models/admins", "", 403);
  EXPECT_NE(refused["message"].get<std::string>().find("delete model admins"), std::string::npos);
  CallJson("POST", "/api/v1/models/admins/archive", "", 403);
  CallJson("PATCH", "/api/v1/models/admins/versions/1", json{{"name", "mine"}}.dump(), 403);
  CallJson("DELETE", "/api/v1/models/admins/versions/1", "", 403);
  // An Editor of Uncategorized may add a version of it, though.
  EXPECT_EQ(Register("admins", uuid)["modelVersion"]["version"], 2);
}

TEST_F(ModelsApiTest, RegistryEventsReachOnlyReadersOfTheModelsWorkspace) {
  LoginAs("admin");
  CallJson("POST", "/api/v1/workspaces", R"({"name":"private"})");
  CreateModel("hidden", "private");
  CreateModel("open");
  LoginAs("determined");
  std::vector<std::string> seen;
  for (const auto& event : EventsAs(token_)) {
    if (event.contains("modelCreated")) seen.push_back(event["modelCreated"]["name"]);
  }
  EXPECT_EQ(seen, std::vector<std::string>{"open"});
}

}  // namespace
}  // namespace cairn::api_testing
