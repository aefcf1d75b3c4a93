// The rest of Determined's experiment surface, driven with the requests its CLI sends (the
// sequences read off `det` 0.38.1, see shared/reference/determined-rest.md) against a real
// cluster: checkpoints described, listed best first, downloaded through the master and deleted;
// an experiment's model definition downloaded; experiments renamed, labelled, archived and
// deleted; a trial killed; a finished experiment continued; trial task ids in the shape
// `det task logs` accepts.
#include <regex>

#include "base/encoding.h"
#include "tests/e2e/experiment_fixture.h"

namespace cairn::testing::experiment_e2e {
namespace {

using net::ClientResponse;

// Extracts a .tar.gz held in memory into `directory` with the system's tar; its exit code.
int ExtractTarGz(const TempDir& dir, const std::string& archive, const std::string& directory) {
  const std::string file = dir.Sub("download.tgz");
  std::ofstream(file, std::ios::binary) << archive;
  fs::create_directories(directory);
  return RunToEnd({"tar", "-xzf", file, "-C", directory}, std::chrono::seconds(30)).exit_code;
}

class ExperimentSurfaceTest : public ExperimentEndToEnd {
 protected:
  // A completed single-trial experiment of `batches` batches; its id.
  int64_t CompletedExperiment(const std::string& name, int batches = 200) {
    TrialOptions options;
    options.name = name;
    options.max_length = batches;
    int64_t id = Create(SingleTrialConfig(options), Context());
    WaitForState(id, "EXPERIMENT_STATE_COMPLETED");
    return id;
  }

  ClientResponse Raw(const std::string& method, const std::string& target) {
    net::Client client = cluster_->Client();
    auto response = client.Request(method, target);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : ClientResponse{};
  }
};

TEST_F(ExperimentSurfaceTest, CheckpointsCarryWhatTheCliNeedsAndDownloadThroughTheMaster) {
  StartCluster(1);
  const int64_t id = CompletedExperiment("checkpoints");
  // det experiment list-checkpoints --best 1: sorted by the searcher metric, best first.
  json listed = GetCurrent("/api/v1/experiments/" + std::to_string(id) +
                           "/checkpoints?limit=1&sortByAttr=SORT_BY_SEARCHER_METRIC");
  ASSERT_EQ(listed["checkpoints"].size(), 1u) << listed.dump();
  const json& best = listed["checkpoints"][0];
  const std::string uuid = best["uuid"];
  // The CLI asserts experimentConfig and experimentId, reads the storage from the config and
  // the searcher metric from the validation metrics.
  EXPECT_EQ(best["training"]["experimentId"], id);
  EXPECT_EQ(best["training"]["experimentConfig"]["checkpoint_storage"]["type"], "shared_fs");
  EXPECT_TRUE(best["training"]["hparams"].is_object());
  const std::string metric = best["training"]["experimentConfig"]["searcher"]["metric"];
  EXPECT_TRUE(best["training"]["validationMetrics"]["avgMetrics"].contains(metric)) << best.dump();

  // det checkpoint describe UUID.
  Reply described = cluster_->Call("GET", "/api/v1/checkpoints/" + uuid);
  ASSERT_EQ(described.status, 200) << described.body.dump();
  EXPECT_EQ(described.body["checkpoint"]["uuid"], uuid);
  EXPECT_EQ(described.body["checkpoint"]["state"], "STATE_COMPLETED");
  EXPECT_EQ(described.body["checkpoint"]["training"]["trialId"], best["training"]["trialId"]);
  EXPECT_EQ(
      cluster_->Call("GET", "/api/v1/checkpoints/00000000-0000-4000-8000-000000000000").status,
      404);
  EXPECT_EQ(cluster_->Call("GET", "/api/v1/checkpoints/not-a-uuid").status, 404);

  // det checkpoint download --mode master: a tar.gz of the checkpoint's directory.
  ClientResponse download = Raw("GET", "/checkpoints/" + uuid);
  ASSERT_EQ(download.status, 200);
  EXPECT_EQ(download.headers["content-type"], "application/gzip");
  const std::string out = cluster_->dir().Sub("downloaded");
  ASSERT_EQ(ExtractTarGz(cluster_->dir(), download.body, out), 0);
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(CheckpointPath(uuid))) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = fs::relative(entry.path(), CheckpointPath(uuid)).string();
    EXPECT_EQ(ReadFile(out + "/" + relative), ReadFile(entry.path().string())) << relative;
    ++files;
  }
  EXPECT_GT(files, 0);

