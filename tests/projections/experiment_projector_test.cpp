// The experiments projection: experiment, trial, workload and checkpoint views folded from a
// realistic history, the rules for unknown ids and repeats, key order, and live == rebuilt.
#include "projections/experiment_projector.h"

#include <gtest/gtest.h>

#include <set>

#include "events/memory_log.h"
#include "projections/projections.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using events::WORKLOAD_KIND_CHECKPOINT;
using events::WORKLOAD_KIND_TRAIN;
using events::WORKLOAD_KIND_UNSPECIFIED;
using events::WORKLOAD_KIND_VALIDATE;
using projections::kExperimentsProjector;
using testing::History;
using testing::TempDir;

std::string SearcherConfig(const std::string& metric, bool smaller_is_better) {
  return R"({"name":"mnist","searcher":{"name":"random","metric":")" + metric +
         R"(","smaller_is_better":)" + (smaller_is_better ? "true" : "false") +
         R"(,"max_length":{"batches":200}},"resources":{"slots_per_trial":2}})";
}

// Applies the events of `history` from `state.next_offset()` on.
void CatchUp(ProjectionState& state, const History& history) {
  for (uint64_t offset = state.next_offset(); offset < history.events().size(); ++offset) {
    Status status = state.Apply(history.events()[offset]);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
}

ExperimentView MustGetExperiment(ProjectionState& state, int64_t id) {
  auto experiment = state.GetExperiment(id);
  EXPECT_TRUE(experiment.ok()) << experiment.status().ToString();
  EXPECT_TRUE(experiment.ok() && experiment->has_value()) << "no experiment " << id;
  return experiment.ok() && experiment->has_value() ? **experiment : ExperimentView();
}

TrialView MustGetTrial(ProjectionState& state, int64_t id) {
  auto trial = state.GetTrial(id);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  EXPECT_TRUE(trial.ok() && trial->has_value()) << "no trial " << id;
  return trial.ok() && trial->has_value() ? **trial : TrialView();
}

std::vector<WorkloadView> MustListWorkloads(ProjectionState& state, int64_t trial_id) {
  auto workloads = state.ListWorkloads(trial_id);
  EXPECT_TRUE(workloads.ok()) << workloads.status().ToString();
  return workloads.ok() ? *workloads : std::vector<WorkloadView>();
}

std::vector<std::string> CheckpointUuids(ProjectionState& state, int64_t experiment_id,
                                         int64_t trial_id) {
  auto checkpoints = state.ListCheckpoints(experiment_id, trial_id);
  EXPECT_TRUE(checkpoints.ok()) << checkpoints.status().ToString();
  std::vector<std::string> uuids;
  if (checkpoints.ok()) {
    for (const auto& checkpoint : *checkpoints) uuids.push_back(checkpoint.uuid());
  }
  return uuids;
}

CheckpointView MustGetCheckpoint(ProjectionState& state, const std::string& uuid) {
  auto checkpoint = state.GetCheckpoint(uuid);
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_TRUE(checkpoint.ok() && checkpoint->has_value()) << "no checkpoint " << uuid;
  return checkpoint.ok() && checkpoint->has_value() ? **checkpoint : CheckpointView();
}

std::string Digest(ProjectionState& state) {
  auto digest = state.Digest(kExperimentsProjector);
  EXPECT_TRUE(digest.ok()) << digest.status().ToString();
  return digest.ok() ? *digest : "";
}

// One experiment from creation to completion, checked along the way: created paused and
// activated, two trials, a run that trains, validates, checkpoints, fails and restarts, a
// checkpoint deleted by the GC policy, a pause, trials ending and the experiment completing.
TEST(ExperimentProjectorTest, ARealisticExperimentFromCreationToCompletion) {
  History history;
  ProjectionState state;
  history.CreateExperiment(1, "job-e1", SearcherConfig("loss", true), /*activate=*/false, "gpu", 30,
                           2);
  CatchUp(state, history);
  ExperimentView experiment = MustGetExperiment(state, 1);
  EXPECT_EQ(experiment.job_id(), "job-e1");
  EXPECT_EQ(experiment.name(), "experiment 1");
  EXPECT_EQ(experiment.owner(), "alice");
  EXPECT_EQ(experiment.original_config(), "name: experiment\n");
  EXPECT_EQ(experiment.config_json(), SearcherConfig("loss", true));
  EXPECT_EQ(experiment.seed(), 7919u);
  EXPECT_EQ(experiment.context_digest(), "sha256:1");
  EXPECT_EQ(experiment.resources().resource_pool(), "gpu");
  EXPECT_EQ(experiment.resources().priority(), 30);
  EXPECT_EQ(experiment.resources().slots(), 2);
  EXPECT_EQ(experiment.state(), events::EXPERIMENT_STATE_PAUSED);
  EXPECT_EQ(experiment.start_time_unix_micros(), history.time_of(0));
  EXPECT_EQ(experiment.end_time_unix_micros(), 0);
  EXPECT_EQ(experiment.searcher_type(), "random");
  EXPECT_EQ(experiment.searcher_metric(), "loss");
  EXPECT_TRUE(experiment.smaller_is_better());
  EXPECT_EQ(experiment.trial_ids_size(), 0);

  history.ChangeExperimentState(1, events::EXPERIMENT_STATE_ACTIVE, 0, "activated");
  history.CreateTrial(1, 11, 0, R"({"lr":0.1})", 0.1, "create request 0");
  history.CreateTrial(1, 12, 1, R"({"lr":0.01})", 0.2, "create request 1");
  history.TrainTo(1, 11, 100, 0.25, "train 100 batches");
  CatchUp(state, history);
  experiment = MustGetExperiment(state, 1);
  EXPECT_EQ(experiment.state(), events::EXPERIMENT_STATE_ACTIVE);
  EXPECT_EQ(experiment.state_reason(), "activated");
  EXPECT_EQ(experiment.progress(), 0.25);
  EXPECT_EQ(std::vector<int64_t>(experiment.trial_ids().begin(), experiment.trial_ids().end()),
            (std::vector<int64_t>{11, 12}));
  auto trials = state.ListTrials(1);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[0].trial_id(), 11);
  EXPECT_EQ((*trials)[1].trial_id(), 12);
  TrialView trial = MustGetTrial(state, 11);
  EXPECT_EQ(trial.experiment_id(), 1);
  EXPECT_EQ(trial.request_id(), 0);
  EXPECT_EQ(trial.hparams_json(), R"({"lr":0.1})");
  EXPECT_EQ(trial.state(), events::EXPERIMENT_STATE_ACTIVE);
  EXPECT_EQ(trial.start_time_unix_micros(), history.time_of(2));
  EXPECT_EQ(trial.target_length_batches(), 100);
  EXPECT_EQ(trial.searcher_reason(), "train 100 batches");
  EXPECT_EQ(MustGetTrial(state, 12).searcher_reason(), "create request 1");

  // The first run: placed, started, reports, a checkpoint, then it fails.
  history.SubmitRun("run-11-1", "job-e1", 11, "gpu", 2);
  CatchUp(state, history);
  trial = MustGetTrial(state, 11);
  EXPECT_EQ(trial.task_id(), "run-11-1");
  EXPECT_EQ(trial.runs(), 1);
  EXPECT_FALSE(trial.running());
  history.Assign("run-11-1", "run-11-1.1", "a1", "i1", {0, 1});
  history.Start("run-11-1", "run-11-1.1", "a1", 100);
  CatchUp(state, history);
  EXPECT_TRUE(MustGetTrial(state, 11).running());
  history.ReportWorkload(1, 11, "run-11-1.1", 0, WORKLOAD_KIND_UNSPECIFIED, 0, 0);
  history.ReportWorkload(1, 11, "run-11-1.1", 1, WORKLOAD_KIND_TRAIN, 100, 100, R"({"loss":0.5})");
  const uint64_t first_validation = history.events().size();
  history.ReportWorkload(1, 11, "run-11-1.1", 2, WORKLOAD_KIND_VALIDATE, 0, 100, R"({"loss":0.4})");
  history.SaveCheckpoint(1, 11, "c-100", 100, 300, {{"z.bin", 100}, {"a.pt", 200}}, "run-11-1.1");
  history.Exit("run-11-1", "run-11-1.1", "a1", 1, std::nullopt, "exited with code 1");
  CatchUp(state, history);
  trial = MustGetTrial(state, 11);
  EXPECT_FALSE(trial.running());
  EXPECT_EQ(trial.total_batches_processed(), 100);
  EXPECT_EQ(trial.latest_training().metrics_json(), R"({"loss":0.5})");
  EXPECT_EQ(trial.latest_training().num_inputs(), 100);
  EXPECT_EQ(trial.latest_validation().total_batches(), 100);
  EXPECT_EQ(trial.latest_validation().searcher_metric(), 0.4);
  EXPECT_EQ(trial.best_validation().end_time_unix_micros(), history.time_of(first_validation));
  EXPECT_EQ(trial.checkpoint_count(), 1);
  EXPECT_EQ(trial.checkpoint_size_bytes(), 300);
  EXPECT_EQ(trial.latest_checkpoint_uuid(), "c-100");
  CheckpointView checkpoint = MustGetCheckpoint(state, "c-100");
  EXPECT_EQ(checkpoint.experiment_id(), 1);
  EXPECT_EQ(checkpoint.trial_id(), 11);
  EXPECT_EQ(checkpoint.allocation_id(), "run-11-1.1");
  EXPECT_EQ(checkpoint.state(), views::CHECKPOINT_STATE_COMPLETED);
  EXPECT_EQ(checkpoint.report_time_unix_micros(), history.time_of(first_validation + 1));
  ASSERT_EQ(checkpoint.resources_size(), 2);
  EXPECT_EQ(checkpoint.resources(0).path(), "a.pt") << "files are kept by path";
  EXPECT_EQ(checkpoint.resources(0).size_bytes(), 200);
  EXPECT_EQ(checkpoint.resources(1).path(), "z.bin");
  EXPECT_EQ(checkpoint.metadata_json(), R"({"framework":"pure-python"})");
  EXPECT_EQ(checkpoint.training().metrics_json(), R"({"loss":0.5})");
  EXPECT_EQ(checkpoint.validation().metrics_json(), R"({"loss":0.4})");

  // Restarted: a second run. Events of the first run are stale from now on.
  history.RestartTrial(1, 11, 1, "the run failed; restart 1 of 5");
  history.SubmitRun("run-11-2", "job-e1", 11, "gpu", 2);
  history.Start("run-11-1", "run-11-1.1", "a1", 100);  // stale: the first run
  CatchUp(state, history);
  trial = MustGetTrial(state, 11);
  EXPECT_EQ(trial.restarts(), 1);
  EXPECT_EQ(trial.restart_reason(), "the run failed; restart 1 of 5");
  EXPECT_EQ(trial.task_id(), "run-11-2");
  EXPECT_EQ(trial.runs(), 2);
  EXPECT_FALSE(trial.running());
  history.Assign("run-11-2", "run-11-2.1", "a1", "i1", {0, 1});
  history.Start("run-11-2", "run-11-2.1", "a1", 101);
  history.Release("run-11-2", "run-11-2.0", "stale allocation");
  history.Exit("run-11-1", "", "", std::nullopt, 9, "stale: the first run");
  CatchUp(state, history);
  EXPECT_TRUE(MustGetTrial(state, 11).running())
      << "a release of another allocation and an exit of an earlier run are stale";
  history.Release("run-11-2", "run-11-2.1", "preempted; back in the queue");
  CatchUp(state, history);
  EXPECT_FALSE(MustGetTrial(state, 11).running());
  EXPECT_EQ(MustGetTrial(state, 11).allocation_id(), "");
  history.Assign("run-11-2", "run-11-2.2", "a1", "i1", {0, 1});
  history.Start("run-11-2", "run-11-2.2", "a1", 102);
  // Trains further; the validation is worse, saved after the checkpoint of its batch count.
  history.TrainTo(1, 11, 200, 0.5, "train 200 batches");
  history.ReportWorkload(1, 11, "run-11-2.2", 0, WORKLOAD_KIND_UNSPECIFIED, 0, 100);
  history.ReportWorkload(1, 11, "run-11-2.2", 1, WORKLOAD_KIND_TRAIN, 100, 200, R"({"loss":0.3})");
  history.SaveCheckpoint(1, 11, "c-200", 200, 500, {{"a.pt", 500}}, "run-11-2.2");
  history.ReportWorkload(1, 11, "run-11-2.2", 3, WORKLOAD_KIND_VALIDATE, 0, 200,
                         R"({"loss":0.45})");
  history.DeleteCheckpoints(1, {"c-100", "no-such-checkpoint"}, "save_trial_latest: 1");
  CatchUp(state, history);
  trial = MustGetTrial(state, 11);
  EXPECT_TRUE(trial.running());
  EXPECT_EQ(trial.total_batches_processed(), 200);
  EXPECT_EQ(trial.target_length_batches(), 200);
  EXPECT_EQ(trial.latest_validation().total_batches(), 200);
  EXPECT_EQ(trial.best_validation().total_batches(), 100) << "0.4 beats 0.45 (smaller is better)";
  EXPECT_EQ(trial.checkpoint_count(), 1);
  EXPECT_EQ(trial.checkpoint_size_bytes(), 500);
  EXPECT_EQ(trial.latest_checkpoint_uuid(), "c-200");
  checkpoint = MustGetCheckpoint(state, "c-200");
  EXPECT_EQ(checkpoint.training().metrics_json(), R"({"loss":0.3})");
  EXPECT_EQ(checkpoint.validation().metrics_json(), R"({"loss":0.45})")
      << "a validation reported after the checkpoint of its batch count belongs to it";
  checkpoint = MustGetCheckpoint(state, "c-100");
  EXPECT_EQ(checkpoint.state(), views::CHECKPOINT_STATE_DELETED);
  EXPECT_EQ(checkpoint.delete_reason(), "save_trial_latest: 1");
  experiment = MustGetExperiment(state, 1);
  EXPECT_EQ(experiment.checkpoint_count(), 1);
  EXPECT_EQ(experiment.checkpoint_size_bytes(), 500);
  EXPECT_EQ(experiment.progress(), 0.5);

  std::vector<WorkloadView> workloads = MustListWorkloads(state, 11);
  ASSERT_EQ(workloads.size(), 6u);
  const std::vector<std::pair<events::WorkloadKind, int64_t>> expected = {
      {WORKLOAD_KIND_TRAIN, 100}, {WORKLOAD_KIND_VALIDATE, 100},   {WORKLOAD_KIND_CHECKPOINT, 100},
      {WORKLOAD_KIND_TRAIN, 200}, {WORKLOAD_KIND_CHECKPOINT, 200}, {WORKLOAD_KIND_VALIDATE, 200}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(workloads[i].kind(), expected[i].first) << i;
    EXPECT_EQ(workloads[i].total_batches(), expected[i].second) << i;
    EXPECT_EQ(workloads[i].trial_id(), 11) << i;
    if (i > 0) {
      EXPECT_GT(workloads[i].offset(), workloads[i - 1].offset()) << i;
    }
  }
  EXPECT_EQ(workloads[0].num_inputs(), 100);
  EXPECT_EQ(workloads[0].metrics_json(), R"({"loss":0.5})");
  EXPECT_EQ(workloads[2].checkpoint_uuid(), "c-100");
  EXPECT_EQ(workloads[2].checkpoint_state(), views::CHECKPOINT_STATE_DELETED);
  EXPECT_EQ(workloads[4].checkpoint_uuid(), "c-200");
  EXPECT_EQ(workloads[4].checkpoint_state(), views::CHECKPOINT_STATE_COMPLETED);
  EXPECT_TRUE(MustListWorkloads(state, 12).empty());
  EXPECT_EQ(CheckpointUuids(state, 1, 0), (std::vector<std::string>{"c-100", "c-200"}));
  EXPECT_EQ(CheckpointUuids(state, 1, 11), (std::vector<std::string>{"c-100", "c-200"}));
  EXPECT_TRUE(CheckpointUuids(state, 1, 12).empty());
  EXPECT_TRUE(CheckpointUuids(state, 2, 0).empty());

  // Paused: trials that have not ended show it. Then activated again.
  history.ChangeExperimentState(1, events::EXPERIMENT_STATE_PAUSED, 0.5, "paused by alice");
  CatchUp(state, history);
  EXPECT_EQ(MustGetExperiment(state, 1).state(), events::EXPERIMENT_STATE_PAUSED);
  EXPECT_EQ(MustGetTrial(state, 11).state(), events::EXPERIMENT_STATE_PAUSED);
  EXPECT_EQ(MustGetTrial(state, 12).state(), events::EXPERIMENT_STATE_PAUSED);
  history.ChangeExperimentState(1, events::EXPERIMENT_STATE_ACTIVE, 0.5, "activated");
  history.ChangeJob("job-e1", 5, 2.0, "default", -1, 4, "priority 30 -> 5");
  CatchUp(state, history);
  EXPECT_EQ(MustGetTrial(state, 11).state(), events::EXPERIMENT_STATE_ACTIVE);
  experiment = MustGetExperiment(state, 1);
  EXPECT_TRUE(experiment.resources_changed());
  EXPECT_EQ(experiment.resources().priority(), 5);
  EXPECT_EQ(experiment.resources().weight(), 2.0);
  EXPECT_EQ(experiment.resources().resource_pool(), "default");
  EXPECT_EQ(experiment.resources().max_slots(), 4);
  EXPECT_EQ(experiment.resources().slots(), 2) << "slots per trial stay";

  // Trials end, then the experiment completes.
  history.CloseTrial(1, 11, 0.6, "max_length reached");
  history.Exit("run-11-2", "run-11-2.2", "a1", 0, std::nullopt, "exited");
  const uint64_t trial_end = history.events().size();
  history.EndTrial(1, 11, events::EXPERIMENT_STATE_COMPLETED, 0.8, "completed its work");
  history.EndTrial(1, 12, events::EXPERIMENT_STATE_CANCELED, 0.9, "never ran");
  history.EndTrial(1, 12, events::EXPERIMENT_STATE_ERROR, 0.9, "a second end is ignored");
  history.ChangeExperimentState(1, events::EXPERIMENT_STATE_PAUSED, 0.9, "late pause");
  CatchUp(state, history);
  trial = MustGetTrial(state, 11);
  EXPECT_TRUE(trial.closed());
  EXPECT_EQ(trial.searcher_reason(), "max_length reached");
  EXPECT_FALSE(trial.running());
  EXPECT_TRUE(trial.ended());
  EXPECT_EQ(trial.state(), events::EXPERIMENT_STATE_COMPLETED) << "an ended trial keeps its state";
  EXPECT_EQ(trial.end_reason(), "completed its work");
  EXPECT_EQ(trial.end_time_unix_micros(), history.time_of(trial_end));
  trial = MustGetTrial(state, 12);
  EXPECT_EQ(trial.state(), events::EXPERIMENT_STATE_CANCELED);
  EXPECT_EQ(trial.end_reason(), "never ran");
  history.ChangeExperimentState(1, events::EXPERIMENT_STATE_COMPLETED, 0.9, "searcher done");
  CatchUp(state, history);
  experiment = MustGetExperiment(state, 1);
  EXPECT_EQ(experiment.state(), events::EXPERIMENT_STATE_COMPLETED);
  EXPECT_EQ(experiment.progress(), 1.0) << "a completed experiment is done";
  EXPECT_EQ(experiment.end_time_unix_micros(), history.time_of(history.last_offset()));
  EXPECT_EQ(experiment.last_event_offset(), history.last_offset());
  auto experiments = state.ListExperiments();
  ASSERT_TRUE(experiments.ok());
  ASSERT_EQ(experiments->size(), 1u);
  EXPECT_EQ((*experiments)[0].SerializeAsString(), experiment.SerializeAsString());
}

