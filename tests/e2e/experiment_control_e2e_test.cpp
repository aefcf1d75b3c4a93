// Experiments end to end, as users steer them (experiment_fixture.h): pause and activate,
// preemption by a more important experiment, templates merged at creation, refused submissions.
#include "tests/e2e/experiment_fixture.h"

namespace cairn::testing::experiment_e2e {
namespace {

// 3. Pause while the trial runs: it checkpoints, exits and frees its slot; activate: it resumes
// from that checkpoint and completes with exactly max_length batches.
TEST_F(ExperimentEndToEnd, PauseCheckpointsAndFreesTheSlotAndActivateResumes) {
  StartCluster(1);
  Gate gate(cluster_->dir().Sub("gate"));
  TrialOptions options;
  options.name = "paused";
  options.max_length = 400;
  options.gate = &gate;
  const int64_t id = Create(SingleTrialConfig(options), Context());
  ASSERT_GT(id, 0);
  int64_t trial_id = 0;
  auto events = cluster_->FollowEventsUntil([&](const std::vector<json>& e) {
    trial_id = FirstTrial(e, id);
    return trial_id != 0 && TrainAssignedFrom(e, trial_id, 100);
  });
  ASSERT_NE(trial_id, 0);
  const std::string run = RunsOf(events, trial_id).at(0);
  EXPECT_EQ(AllocatedSlots("experiment-" + std::to_string(id)), 1);

  Reply paused = cluster_->Call("POST", "/api/v1/experiments/" + std::to_string(id) + "/pause");
  EXPECT_EQ(paused.status, 200) << paused.body.dump();
  EXPECT_EQ(Experiment(id)["state"], "STATE_PAUSED");
  gate.Release();  // the batch in progress finishes; the master answers CHECKPOINT, then EXIT

  events = cluster_->FollowEventsUntil(
      [&](const std::vector<json>& e) { return !Find(e, "taskExited", OfTask(run)).empty(); });
  auto exited = Find(events, "taskExited", OfTask(run));
  EXPECT_EQ(exited[0].payload["exitCode"], 0) << exited[0].payload.dump();
  auto saved = Find(events, "checkpointSaved", OfTrial(trial_id));
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(Int(saved[0].payload["totalBatches"]), 200);
  const std::string checkpoint_uuid = saved[0].payload["uuid"];
  EXPECT_TRUE(fs::exists(CheckpointPath(checkpoint_uuid) + "/state.json"));

  json experiment = Experiment(id);
  EXPECT_EQ(experiment["state"], "STATE_PAUSED");
  json trial = GetCurrent("/api/v1/trials/" + std::to_string(trial_id))["trial"];
  EXPECT_EQ(trial["state"], "STATE_PAUSED");
  EXPECT_EQ(trial["totalBatchesProcessed"], 200);
  json agent = GetCurrent("/api/v1/agents/agent-1");
  if (agent.contains("agent")) agent = agent["agent"];
  EXPECT_EQ(agent["cairn"]["runningAllocations"], 0) << agent.dump();
  for (const auto& [name, slot] : agent["slots"].items()) {
    EXPECT_FALSE(slot.contains("container")) << name << " is still held: " << slot.dump();
  }
  EXPECT_LE(AllocatedSlots("experiment-" + std::to_string(id)), 0)
      << "holds no slot (or is not queued)";
  EXPECT_EQ(RunsOf(cluster_->AllEvents(), trial_id).size(), 1u) << "no run while paused";

  // A master that crashes while the experiment is paused replays it whole, and resumes it.
  json paused_snapshot = Snapshot({id});
  cluster_->StopMaster(SIGKILL);
  cluster_->StartMaster();
  EXPECT_EQ(Snapshot({id}), paused_snapshot);

  Reply activated =
      cluster_->Call("POST", "/api/v1/experiments/" + std::to_string(id) + "/activate");
  EXPECT_EQ(activated.status, 200) << activated.body.dump();
  events = WaitForState(id, "EXPERIMENT_STATE_COMPLETED");
  auto runs = RunsOf(events, trial_id);
  ASSERT_EQ(runs.size(), 2u);
  auto second = Find(events, "taskStarted", OfTask(runs[1]));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(FirstTrainStart(events, trial_id, second[0].payload["allocationId"]), 200)
      << "the resumed run starts at the pause's checkpoint";
  trial = GetCurrent("/api/v1/trials/" + std::to_string(trial_id))["trial"];
  EXPECT_EQ(trial["state"], "STATE_COMPLETED");
  EXPECT_EQ(trial["restarts"], 0) << "a pause is not a failure";
  EXPECT_EQ(trial["totalBatchesProcessed"], 400);
  ExpectContiguousTraining(Workloads(trial_id), 400);
  ExpectReplayKeeps({id});
}

// 4. The priority scheduler with preemption on one slot: a priority-1 experiment preempts a
// running priority-50 one, which checkpoints, exits, waits, and then finishes where it stopped.
TEST_F(ExperimentEndToEnd, AMoreImportantExperimentPreemptsALessImportantOne) {
  StartCluster(1, kPriorityWithPreemption);
  Gate gate(cluster_->dir().Sub("gate"));
  TrialOptions low_options;
  low_options.name = "low";
  low_options.max_length = 300;
  low_options.priority = 50;
  low_options.gate = &gate;
  const int64_t low = Create(SingleTrialConfig(low_options), Context());
  ASSERT_GT(low, 0);
  int64_t low_trial = 0;
  auto events = cluster_->FollowEventsUntil([&](const std::vector<json>& e) {
    low_trial = FirstTrial(e, low);
    return low_trial != 0 && TrainAssignedFrom(e, low_trial, 100);
  });
  ASSERT_NE(low_trial, 0);
  const std::string low_task = RunsOf(events, low_trial).at(0);

  TrialOptions high_options;
  high_options.name = "high";
  high_options.max_length = 200;
  high_options.priority = 1;
  const int64_t high = Create(SingleTrialConfig(high_options), Context());
  ASSERT_GT(high, 0);
  events = cluster_->FollowEventsUntil([&](const std::vector<json>& e) {
    return !Find(e, "preemptionRequested", OfTask(low_task)).empty();
  });
  gate.Release();  // the low trial finishes its batch; the master answers CHECKPOINT, EXIT

  events = cluster_->FollowEventsUntil([&](const std::vector<json>& e) {
    return ReachedState(e, high, "EXPERIMENT_STATE_COMPLETED") &&
           ReachedState(e, low, "EXPERIMENT_STATE_COMPLETED");
  });
  const int64_t high_trial = FirstTrial(events, high);
  const std::string high_task = RunsOf(events, high_trial).at(0);

  // The low trial was preempted once, saved a checkpoint at 200 in its first allocation, and
  // released it before the high trial got the slot.
  auto preempted = Find(events, "preemptionRequested", OfTask(low_task));
  ASSERT_EQ(preempted.size(), 1u);
  const std::string first_allocation = preempted[0].payload["allocationId"];
  auto saved = Find(events, "checkpointSaved", OfTrial(low_trial));
  ASSERT_GE(saved.size(), 1u);
  EXPECT_EQ(Int(saved[0].payload["totalBatches"]), 200);
  EXPECT_EQ(saved[0].payload["allocationId"], first_allocation);
  auto released = Find(events, "allocationReleased", OfTask(low_task));
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].payload["allocationId"], first_allocation);
  EXPECT_EQ(released[0].payload["exitCode"], 0) << "it exited on the master's EXIT";
  EXPECT_EQ(RunsOf(events, low_trial).size(), 1u) << "a preempted run is re-queued, not replaced";