  // det experiment download-model-def: the context as base64 of a tar.gz.
  Reply model_def =
      cluster_->Call("GET", "/api/v1/experiments/" + std::to_string(id) + "/model_def");
  ASSERT_EQ(model_def.status, 200);
  auto archive = Base64Decode(model_def.body["b64Tgz"].get<std::string>());
  ASSERT_TRUE(archive.ok());
  ASSERT_EQ(ExtractTarGz(cluster_->dir(), *archive, cluster_->dir().Sub("model_def")), 0);
  EXPECT_EQ(ReadFile(cluster_->dir().Sub("model_def/model_def.py")),
            ReadFile(Context() + "/model_def.py"));

  // det checkpoint delete UUID: recorded, then the files go and the download says so.
  Reply deleted = cluster_->Call("DELETE", "/api/v1/checkpoints",
                                 json{{"checkpointUuids", json::array({uuid})}});
  ASSERT_EQ(deleted.status, 200) << deleted.body.dump();
  EXPECT_EQ(GetCurrent("/api/v1/checkpoints/" + uuid)["checkpoint"]["state"], "STATE_DELETED");
  EXPECT_TRUE(WaitUntilRemoved({CheckpointPath(uuid)}, std::chrono::seconds(30)));
  EXPECT_EQ(Raw("GET", "/checkpoints/" + uuid).status, 404);
  EXPECT_EQ(cluster_
                ->Call("DELETE", "/api/v1/checkpoints",
                       json{{"checkpointUuids", json::array({"not-a-uuid"})}})
                .status,
            404);
}

TEST_F(ExperimentSurfaceTest, ExperimentsAreRenamedLabelledArchivedAndDeleted) {
  StartCluster(1);
  const int64_t id = CompletedExperiment("to-edit");
  const std::string path = "/api/v1/experiments/" + std::to_string(id);
  // det experiment set name / set description / label add: the CLI reads the experiment and
  // PATCHes its v1PatchExperiment fields, all of them, with one changed.
  json shown = GetCurrent(path)["experiment"];
  json patch = {{"id", id},
                {"name", "renamed"},
                {"description", shown["description"]},
                {"labels", shown["labels"]},
                {"notes", shown["notes"]}};
  ASSERT_EQ(cluster_->Call("PATCH", path, patch).status, 200);
  patch["description"] = "a better description";
  patch["labels"] = json::array({"baseline", "v2"});
  ASSERT_EQ(cluster_->Call("PATCH", path, patch).status, 200);
  json edited = GetCurrent(path)["experiment"];
  EXPECT_EQ(edited["name"], "renamed");
  EXPECT_EQ(edited["description"], "a better description");
  EXPECT_EQ(edited["labels"], json::array({"baseline", "v2"}));
  EXPECT_EQ(cluster_->Call("PATCH", path, {{"labels", "not-a-list"}}).status, 400);
  // All or nothing: a refused job change leaves the name as it was.
  EXPECT_EQ(
      cluster_->Call("PATCH", path, {{"name", "half"}, {"resources", {{"resourcePool", "nope"}}}})
          .status,
      409);
  EXPECT_EQ(GetCurrent(path)["experiment"]["name"], "renamed");
  EXPECT_EQ(cluster_->Call("PATCH", path, {{"name", ""}}).status, 400);

  // det experiment archive: gone from the default list (archived=false), back on unarchive.
  auto listed_ids = [&](const std::string& query) {
    std::set<int64_t> ids;
    const json listed = GetCurrent("/api/v1/experiments?limit=200&offset=0" + query);
    for (const auto& e : listed["experiments"]) ids.insert(Int(e["id"]));
    return ids;
  };
  ASSERT_EQ(cluster_->Call("POST", path + "/archive").status, 200);
  EXPECT_TRUE(GetCurrent(path)["experiment"]["archived"].get<bool>());
  EXPECT_FALSE(listed_ids("&archived=false").count(id));
  EXPECT_TRUE(listed_ids("&archived=true").count(id));
  ASSERT_EQ(cluster_->Call("POST", path + "/unarchive").status, 200);
  EXPECT_TRUE(listed_ids("&archived=false").count(id));

  // det experiment delete --yes: its checkpoints go with it, and it is not found any more.
  const std::string uuid = GetCurrent(path + "/checkpoints")["checkpoints"][0]["uuid"];
  ASSERT_EQ(cluster_->Call("DELETE", path).status, 200);
  EXPECT_EQ(cluster_->Call("GET", path).status, 404);
  EXPECT_FALSE(listed_ids("").count(id));
  EXPECT_TRUE(WaitUntilRemoved({CheckpointPath(uuid)}, std::chrono::seconds(30)));
  EXPECT_EQ(cluster_->Call("POST", path + "/archive").status, 404);
  // Deletion is history too: a rebuild from the log agrees.
  cluster_->ExpectRebuiltProjectionsEqualLive();
}

