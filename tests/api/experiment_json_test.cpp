// The experiments projection's views in Determined's REST shapes: the keys the det CLI reads
// (shared/reference/determined-rest.md §5) with the types its generated client checks.
#include "api/render/experiment_json.h"

#include <gtest/gtest.h>

namespace cairn::api {
namespace {

using nlohmann::json;

constexpr int64_t kStart = 1'700'000'000'000'000;  // 2023-11-14T22:13:20Z

views::ExperimentView Experiment() {
  views::ExperimentView experiment;
  experiment.set_experiment_id(7);
  experiment.set_job_id("job-7");
  experiment.set_name("mnist");
  experiment.set_owner("alice");
  experiment.set_original_config("name: mnist\n");
  experiment.set_config_json(
      R"({"name":"mnist","description":"a test","labels":["a","b"],)"
      R"("searcher":{"name":"adaptive_asha","metric":"loss"},"resources":{"slots_per_trial":2}})");
  experiment.set_seed(1234);
  experiment.set_context_digest("sha256:abc");
  experiment.set_template_name("base");
  experiment.mutable_resources()->set_resource_pool("gpu");
  experiment.mutable_resources()->set_priority(42);
  experiment.mutable_resources()->set_weight(1);
  experiment.mutable_resources()->set_slots(2);
  experiment.set_state(events::EXPERIMENT_STATE_ACTIVE);
  experiment.set_progress(0.25);
  experiment.set_start_time_unix_micros(kStart);
  experiment.set_searcher_type("adaptive_asha");
  experiment.add_trial_ids(1);
  experiment.add_trial_ids(2);
  experiment.set_checkpoint_count(3);
  return experiment;
}

views::TrialView Trial() {
  views::TrialView trial;
  trial.set_trial_id(1);
  trial.set_experiment_id(7);
  trial.set_request_id(4);
  trial.set_hparams_json(R"({"lr":0.1,"layers":{"n":2}})");
  trial.set_state(events::EXPERIMENT_STATE_ACTIVE);
  trial.set_start_time_unix_micros(kStart);
  trial.set_restarts(1);
  trial.set_searcher_reason("train to 200 batches");
  trial.set_task_id("run-1-2");
  trial.set_runs(2);
  trial.set_total_batches_processed(200);
  return trial;
}

views::MetricsResult Validation(int64_t total_batches, const std::string& metrics) {
  views::MetricsResult result;
  result.set_total_batches(total_batches);
  result.set_metrics_json(metrics);
  result.set_end_time_unix_micros(kStart + 5'000'000);
  result.set_searcher_metric(0.25);
  return result;
}

TEST(ExperimentJsonTest, AnExperimentHasEveryKeyTheCliReads) {
  json experiment = ExperimentJson(Experiment(), 2, Audience::kOwner);
  EXPECT_EQ(experiment["id"], 7);
  EXPECT_EQ(experiment["name"], "mnist");
  EXPECT_EQ(experiment["description"], "a test");
  EXPECT_EQ(experiment["labels"], json::array({"a", "b"}));
  EXPECT_EQ(experiment["state"], "STATE_ACTIVE");
  EXPECT_EQ(experiment["archived"], false);
  ASSERT_TRUE(experiment["config"].is_object());
  EXPECT_EQ(experiment["config"]["searcher"]["metric"], "loss");
  EXPECT_EQ(experiment["originalConfig"], "name: mnist\n");
  EXPECT_EQ(experiment["jobId"], "job-7");
  EXPECT_EQ(experiment["numTrials"], 2);
  EXPECT_EQ(experiment["projectId"], 1);
  EXPECT_EQ(experiment["projectOwnerId"], 1);
  EXPECT_EQ(experiment["workspaceId"], 1);
  EXPECT_EQ(experiment["searcherType"], "adaptive_asha");
  EXPECT_EQ(experiment["startTime"], "2023-11-14T22:13:20.000000Z");
  EXPECT_FALSE(experiment.contains("endTime")) << "not ended";
  EXPECT_EQ(experiment["progress"], 0.25);
  EXPECT_EQ(experiment["username"], "alice");
  EXPECT_EQ(experiment["resourcePool"], "gpu");
  EXPECT_EQ(experiment["checkpointCount"], 3);
  EXPECT_EQ(experiment["cairn"]["seed"], 1234);
  EXPECT_EQ(experiment["cairn"]["contextDigest"], "sha256:abc");
  EXPECT_EQ(experiment["cairn"]["templateName"], "base");
}

TEST(ExperimentJsonTest, AnEndedExperimentHasItsEndTimeAndState) {
  views::ExperimentView view = Experiment();
  view.set_state(events::EXPERIMENT_STATE_STOPPING_KILLED);
  EXPECT_EQ(ExperimentJson(view, 0, Audience::kOwner)["state"], "STATE_STOPPING_KILLED");
  view.set_state(events::EXPERIMENT_STATE_COMPLETED);
  view.set_end_time_unix_micros(kStart + 60'000'000);
  json experiment = ExperimentJson(view, 0, Audience::kOwner);
  EXPECT_EQ(experiment["state"], "STATE_COMPLETED");
  EXPECT_EQ(experiment["endTime"], "2023-11-14T22:14:20.000000Z");
}

TEST(ExperimentJsonTest, AConfigWithoutDescriptionOrLabelsGivesEmptyOnes) {
  views::ExperimentView view = Experiment();
  view.set_config_json("not json");
  json experiment = ExperimentJson(view, 0, Audience::kOwner);
  EXPECT_EQ(experiment["config"], json::object());
  EXPECT_EQ(experiment["description"], "");
  EXPECT_EQ(experiment["labels"], json::array());
}

TEST(ExperimentJsonTest, AQueueChangeShowsInTheConfigsResources) {
  views::ExperimentView view = Experiment();
  EXPECT_FALSE(
      ExperimentJson(view, 0, Audience::kOwner)["config"]["resources"].contains("priority"));
  view.mutable_resources()->set_priority(10);
  view.mutable_resources()->set_resource_pool("cpu");
  view.set_resources_changed(true);
  json experiment = ExperimentJson(view, 0, Audience::kOwner);
  EXPECT_EQ(experiment["config"]["resources"]["priority"], 10);
  EXPECT_EQ(experiment["config"]["resources"]["resource_pool"], "cpu");
  EXPECT_EQ(experiment["config"]["resources"]["slots_per_trial"], 2);
  EXPECT_EQ(experiment["resourcePool"], "cpu");
}

TEST(ExperimentJsonTest, ATrialHasEveryKeyTheCliReads) {
  views::TrialView view = Trial();
  *view.mutable_latest_validation() = Validation(200, R"({"loss":0.3})");
  *view.mutable_best_validation() = Validation(100, R"({"loss":0.25})");
  json trial = TrialJson(view);
  EXPECT_EQ(trial["id"], 1);
  EXPECT_EQ(trial["experimentId"], 7);
  EXPECT_EQ(trial["state"], "STATE_ACTIVE");
  EXPECT_EQ(trial["startTime"], "2023-11-14T22:13:20.000000Z");
  EXPECT_FALSE(trial.contains("endTime"));
  EXPECT_EQ(trial["restarts"], 1);
  EXPECT_EQ(trial["hparams"], json::parse(R"({"lr":0.1,"layers":{"n":2}})"));
  EXPECT_EQ(trial["totalBatchesProcessed"], 200);
  EXPECT_EQ(trial["taskId"], "run-1-2");
  EXPECT_EQ(trial["latestValidation"]["totalBatches"], 200);
  EXPECT_EQ(trial["latestValidation"]["metrics"]["avgMetrics"]["loss"], 0.3);
  EXPECT_EQ(trial["latestValidation"]["endTime"], "2023-11-14T22:13:25.000000Z");
  EXPECT_EQ(trial["bestValidation"]["totalBatches"], 100);
  EXPECT_EQ(trial["bestValidation"]["metrics"]["avgMetrics"]["loss"], 0.25);
  EXPECT_EQ(trial["cairn"]["requestId"], 4);
  EXPECT_EQ(trial["cairn"]["searcherReason"], "train to 200 batches");
  EXPECT_EQ(trial["cairn"]["runs"], 2);

  json fresh = TrialJson(Trial());
  EXPECT_FALSE(fresh.contains("latestValidation")) << "unknown until a validation";
  EXPECT_FALSE(fresh.contains("bestValidation"));
}

TEST(ExperimentJsonTest, ATrialShowsRunningOnlyWhileActiveAndStarted) {
  views::TrialView view = Trial();
  view.set_running(true);
  EXPECT_EQ(TrialJson(view)["state"], "STATE_RUNNING");
  view.set_state(events::EXPERIMENT_STATE_PAUSED);
  EXPECT_EQ(TrialJson(view)["state"], "STATE_PAUSED") << "a paused experiment's trial";
  view.set_state(events::EXPERIMENT_STATE_STOPPING_CANCELED);
  EXPECT_EQ(TrialJson(view)["state"], "STATE_STOPPING_CANCELED");
  view.set_state(events::EXPERIMENT_STATE_ERROR);
  view.set_ended(true);
  view.set_end_time_unix_micros(kStart + 1'000'000);
  json trial = TrialJson(view);
  EXPECT_EQ(trial["state"], "STATE_ERROR");
  EXPECT_EQ(trial["endTime"], "2023-11-14T22:13:21.000000Z");
}

TEST(ExperimentJsonTest, WorkloadsAreTrainingValidationOrCheckpoint) {
  views::WorkloadView training;
  training.set_kind(events::WORKLOAD_KIND_TRAIN);
  training.set_total_batches(100);
  training.set_num_inputs(50);
  training.set_metrics_json(R"({"loss":0.5})");
  training.set_end_time_unix_micros(kStart);
  json workload = WorkloadJson(training);
  ASSERT_EQ(workload.size(), 1u);
  EXPECT_EQ(workload["training"],
            json::parse(R"({"totalBatches":100,"numInputs":50,"metrics":{"avgMetrics":)"
                        R"({"loss":0.5}},"endTime":"2023-11-14T22:13:20.000000Z"})"));

  views::WorkloadView validation = training;
  validation.set_kind(events::WORKLOAD_KIND_VALIDATE);
  validation.set_num_inputs(0);
  workload = WorkloadJson(validation);
  ASSERT_EQ(workload.size(), 1u);
  EXPECT_EQ(workload["validation"]["totalBatches"], 100);
  EXPECT_EQ(workload["validation"]["numInputs"], 0);
  EXPECT_EQ(workload["validation"]["metrics"]["avgMetrics"]["loss"], 0.5);
  EXPECT_EQ(workload["validation"]["endTime"], "2023-11-14T22:13:20.000000Z");

  views::WorkloadView checkpoint;
  checkpoint.set_kind(events::WORKLOAD_KIND_CHECKPOINT);
  checkpoint.set_total_batches(100);
  checkpoint.set_checkpoint_uuid("c-1");
  checkpoint.set_checkpoint_state(views::CHECKPOINT_STATE_COMPLETED);
  checkpoint.set_end_time_unix_micros(kStart);
  workload = WorkloadJson(checkpoint);
  ASSERT_EQ(workload.size(), 1u);
  EXPECT_EQ(workload["checkpoint"],
            json::parse(R"({"state":"STATE_COMPLETED","totalBatches":100,)"
                        R"("endTime":"2023-11-14T22:13:20.000000Z","uuid":"c-1"})"));
  checkpoint.set_checkpoint_state(views::CHECKPOINT_STATE_DELETED);
  EXPECT_EQ(WorkloadJson(checkpoint)["checkpoint"]["state"], "STATE_DELETED");
}

TEST(ExperimentJsonTest, ACheckpointHasItsFilesMetadataAndMetrics) {
  views::CheckpointView view;
  view.set_uuid("c-1");
  view.set_experiment_id(7);
  view.set_trial_id(1);
  view.set_allocation_id("run-1-2.1");
  view.set_total_batches(200);
  auto* file = view.add_resources();
  file->set_path("state.pt");
  file->set_size_bytes(4096);
  view.set_metadata_json(R"({"framework":"torch"})");
  view.set_state(views::CHECKPOINT_STATE_COMPLETED);
  view.set_report_time_unix_micros(kStart);
  *view.mutable_validation() = Validation(200, R"({"loss":0.25})");
  json checkpoint = CheckpointJson(view);
  EXPECT_EQ(checkpoint["uuid"], "c-1");
  EXPECT_EQ(checkpoint["state"], "STATE_COMPLETED");
  EXPECT_EQ(checkpoint["resources"], json::parse(R"({"state.pt":"4096"})"));
  EXPECT_EQ(checkpoint["metadata"]["framework"], "torch");
  EXPECT_EQ(checkpoint["metadata"]["steps_completed"], 200);
  EXPECT_EQ(checkpoint["totalBatches"], 200);
  EXPECT_EQ(checkpoint["reportTime"], "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(checkpoint["training"]["trialId"], 1);
  EXPECT_EQ(checkpoint["training"]["experimentId"], 7);
  EXPECT_FALSE(checkpoint["training"].contains("trainingMetrics")) << "none at 200 batches";
  EXPECT_EQ(checkpoint["training"]["validationMetrics"]["avgMetrics"]["loss"], 0.25);
  EXPECT_EQ(checkpoint["training"]["searcherMetric"], 0.25);

  view.set_state(views::CHECKPOINT_STATE_DELETED);
  view.set_metadata_json("");
  checkpoint = CheckpointJson(view);
  EXPECT_EQ(checkpoint["state"], "STATE_DELETED");
  EXPECT_EQ(checkpoint["metadata"], json::parse(R"({"steps_completed":200})"));
}

}  // namespace
}  // namespace cairn::api
