// Experiments end to end (experiment_fixture.h): a grid search to completion with checkpoint
// collection, population-based training, a SIGKILLed trial that restarts from its checkpoint, and a
// master crash mid-trial.
#include "tests/e2e/experiment_fixture.h"

namespace cairn::testing::experiment_e2e {
namespace {

// 1 (and 5). grid.yaml: 3 learning rates x 2 widths, 300 batches each, a checkpoint every 100.
TEST_F(ExperimentEndToEnd, GridSearchCompletesEveryTrialAndCollectsOldCheckpoints) {
  StartCluster(4);
  constexpr int64_t kLength = 300;
  std::string config = ReadFile(ExamplePath("spiral-mlp") + "/grid.yaml");
  ReplaceOnce(config, "host_path: /tmp", "host_path: " + CheckpointRoot());
  config += "min_checkpoint_period:\n  batches: 100\n";
  const int64_t id = Create(config, ExamplePath("spiral-mlp"));
  ASSERT_GT(id, 0);
  WaitForState(id, "EXPERIMENT_STATE_COMPLETED");

  json experiment = Experiment(id);
  EXPECT_EQ(experiment["state"], "STATE_COMPLETED");
  EXPECT_EQ(experiment["numTrials"], 6);
  EXPECT_EQ(experiment["progress"], 1.0);
  json trials = Trials(id);
  ASSERT_EQ(trials.size(), 6u);
  std::multiset<std::pair<int, int>> grid;  // (log10(learning_rate), hidden_size)
  std::vector<std::string> kept, collected;
  for (const auto& trial : trials) {
    const int64_t trial_id = trial["id"];
    SCOPED_TRACE("trial " + std::to_string(trial_id));
    const json& hparams = trial["hparams"];
    const double learning_rate = hparams["learning_rate"];
    const int exponent = static_cast<int>(std::lround(std::log10(learning_rate)));
    EXPECT_NEAR(learning_rate, std::pow(10.0, exponent), 1e-12);
    grid.insert({exponent, hparams["hidden_size"].get<int>()});
    EXPECT_EQ(hparams["global_batch_size"], 32);
    EXPECT_EQ(hparams["l2"], 0.0001);
    EXPECT_EQ(hparams["momentum"], 0.9);
    EXPECT_EQ(trial["state"], "STATE_COMPLETED");
    EXPECT_EQ(trial["totalBatchesProcessed"], kLength);
    EXPECT_EQ(trial["restarts"], 0);
    ASSERT_TRUE(trial.contains("bestValidation")) << trial.dump();

    json workloads = Workloads(trial_id);
    ExpectContiguousTraining(workloads, kLength);
    int validations_at_length = 0;
    for (const auto& workload : workloads) {
      if (workload.contains("validation")) {
        validations_at_length += Int(workload["validation"]["totalBatches"]) == kLength;
        EXPECT_TRUE(workload["validation"]["metrics"]["avgMetrics"].contains("validation_loss"));
      }
    }
    EXPECT_EQ(validations_at_length, 1) << workloads.dump();

    // Checkpoints at 100, 200 and 300; save_trial_latest 1 and save_trial_best 1 both keep the
    // one at 300 (the only validated one), the others are collected when the trial ends.
    json checkpoints = Checkpoints(trial_id);
    std::vector<int64_t> batches;
    for (const auto& checkpoint : checkpoints) {
      batches.push_back(Int(checkpoint["totalBatches"]));
      const bool last = Int(checkpoint["totalBatches"]) == kLength;
      EXPECT_EQ(checkpoint["state"], last ? "STATE_COMPLETED" : "STATE_DELETED")
          << checkpoint.dump();
      (last ? kept : collected).push_back(checkpoint["uuid"]);
    }
    EXPECT_EQ(batches, (std::vector<int64_t>{100, 200, 300}));
    EXPECT_EQ(trial["checkpointCount"], 1);
  }
  EXPECT_EQ(grid, (std::multiset<std::pair<int, int>>{
                      {-2, 4}, {-2, 16}, {-1, 4}, {-1, 16}, {0, 4}, {0, 16}}));
  EXPECT_EQ(experiment["checkpointCount"], 6);

  for (const auto& uuid : kept) {
    EXPECT_TRUE(fs::exists(CheckpointPath(uuid) + "/state.json")) << uuid;
  }
  ASSERT_EQ(collected.size(), 12u);
  std::vector<std::string> collected_paths;
  for (const auto& uuid : collected) collected_paths.push_back(CheckpointPath(uuid));
  EXPECT_TRUE(WaitUntilRemoved(collected_paths, std::chrono::seconds(10)))
      << "the collected checkpoints' directories are still there";
  for (const auto& uuid : kept) {
    EXPECT_TRUE(fs::exists(CheckpointPath(uuid) + "/state.json")) << uuid << " was kept";
  }

  ExpectReplayKeeps({id});
}

// 2. A trial process killed with SIGKILL after its checkpoint at 100 batches, while it saves the
// next one at 200: the trial restarts once, the new run resumes from the checkpoint at 100 (the
// batches 100..200 trained after it are lost and trained again, nothing else), and the trial
// completes with exactly max_length.
// pbt.yaml: 4 members, 3 rounds of 50 batches; after rounds 1 and 2 the worse two are closed and
// the better two cloned from their round's checkpoints.
TEST_F(ExperimentEndToEnd, APbtSearchRunsItsRoundsAndClonesFromTheParentsCheckpoints) {
  StartCluster(4);
  std::string config = ReadFile(ExamplePath("spiral-mlp") + "/pbt.yaml");
  ReplaceOnce(config, "host_path: /tmp", "host_path: " + CheckpointRoot());
  const int64_t id = Create(config, ExamplePath("spiral-mlp"));
  ASSERT_GT(id, 0);
  auto events = WaitForState(id, "EXPERIMENT_STATE_COMPLETED");
  ASSERT_TRUE(ReachedState(events, id, "EXPERIMENT_STATE_COMPLETED"));

  json trials = Trials(id);
  ASSERT_EQ(trials.size(), 8u) << trials.dump();
  std::map<int64_t, json> by_id;
  for (const auto& trial : trials) by_id[Int(trial["id"])] = trial;
  int clones = 0;
  for (const auto& [trial_id, trial] : by_id) {
    SCOPED_TRACE("trial " + std::to_string(trial_id));
    EXPECT_EQ(trial["state"], "STATE_COMPLETED") << trial.dump();
    const int64_t parent_id = Int(trial["cairn"]["clonedFromTrialId"]);
    if (parent_id == 0) {
      EXPECT_EQ(trial["warmStartCheckpointUuid"], "");
      continue;
    }
    ++clones;
    ASSERT_TRUE(by_id.count(parent_id));
    const json& parent = by_id[parent_id];
    // The clone began from one of its parent's checkpoints, at a round's end.
    const std::string source = trial["warmStartCheckpointUuid"];
    int64_t source_batches = -1;
    for (const auto& checkpoint : Checkpoints(parent_id)) {
      if (checkpoint["uuid"] == source) source_batches = Int(checkpoint["totalBatches"]);
    }
    EXPECT_GT(source_batches, 0) << source << " is not a checkpoint of trial " << parent_id;
    EXPECT_EQ(source_batches % 50, 0);
    // Explored: the width stays, each of the others is resampled or scaled by 0.8 or 1.2.
    EXPECT_EQ(trial["hparams"]["hidden_size"], 16);
    EXPECT_EQ(trial["hparams"]["global_batch_size"], 32);
    EXPECT_NE(trial["hparams"], parent["hparams"]) << "nothing was explored";
    EXPECT_NE(trial["cairn"]["searcherReason"].get<std::string>().find("round"), std::string::npos)
        << trial["cairn"]["searcherReason"];
    // A clone trains its own rounds from batch 0.
    const int64_t trained = Int(trial["totalBatchesProcessed"]);
    EXPECT_TRUE(trained == 50 || trained == 100) << trained;
  }
  EXPECT_EQ(clones, 4);
  // The exploit and explore decisions, as events with their reasons.
  int closed_as_worst = 0;
  for (const auto& closed : Find(events, "trialClosed", OfExperiment(id))) {
    closed_as_worst +=
        closed.payload.value("reason", "").find("among the worst 2 of 4") != std::string::npos;
  }
  EXPECT_EQ(closed_as_worst, 4);
  int cloned = 0;
  for (const auto& created : Find(events, "trialCreated", OfExperiment(id))) {
    const std::string reason = created.payload.value("reason", "");
    if (reason.find("clone of trial request") == std::string::npos) continue;
    ++cloned;
    EXPECT_NE(reason.find("begins from trial"), std::string::npos) << reason;
    EXPECT_FALSE(created.payload.value("warmStartCheckpointUuid", "").empty());
  }
  EXPECT_EQ(cloned, 4);
  EXPECT_EQ(Experiment(id)["progress"], 1.0);
  ExpectReplayKeeps({id});
}

TEST_F(ExperimentEndToEnd, ASigkilledTrialRestartsFromItsCheckpoint) {
  StartCluster(1);
  Gate gate(cluster_->dir().Sub("gate"));
  TrialOptions options;
  options.name = "sigkilled";
  options.max_length = 400;
  options.checkpoint_period = 100;
  options.gate = &gate;
  options.gate_at = "save:200";
  const int64_t id = Create(SingleTrialConfig(options), Context());
  ASSERT_GT(id, 0);

  // Run 1 trains to 100, checkpoints, trains to 200 and is held saving its second checkpoint.
  int64_t trial_id = 0;
  auto events = cluster_->FollowEventsUntil([&](const std::vector<json>& e) {
    trial_id = FirstTrial(e, id);
    return trial_id != 0 && !Find(e, "checkpointSaved", OfTrial(trial_id)).empty() &&
           Find(e, "trialWorkloadAssigned", [&](const json& p) {
             return OfTrial(trial_id)(p) && p.value("kind", "") == "WORKLOAD_KIND_CHECKPOINT";
           }).size() == 2;
  });
  ASSERT_NE(trial_id, 0);
  auto saved = Find(events, "checkpointSaved", OfTrial(trial_id));
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(Int(saved[0].payload["totalBatches"]), 100);
  const std::string checkpoint_uuid = saved[0].payload["uuid"];
  EXPECT_TRUE(fs::exists(CheckpointPath(checkpoint_uuid) + "/state.json"));
  json before_kill = Checkpoints(trial_id);
  ASSERT_EQ(before_kill.size(), 1u);
  EXPECT_EQ(before_kill[0]["uuid"], checkpoint_uuid);
  auto runs = RunsOf(events, trial_id);
  ASSERT_EQ(runs.size(), 1u);
  auto started = Find(events, "taskStarted", OfTask(runs[0]));
  ASSERT_EQ(started.size(), 1u);
  const pid_t pid = started[0].payload["pid"].get<int>();
  const std::string first_allocation = started[0].payload["allocationId"];
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);