TEST_F(ExperimentSurfaceTest, ARunningExperimentCannotBeArchivedOrDeletedAndATrialCanBeKilled) {
  StartCluster(1);
  Gate gate(cluster_->dir().Sub("gate"));
  TrialOptions options;
  options.name = "held";
  options.gate = &gate;
  const int64_t id = Create(SingleTrialConfig(options), Context());
  const std::string path = "/api/v1/experiments/" + std::to_string(id);
  auto events = cluster_->FollowEventsUntil(
      [&](const std::vector<json>& seen) { return !Find(seen, "taskStarted").empty(); });
  const json trial = GetCurrent(path + "/trials")["trials"][0];
  const int64_t trial_id = Int(trial["id"]);
  EXPECT_EQ(cluster_->Call("POST", path + "/archive").status, 409);
  EXPECT_EQ(cluster_->Call("DELETE", path).status, 409);

  // The trial's task id has the shape `det task logs` insists on: <experiment id>.<uuid>.
  const std::string task_id =
      Find(events, "taskSubmitted", OfTrial(trial_id)).at(0).payload["taskId"];
  EXPECT_TRUE(std::regex_match(
      task_id,
      std::regex(R"(^[0-9]+\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)")))
      << task_id;
  EXPECT_EQ(cluster_->Call("GET", "/api/v1/tasks/" + task_id).status, 200);

  // det trial kill: the run is killed, the trial ends CANCELED, and the experiment ends.
  ASSERT_EQ(cluster_->Call("POST", "/api/v1/trials/" + std::to_string(trial_id) + "/kill").status,
            200);
  events = cluster_->FollowEventsUntil([&](const std::vector<json>& seen) {
    return !Find(seen, "trialEnded", OfTrial(trial_id)).empty() &&
           ReachedState(seen, id, "EXPERIMENT_STATE_COMPLETED");
  });
  EXPECT_EQ(Find(events, "trialEnded", OfTrial(trial_id)).at(0).payload["state"],
            "EXPERIMENT_STATE_CANCELED");
  EXPECT_EQ(Find(events, "trialKillRequested", OfTrial(trial_id)).size(), 1u);
  EXPECT_EQ(cluster_->Call("POST", "/api/v1/trials/999999/kill").status, 404);
}

TEST_F(ExperimentSurfaceTest, AFinishedExperimentContinuesFromItsLatestCheckpoint) {
  StartCluster(1);
  const int64_t id = CompletedExperiment("continued", 200);
  const int64_t trial_id =
      Int(GetCurrent("/api/v1/experiments/" + std::to_string(id) + "/trials")["trials"][0]["id"]);
  // det experiment continue ID: nothing left to train at the same length.
  Reply same = cluster_->Call("POST", "/api/v1/experiments/continue",
                              {{"id", id}, {"overrideConfig", "{}\n"}});
  EXPECT_EQ(same.status, 409) << same.body.dump();
  // What runs, with which hyperparameters, secrets and checkpoints, stays as it was.
  for (const char* override_yaml :
       {"entrypoint: other:Trial\n", "environment:\n  environment_variables: [A=1]\n",
        "checkpoint_storage:\n  type: shared_fs\n  host_path: /tmp\n"}) {
    Reply refused = cluster_->Call("POST", "/api/v1/experiments/continue",
                                   {{"id", id}, {"overrideConfig", override_yaml}});
    EXPECT_EQ(refused.status, 400) << override_yaml << refused.body.dump();
  }
  // det experiment continue ID --config searcher.max_length.batches=400.
  Reply continued = cluster_->Call(
      "POST", "/api/v1/experiments/continue",
      {{"id", id}, {"overrideConfig", "searcher:\n  max_length:\n    batches: 400\n"}});
  ASSERT_EQ(continued.status, 200) << continued.body.dump();
  auto events = cluster_->FollowEventsUntil([&](const std::vector<json>& seen) {
    return Find(seen, "experimentStateChanged", [&](const json& p) {
             return Int(p["experimentId"]) == id && p["state"] == "EXPERIMENT_STATE_COMPLETED";
           }).size() == 2;
  });
  // The second run resumed at batch 200, from the checkpoint the first one left.
  EXPECT_TRUE(TrainAssignedFrom(events, trial_id, 200));
  EXPECT_FALSE(TrainAssignedFrom(events, trial_id, 0) &&
               TrainsAssigned(events, trial_id).size() > 0 &&
               Int(TrainsAssigned(events, trial_id).back().payload["startBatch"]) == 0);
  json trial = GetCurrent("/api/v1/trials/" + std::to_string(trial_id))["trial"];
  EXPECT_EQ(Int(trial["totalBatchesProcessed"]), 400);
  EXPECT_EQ(trial["state"], "STATE_COMPLETED");
  EXPECT_EQ(
      cluster_
          ->Call("POST", "/api/v1/experiments/continue", {{"id", 999999}, {"overrideConfig", ""}})
          .status,
      404);
}