TEST(ExperimentProjectorTest, BestValidationFollowsSmallerIsBetter) {
  History history;
  history.CreateExperiment(1, "job-e1", SearcherConfig("accuracy", false));
  history.CreateTrial(1, 1, 0, "{}");
  history.ReportWorkload(1, 1, "al", 1, WORKLOAD_KIND_VALIDATE, 0, 10, R"({"accuracy":0.5})");
  history.ReportWorkload(1, 1, "al", 2, WORKLOAD_KIND_VALIDATE, 0, 20, R"({"accuracy":0.9})");
  history.ReportWorkload(1, 1, "al", 3, WORKLOAD_KIND_VALIDATE, 0, 30, R"({"accuracy":0.9})");
  history.ReportWorkload(1, 1, "al", 4, WORKLOAD_KIND_VALIDATE, 0, 40, R"({"accuracy":0.7})");
  history.ReportWorkload(1, 1, "al", 5, WORKLOAD_KIND_VALIDATE, 0, 50, R"({"loss":0.1})");
  ProjectionState state;
  CatchUp(state, history);
  TrialView trial = MustGetTrial(state, 1);
  EXPECT_EQ(trial.best_validation().total_batches(), 20)
      << "larger is better; a tie keeps the first";
  EXPECT_EQ(trial.best_validation().searcher_metric(), 0.9);
  EXPECT_EQ(trial.latest_validation().total_batches(), 50);
  EXPECT_FALSE(trial.latest_validation().has_searcher_metric()) << "no accuracy in it";
  EXPECT_EQ(trial.total_batches_processed(), 50);
}