  events = cluster_->FollowEventsUntil([&](const std::vector<json>& e) {
    return !Find(e, "trialRestarted", OfTrial(trial_id)).empty();
  });
  auto restarted = Find(events, "trialRestarted", OfTrial(trial_id));
  EXPECT_EQ(restarted[0].payload["restarts"], 1);
  EXPECT_NE(restarted[0].payload.value("reason", "").find(checkpoint_uuid), std::string::npos)
      << restarted[0].payload.dump();
  auto exited = Find(events, "taskExited", OfTask(runs[0]));
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_EQ(exited[0].payload["signal"], SIGKILL) << exited[0].payload.dump();
  gate.Release();

  events = WaitForState(id, "EXPERIMENT_STATE_COMPLETED");
  runs = RunsOf(events, trial_id);
  ASSERT_EQ(runs.size(), 2u);
  auto second = Find(events, "taskStarted", OfTask(runs[1]));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(FirstTrainStart(events, trial_id, second[0].payload["allocationId"]), 100)
      << "the new run starts at the checkpoint's batch count";
  EXPECT_EQ(FirstTrainStart(events, trial_id, first_allocation), 0);

  json trial = GetCurrent("/api/v1/trials/" + std::to_string(trial_id))["trial"];
  EXPECT_EQ(trial["state"], "STATE_COMPLETED");
  EXPECT_EQ(trial["restarts"], 1);
  EXPECT_EQ(trial["totalBatchesProcessed"], 400);
  EXPECT_EQ(trial["cairn"]["runs"], 2);
  // Only what run 1 trained after its checkpoint is trained twice.
  EXPECT_EQ(TrainingRanges(Workloads(trial_id)),
            (std::vector<std::pair<int64_t, int64_t>>{
                {0, 100}, {100, 200}, {100, 200}, {200, 300}, {300, 400}}));
  EXPECT_EQ(Experiment(id)["state"], "STATE_COMPLETED");
  // `det trial logs`: both runs' output, in order; a follow ends since the trial has ended.
  auto logs = cluster_->Client().Request(
      "GET", "/api/v1/trials/" + std::to_string(trial_id) + "/logs?follow=true", "", {});
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  std::vector<std::string> task_ids;
  bool trained = false;
  std::istringstream lines(logs->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    json result = json::parse(line)["result"];
    EXPECT_EQ(result.value("trialId", int64_t{0}), trial_id) << "the CLI reads it: " << line;
    if (task_ids.empty() || task_ids.back() != result["taskId"])
      task_ids.push_back(result["taskId"]);
    trained |=
        result["message"].get<std::string>().find("cairn-harness: TRAIN") != std::string::npos;
  }
  EXPECT_EQ(task_ids, (std::vector<std::string>{runs[0], runs[1]}));
  EXPECT_TRUE(trained) << logs->body;
  ExpectReplayKeeps({id});
}

TEST_F(ExperimentEndToEnd, AMasterCrashDuringATrialLosesNothing) {
  StartCluster(1);
  Gate gate(cluster_->dir().Sub("gate"));
  TrialOptions options;
  options.name = "master-crash";
  options.max_length = 400;
  options.checkpoint_period = 100;
  options.gate = &gate;
  options.gate_at = "train:200";
  const int64_t id = Create(SingleTrialConfig(options), Context());
  ASSERT_GT(id, 0);
  int64_t trial_id = 0;
  cluster_->FollowEventsUntil([&](const std::vector<json>& e) {
    trial_id = FirstTrial(e, id);
    return trial_id != 0 && TrainAssignedFrom(e, trial_id, 200);
  });
  ASSERT_NE(trial_id, 0);
  cluster_->StopMaster(SIGKILL);
  gate.Release();  // the trial reports its batches to a master that is not there, and retries
  cluster_->StartMaster();

  auto events = WaitForState(id, "EXPERIMENT_STATE_COMPLETED");
  EXPECT_EQ(RunsOf(events, trial_id).size(), 1u);
  EXPECT_TRUE(Find(events, "trialRestarted", OfTrial(trial_id)).empty());
  json trial = GetCurrent("/api/v1/trials/" + std::to_string(trial_id))["trial"];
  EXPECT_EQ(trial["state"], "STATE_COMPLETED");
  EXPECT_EQ(trial["restarts"], 0);
  EXPECT_EQ(trial["totalBatchesProcessed"], 400);
  ExpectContiguousTraining(Workloads(trial_id), 400);
  ExpectReplayKeeps({id});
}

}  // namespace
}  // namespace cairn::testing::experiment_e2e