  auto high_assigned = Find(events, "allocationAssigned", OfTask(high_task));
  ASSERT_EQ(high_assigned.size(), 1u);
  EXPECT_GT(high_assigned[0].offset, released[0].offset);
  auto high_done = Find(events, "experimentStateChanged", [&](const json& p) {
    return OfExperiment(high)(p) && p.value("state", "") == "EXPERIMENT_STATE_COMPLETED";
  });
  auto low_assigned = Find(events, "allocationAssigned", OfTask(low_task));
  ASSERT_EQ(low_assigned.size(), 2u);
  EXPECT_GT(low_assigned[1].offset, high_done[0].offset) << "the low trial waited for the high";
  EXPECT_EQ(FirstTrainStart(events, low_trial, low_assigned[1].payload["allocationId"]), 200)
      << "the low trial resumes from its preemption checkpoint";

  // The low experiment's timeline (the web UI's, GET /api/v1/audit, admins) holds its trial's
  // preemption with the reason it recorded, and then the placement that resumed it.
  {
    net::Client client("127.0.0.1", cluster_->port());
    auto login =
        client.Request("POST", "/api/v1/auth/login", R"({"username":"admin","password":""})");
    ASSERT_TRUE(login.ok() && login->status == 200);
    const std::string admin = json::parse(login->body)["token"];
    auto timeline = client.Request(
        "GET", "/api/v1/audit?includeSystem=true&entity=experiment/" + std::to_string(low), "",
        {{"Authorization", "Bearer " + admin}});
    ASSERT_TRUE(timeline.ok() && timeline->status == 200);
    std::vector<std::string> actions;
    std::string reason;
    const json answer = json::parse(timeline->body);
    for (const auto& record : answer["records"]) {
      actions.push_back(record["action"]);
      if (record["action"] == "PreemptionRequested") {
        reason = record["event"]["preemptionRequested"].value("reason", "");
      }
    }
    EXPECT_FALSE(reason.empty()) << "the preemption says why";
    auto preemption = std::find(actions.begin(), actions.end(), "PreemptionRequested");
    ASSERT_NE(preemption, actions.end()) << timeline->body.substr(0, 2000);
    EXPECT_EQ(std::count(actions.begin(), actions.end(), "AllocationAssigned"), 2)
        << ::testing::PrintToString(actions);
    EXPECT_NE(std::find(preemption, actions.end(), "AllocationAssigned"), actions.end())
        << "the resume follows the preemption: " << ::testing::PrintToString(actions);
  }