TEST(ExperimentProjectorTest, ATrialCreatedWhilePausedShowsPaused) {
  History history;
  history.CreateExperiment(1, "job-e1", SearcherConfig("loss", true), /*activate=*/false);
  history.CreateTrial(1, 1, 0, "{}");
  ProjectionState state;
  CatchUp(state, history);
  EXPECT_EQ(MustGetTrial(state, 1).state(), events::EXPERIMENT_STATE_PAUSED);
  history.ChangeExperimentState(1, events::EXPERIMENT_STATE_STOPPING_CANCELED);
  CatchUp(state, history);
  EXPECT_EQ(MustGetTrial(state, 1).state(), events::EXPERIMENT_STATE_STOPPING_CANCELED);
  // An experiment that ends before its trial did ends the trial's display too.
  history.ChangeExperimentState(1, events::EXPERIMENT_STATE_CANCELED);
  CatchUp(state, history);
  TrialView trial = MustGetTrial(state, 1);
  EXPECT_EQ(trial.state(), events::EXPERIMENT_STATE_CANCELED);
  EXPECT_EQ(trial.end_time_unix_micros(), history.time_of(history.last_offset()));
  EXPECT_FALSE(trial.ended());
  EXPECT_EQ(MustGetExperiment(state, 1).end_time_unix_micros(),
            history.time_of(history.last_offset()));
}