// det cmd run --template NAME -c DIR cat hello.txt: the template's settings apply and the
// directory's files are in the command's working directory.
TEST_F(ExperimentSurfaceTest, CommandsTakeTemplatesAndUploadedFiles) {
  StartCluster(1);
  ASSERT_EQ(cluster_
                ->Call("POST", "/api/v1/templates/greeting",
                       {{"name", "greeting"},
                        {"config",
                         {{"description", "from the template"},
                          {"environment", {{"environment_variables", {"GREETING=hello"}}}}}},
                        {"workspaceId", 1}})
                .status,
            200);
  const std::string directory = cluster_->dir().Sub("command-context");
  fs::create_directories(directory + "/sub");
  std::ofstream(directory + "/sub/hello.txt") << "uploaded file\n";
  Reply launched = cluster_->Call(
      "POST", "/api/v1/commands",
      {{"config", {{"entrypoint", {"sh", "-c", "echo $GREETING; cat sub/hello.txt"}}}},
       {"template_name", "greeting"},
       {"files", ModelDefinition(directory)}});
  ASSERT_EQ(launched.status, 200) << launched.body.dump();
  EXPECT_EQ(launched.body["command"]["description"], "from the template");
  const std::string text = cluster_->FollowLogs(launched.body["command"]["id"]);
  EXPECT_NE(text.find("hello\n"), std::string::npos) << text;
  EXPECT_NE(text.find("uploaded file\n"), std::string::npos) << text;
  EXPECT_EQ(cluster_
                ->Call("POST", "/api/v1/commands",
                       {{"config", {{"entrypoint", {"true"}}}}, {"template_name", "missing"}})
                .status,
            404);
}

// The registry's promise: a model version registered from a grid experiment's best checkpoint
// survives the experiment's deletion and a rebuild of every projection, and its files can still
// be downloaded (det model register-version, det experiment delete, det checkpoint download).
TEST_F(ExperimentSurfaceTest, ARegisteredCheckpointOutlivesItsExperiment) {
  StartCluster(4);
  std::string config = ReadFile(ExamplePath("spiral-mlp") + "/grid.yaml");
  ReplaceOnce(config, "host_path: /tmp", "host_path: " + CheckpointRoot());
  const int64_t id = Create(config, ExamplePath("spiral-mlp"));
  WaitForState(id, "EXPERIMENT_STATE_COMPLETED");
  const std::string path = "/api/v1/experiments/" + std::to_string(id);
  const json listed = GetCurrent(path + "/checkpoints?sortByAttr=SORT_BY_SEARCHER_METRIC");
  ASSERT_EQ(listed["checkpoints"].size(), 6u) << listed.dump();
  const std::string best = listed["checkpoints"][0]["uuid"];
  std::vector<std::string> others;
  for (size_t i = 1; i < listed["checkpoints"].size(); ++i) {
    others.push_back(CheckpointPath(listed["checkpoints"][i]["uuid"]));
  }
  ASSERT_EQ(cluster_->Call("POST", "/api/v1/models", {{"name", "spiral"}}).status, 200);
  Reply registered = cluster_->Call("POST", "/api/v1/models/spiral/versions",
                                    {{"modelName", "spiral"}, {"checkpointUuid", best}});
  ASSERT_EQ(registered.status, 200) << registered.body.dump();

  // A registered checkpoint is not deleted by hand; the experiment's deletion leaves it.
  EXPECT_EQ(
      cluster_
          ->Call("DELETE", "/api/v1/checkpoints", json{{"checkpointUuids", json::array({best})}})
          .status,
      409);
  ASSERT_EQ(cluster_->Call("DELETE", path).status, 200);
  EXPECT_TRUE(WaitUntilRemoved(others, std::chrono::seconds(30)));
  EXPECT_TRUE(fs::exists(CheckpointPath(best)));
  auto version_of_model = [&] {
    return GetCurrent("/api/v1/models/spiral/versions")["modelVersions"][0]["checkpoint"];
  };
  const json before = version_of_model();
  EXPECT_EQ(before["uuid"], best);
  EXPECT_EQ(before["state"], "STATE_COMPLETED");
  EXPECT_EQ(before["training"]["experimentConfig"]["searcher"]["name"], "grid");

  cluster_->ExpectRebuiltProjectionsEqualLive();  // stops the master
  cluster_->StartMaster();
  EXPECT_EQ(version_of_model(), before);
  EXPECT_EQ(cluster_->Call("GET", path).status, 404);
  ClientResponse download = Raw("GET", "/checkpoints/" + best);
  ASSERT_EQ(download.status, 200);
  ASSERT_EQ(ExtractTarGz(cluster_->dir(), download.body, cluster_->dir().Sub("best")), 0);
  EXPECT_EQ(ReadFile(cluster_->dir().Sub("best/state.json")),
            ReadFile(CheckpointPath(best) + "/state.json"));
}

}  // namespace
}  // namespace cairn::testing::experiment_e2e