  for (auto [experiment_id, trial_id, length] :
       {std::tuple{low, low_trial, 300}, std::tuple{high, high_trial, 200}}) {
    SCOPED_TRACE("experiment " + std::to_string(experiment_id));
    EXPECT_EQ(Experiment(experiment_id)["state"], "STATE_COMPLETED");
    json trial = GetCurrent("/api/v1/trials/" + std::to_string(trial_id))["trial"];
    EXPECT_EQ(trial["state"], "STATE_COMPLETED");
    EXPECT_EQ(trial["restarts"], 0) << "a preemption is not a failure";
    EXPECT_EQ(trial["totalBatchesProcessed"], length);
    ExpectContiguousTraining(Workloads(trial_id), length);
  }
  ExpectReplayKeeps({low, high});
}

// 6. Templates over REST, merged into an experiment once, at creation.
TEST_F(ExperimentEndToEnd, TemplatesAreMergedIntoExperimentsWhenCreated) {
  StartMaster();
  const json template_config = {
      {"description", "from the template"},
      {"max_restarts", 7},
      {"checkpoint_storage",
       {{"type", "shared_fs"}, {"host_path", CheckpointRoot()}, {"save_trial_latest", 2}}},
      {"environment", {{"environment_variables", {"FROM_TEMPLATE=1"}}}}};
  Reply created = cluster_->Call("POST", "/api/v1/templates/t1",
                                 {{"name", "t1"}, {"config", template_config}, {"workspaceId", 1}});
  ASSERT_EQ(created.status, 200) << created.body.dump();
  EXPECT_EQ(created.body["template"]["name"], "t1");
  // A template is shared configuration: only admins see the values of its variables.
  json shown_config = template_config;
  shown_config["environment"]["environment_variables"] = {"FROM_TEMPLATE=********"};
  EXPECT_EQ(created.body["template"]["config"], shown_config);
  Reply again = cluster_->Call("POST", "/api/v1/templates/t1",
                               {{"name", "t1"}, {"config", template_config}, {"workspaceId", 1}});
  EXPECT_EQ(again.status, 409) << again.body.dump();
  Reply got = cluster_->Call("GET", "/api/v1/templates/t1");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body["template"]["config"], shown_config);
  EXPECT_EQ(got.body["template"]["workspaceId"], 1);
  Reply listed = cluster_->Call("GET", "/api/v1/templates");
  ASSERT_EQ(listed.status, 200);
  ASSERT_EQ(listed.body["templates"].size(), 1u) << listed.body.dump();
  EXPECT_EQ(listed.body["templates"][0]["name"], "t1");

  const std::string config =
      "template: t1\n"
      "name: templated\n"
      "entrypoint: model_def:SpiralTrial\n"
      "hyperparameters:\n"
      "  global_batch_size: 32\n"
      "  learning_rate: 0.1\n"
      "  hidden_size: 16\n"
      "searcher:\n"
      "  name: single\n"
      "  metric: validation_loss\n"
      "  max_length:\n"
      "    batches: 100\n"
      "environment:\n"
      "  environment_variables:\n"
      "    - FROM_USER=1\n";
  Reply experiment = cluster_->CreateExperiment(config, Context(), /*activate=*/false);
  ASSERT_EQ(experiment.status, 200) << experiment.body.dump();
  const int64_t id = Int(experiment.body["experiment"]["id"]);
  json effective = Experiment(id)["config"];
  EXPECT_EQ(effective["description"], "from the template");
  EXPECT_EQ(effective["max_restarts"], 7);
  EXPECT_EQ(effective["checkpoint_storage"]["host_path"], CheckpointRoot());
  EXPECT_EQ(effective["checkpoint_storage"]["save_trial_latest"], 2);
  EXPECT_EQ(effective["environment"]["environment_variables"]["cpu"],
            json({"FROM_TEMPLATE=1", "FROM_USER=1"}));
  EXPECT_EQ(effective["name"], "templated");
  EXPECT_EQ(effective["searcher"]["max_length"]["batches"], 100);
  EXPECT_FALSE(effective.contains("template"));
  EXPECT_EQ(Experiment(id)["cairn"]["templateName"], "t1");
  EXPECT_EQ(Experiment(id)["state"], "STATE_PAUSED");

  // A later edit of the template (the CLI sends the bare config) leaves the experiment alone.
  const json patched_config = {{"description", "patched"}, {"max_restarts", 1}};
  Reply patched = cluster_->Call("PATCH", "/api/v1/templates/t1", patched_config);
  ASSERT_EQ(patched.status, 200) << patched.body.dump();
  EXPECT_EQ(cluster_->Call("GET", "/api/v1/templates/t1").body["template"]["config"],
            patched_config);
  EXPECT_EQ(Experiment(id)["config"], effective);

  Reply deleted = cluster_->Call("DELETE", "/api/v1/templates/t1");
  EXPECT_EQ(deleted.status, 200) << deleted.body.dump();
  EXPECT_EQ(cluster_->Call("GET", "/api/v1/templates/t1").status, 404);
  EXPECT_EQ(cluster_->Call("GET", "/api/v1/templates/missing").status, 404);
  EXPECT_EQ(cluster_->Call("PATCH", "/api/v1/templates/t1", patched_config).status, 404);
  EXPECT_EQ(cluster_->Call("GET", "/api/v1/templates").body["templates"].size(), 0u);
  Reply orphan = cluster_->CreateExperiment(config, Context(), /*activate=*/false);
  EXPECT_EQ(orphan.status, 404) << orphan.body.dump();
  EXPECT_EQ(Experiment(id)["config"], effective);
}