// Events about unknown ids, naming another experiment than the trial's, or repeating a
// creation change nothing: the digest is the one of the history without them.
TEST(ExperimentProjectorTest, UnknownIdsMismatchesAndRepeatsChangeNothing) {
  History history;
  history.CreateExperiment(1, "job-e1", SearcherConfig("loss", true));
  history.CreateTrial(1, 1, 0, R"({"lr":1})");
  history.SubmitRun("run-1", "job-e1", 1);
  history.SaveCheckpoint(1, 1, "c1", 10, 1, {{"a", 1}});
  ProjectionState state;
  CatchUp(state, history);
  const std::string before = Digest(state);

  history.CreateExperiment(1, "job-other", SearcherConfig("acc", false));  // a repeat
  history.CreateExperiment(0, "job-zero", "{}");                           // not an id
  history.CreateTrial(1, 1, 5, R"({"lr":2})");                             // a repeat
  history.CreateTrial(7, 2, 0, "{}");                                      // unknown experiment
  history.TrainTo(2, 1, 100);                                              // another experiment
  history.TrainTo(1, 9, 100);                                              // unknown trial
  history.CloseTrial(1, 9);
  history.RestartTrial(1, 9, 3);
  history.EndTrial(1, 9, events::EXPERIMENT_STATE_ERROR);
  history.EndTrial(1, 1, events::EXPERIMENT_STATE_ACTIVE);  // not a terminal state
  history.ChangeExperimentState(7, events::EXPERIMENT_STATE_PAUSED);
  history.ReportWorkload(1, 9, "al", 1, WORKLOAD_KIND_TRAIN, 10, 10, "{}");
  history.ReportWorkload(1, 1, "al", 0, WORKLOAD_KIND_UNSPECIFIED, 0, 10);  // no result
  history.ReportWorkload(1, 1, "al", 1, WORKLOAD_KIND_CHECKPOINT, 0, 10);   // CheckpointSaved's
  history.SaveCheckpoint(1, 1, "c1", 20, 2, {{"b", 2}});                    // a repeat
  history.SaveCheckpoint(1, 9, "c9", 20, 2, {});                            // unknown trial
  history.SaveCheckpoint(2, 1, "c2", 20, 2, {});                            // another experiment
  history.DeleteCheckpoints(2, {"c1"});                                     // not experiment 2's
  history.SubmitRun("run-1", "job-e1", 1);                                  // a repeat
  history.SubmitRun("run-9", "job-e1", 9);                                  // unknown trial
  history.Submit("command", "command", "default", 42, 1);                   // not a trial's run
  history.Assign("command", "command.1", "a1", "i1", {0});
  history.Start("command", "command.1", "a1", 5);
  history.Exit("command", "command.1", "a1", 0, std::nullopt, "exited");
  history.Start("run-1", "run-1.9", "a1", 5);  // an allocation the run never had
  history.ChangeJob("job-unknown", 1, 1.0, "default", 0);
  history.Unknown();
  CatchUp(state, history);
  EXPECT_EQ(Digest(state), before);
  EXPECT_EQ(MustGetExperiment(state, 1).job_id(), "job-e1");
  EXPECT_FALSE(state.GetTrial(2)->has_value());
  EXPECT_FALSE(state.GetExperiment(0)->has_value());
}

TEST(ExperimentProjectorTest, EventsOfAFencedWriterAreIgnored) {
  History history;
  history.Claim(2);
  history.set_epoch(1);
  history.CreateExperiment(1, "job-e1", SearcherConfig("loss", true));
  history.set_epoch(2);
  history.CreateExperiment(2, "job-e2", SearcherConfig("loss", true));
  ProjectionState state;
  CatchUp(state, history);
  EXPECT_FALSE(state.GetExperiment(1)->has_value());
  EXPECT_TRUE(state.GetExperiment(2)->has_value());
}

// Ids in keys sort as numbers: 9 before 10, trial 20 before trial 100.
TEST(ExperimentProjectorTest, ListsAreInNumericOrder) {
  History history;
  for (int64_t id : {10, 2, 9}) {
    history.CreateExperiment(id, "job-" + std::to_string(id), SearcherConfig("loss", true));
  }
  history.CreateTrial(9, 100, 0, "{}");
  history.CreateTrial(9, 20, 1, "{}");
  history.CreateTrial(10, 3, 0, "{}");
  history.SaveCheckpoint(9, 100, "z-first", 1, 1, {});
  history.SaveCheckpoint(9, 20, "y-second", 1, 1, {});
  history.SaveCheckpoint(9, 20, "x-third", 2, 1, {});
  history.SaveCheckpoint(10, 3, "w-other", 1, 1, {});
  ProjectionState state;
  CatchUp(state, history);
  auto experiments = state.ListExperiments();
  ASSERT_TRUE(experiments.ok());
  std::vector<int64_t> ids;
  for (const auto& experiment : *experiments) ids.push_back(experiment.experiment_id());
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 9, 10}));
  auto trials = state.ListTrials(9);
  ASSERT_TRUE(trials.ok());
  ids.clear();
  for (const auto& trial : *trials) ids.push_back(trial.trial_id());
  EXPECT_EQ(ids, (std::vector<int64_t>{20, 100}));
  EXPECT_EQ(CheckpointUuids(state, 9, 0),
            (std::vector<std::string>{"y-second", "x-third", "z-first"}));
  EXPECT_EQ(CheckpointUuids(state, 9, 20), (std::vector<std::string>{"y-second", "x-third"}));
  EXPECT_TRUE(state.ListTrials(3)->empty()) << "3 is a trial id, not an experiment id";
}