// 7. Bad submissions are refused with a message that says what is wrong, and create nothing.
TEST_F(ExperimentEndToEnd, BadSubmissionsAreRefusedAndCreateNothing) {
  StartMaster();
  const std::string context = Context();
  TrialOptions options;
  options.max_length = 100;
  const std::string good = SingleTrialConfig(options);
  const int lines = static_cast<int>(std::count(good.begin(), good.end(), '\n'));

  Reply unknown = cluster_->CreateExperiment(good + "bogus_field: 1\n", context);
  EXPECT_EQ(unknown.status, 400) << unknown.body.dump();
  const std::string unknown_message = unknown.body.value("message", "");
  EXPECT_NE(unknown_message.find("bogus_field"), std::string::npos) << unknown_message;
  EXPECT_NE(unknown_message.find("line " + std::to_string(lines + 1)), std::string::npos)
      << unknown_message;

  std::string nested = good;
  ReplaceOnce(nested, "  smaller_is_better: true\n",
              "  smaller_is_better: true\n  bogus_nested: 2\n");
  const int nested_line =
      static_cast<int>(
          std::count(good.begin(), good.begin() + good.find("  smaller_is_better"), '\n')) +
      2;
  Reply nested_unknown = cluster_->CreateExperiment(nested, context);
  EXPECT_EQ(nested_unknown.status, 400) << nested_unknown.body.dump();
  const std::string nested_message = nested_unknown.body.value("message", "");
  EXPECT_NE(nested_message.find("searcher.bogus_nested"), std::string::npos) << nested_message;
  EXPECT_NE(nested_message.find("line " + std::to_string(nested_line)), std::string::npos)
      << nested_message;

  json escaping = ModelDefinition(context);
  escaping.push_back({{"path", "../x"}, {"type", 48}, {"content", "eA=="}, {"mode", 420}});
  Reply outside =
      cluster_->Call("POST", "/api/v1/experiments",
                     {{"config", good}, {"modelDefinition", escaping}, {"activate", true}});
  EXPECT_EQ(outside.status, 400) << outside.body.dump();
  EXPECT_NE(outside.body.value("message", "").find("../x"), std::string::npos)
      << outside.body.dump();

  std::string missing = good;
  ReplaceOnce(missing, "entrypoint: gated_model:GatedSpiralTrial",
              "entrypoint: missing_module:SpiralTrial");
  Reply no_module = cluster_->CreateExperiment(missing, context);
  EXPECT_EQ(no_module.status, 400) << no_module.body.dump();
  EXPECT_NE(no_module.body.value("message", "").find("missing_module"), std::string::npos)
      << no_module.body.dump();

  json experiments = GetCurrent("/api/v1/experiments");
  EXPECT_EQ(experiments["experiments"].size(), 0u) << experiments.dump();
  EXPECT_TRUE(Find(cluster_->AllEvents(), "experimentCreated").empty());
  // The same configuration and context without the mistakes is accepted.
  EXPECT_EQ(cluster_->CreateExperiment(good, context, /*activate=*/false).status, 200);
}

// Beyond the list: the master crashes (SIGKILL) while a trial trains. The trial process keeps
// retrying its report until the restarted master (startup is replay) answers, and the run goes on
// as if nothing happened: no restart, no batch lost or trained twice.

}  // namespace
}  // namespace cairn::testing::experiment_e2e