// AddWorkload drives the digest, rebuild and crash tests of every projection: it must hold every
// event the experiments projection folds.
TEST(ExperimentProjectorTest, TheWorkloadHoldsEveryExperimentEvent) {
  History history;
  history.AddWorkload(4, 60);
  std::set<int> kinds;
  bool run = false;
  for (const auto& event : history.events()) {
    kinds.insert(event.payload_case());
    run |= event.has_task_submitted() && event.task_submitted().trial_id() != 0;
  }
  using E = events::Envelope;
  for (int kind :
       {E::kExperimentCreated, E::kTrialCreated, E::kTrialTrainTo, E::kTrialClosed,
        E::kTrialRestarted, E::kTrialEnded, E::kExperimentStateChanged, E::kTrialWorkloadReported,
        E::kCheckpointSaved, E::kCheckpointsDeleted, E::kExperimentUpdated, E::kExperimentArchived,
        E::kExperimentDeleted, E::kExperimentContinued, E::kTrialKillRequested}) {
    EXPECT_TRUE(kinds.count(kind)) << kind;
  }
  EXPECT_TRUE(run);
  ProjectionState state;
  CatchUp(state, history);
  auto experiments = state.ListExperiments();
  ASSERT_TRUE(experiments.ok());
  std::set<events::ExperimentState> states;
  for (const auto& experiment : *experiments) states.insert(experiment.state());
  EXPECT_EQ(states, (std::set<events::ExperimentState>{
                        events::EXPERIMENT_STATE_PAUSED, events::EXPERIMENT_STATE_CANCELED,
                        events::EXPERIMENT_STATE_COMPLETED, events::EXPERIMENT_STATE_ERROR}));
}

// The live projection (small batches), a rebuild and the in-memory fold agree byte for byte, and
// the live accessors read what the fold holds.
TEST(ExperimentProjectionsTest, LiveEqualsRebuiltEqualsInMemory) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(3, 90);
  ASSERT_TRUE(history.AppendTo(log).ok());
  projections::EngineOptions options;
  options.max_batch_events = 7;
  auto live = Projections::Open(dir.Sub("live"), &log, options);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ASSERT_TRUE((*live)->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());
  ProjectionState state;
  CatchUp(state, history);

  auto live_digest = (*live)->Digest(kExperimentsProjector);
  ASSERT_TRUE(live_digest.ok()) << live_digest.status().ToString();
  EXPECT_EQ(*live_digest, Digest(state));
  auto rebuilt =
      RebuildProjections(dir.Sub("rebuilt"), &log, {kExperimentsProjector}, std::nullopt, 50);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  ASSERT_EQ(rebuilt->size(), 1u);
  EXPECT_EQ((*rebuilt)[0].digest, *live_digest);
  EXPECT_EQ((*rebuilt)[0].next_offset, history.events().size());

  auto serialize = [](const auto& views) {
    std::vector<std::string> bytes;
    for (const auto& view : views) bytes.push_back(view.SerializeAsString());
    return bytes;
  };
  auto live_experiments = (*live)->ListExperiments();
  auto folded_experiments = state.ListExperiments();
  ASSERT_TRUE(live_experiments.ok() && folded_experiments.ok());
  ASSERT_EQ(live_experiments->size(), 9u);
  EXPECT_EQ(serialize(*live_experiments), serialize(*folded_experiments));
  for (const auto& experiment : *folded_experiments) {
    const int64_t id = experiment.experiment_id();
    EXPECT_EQ((*live)->GetExperiment(id)->value().SerializeAsString(),
              experiment.SerializeAsString());
    auto live_trials = (*live)->ListTrials(id);
    auto folded_trials = state.ListTrials(id);
    ASSERT_TRUE(live_trials.ok() && folded_trials.ok());
    ASSERT_EQ(live_trials->size(), 2u);
    EXPECT_EQ(serialize(*live_trials), serialize(*folded_trials));
    for (const auto& trial : *folded_trials) {
      EXPECT_EQ((*live)->GetTrial(trial.trial_id())->value().SerializeAsString(),
                trial.SerializeAsString());
      EXPECT_EQ(serialize(*(*live)->ListWorkloads(trial.trial_id())),
                serialize(*state.ListWorkloads(trial.trial_id())));
    }
    auto live_checkpoints = (*live)->ListCheckpoints(id, 0);
    ASSERT_TRUE(live_checkpoints.ok());
    EXPECT_EQ(live_checkpoints->size(), 2u);
    EXPECT_EQ(serialize(*live_checkpoints), serialize(*state.ListCheckpoints(id, 0)));
    for (const auto& checkpoint : *live_checkpoints) {
      EXPECT_EQ((*live)->GetCheckpoint(checkpoint.uuid())->value().SerializeAsString(),
                checkpoint.SerializeAsString());
    }
  }
}

}  // namespace
}  // namespace cairn
