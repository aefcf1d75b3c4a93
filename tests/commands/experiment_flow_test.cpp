// The experiment lifecycle on the pure write side: the decider, the experiment reactor and the
// scheduler driven the way the writer drives them, with trial processes played by the test
// through ReportWorkload and exit reports.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

#include "commands/experiments/experiment_config.h"
#include "commands/experiments/experiment_decider.h"
#include "commands/experiments/experiment_reactor.h"
#include "commands/experiments/experiment_state.h"
#include "commands/scheduler/explain.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

using testing::Agent;
using testing::Cluster;

constexpr const char* kGridConfig = R"(
name: grid
entrypoint: model_def:Trial
hyperparameters:
  lr:
    type: categorical
    vals: [0.1, 0.01]
searcher:
  name: grid
  metric: loss
  max_length: {batches: 200}
scheduling_unit: 100
max_restarts: 1
checkpoint_storage:
  type: shared_fs
  host_path: /tmp/cairn-test-checkpoints
  save_trial_latest: 1
  save_trial_best: 0
)";

CreateExperiment Experiment(const std::string& yaml, bool activate = true) {
  auto config = experiments::ParseExperimentConfig(yaml);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  CreateExperiment command;
  command.created.set_name(config->name);
  command.created.set_owner("alice");
  command.created.set_original_config(yaml);
  command.created.set_config_json(config->effective.dump());
  command.created.set_seed(7);
  command.created.set_context_digest("sha256:00");
  command.created.set_activate(activate);
  return command;
}

// A canonical UUID made from a readable label, so tests can name their checkpoints.
std::string TestUuid(const std::string& label) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : label) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char text[37];
  std::snprintf(text, sizeof(text), "00000000-0000-4000-8000-%012llx",
                static_cast<unsigned long long>(hash & 0xffffffffffffull));
  return text;
}

// Plays trial processes: reports workloads for a task's current allocation and reads the answer
// the reactor recorded.
class Harness {
 public:
  explicit Harness(Cluster& cluster) : cluster_(cluster) {}

  const TrialRecord& Trial(int64_t trial_id) { return cluster_.state.trials.at(trial_id); }
  const TaskRecord& RunOf(int64_t trial_id) {
    return cluster_.state.tasks.at(Trial(trial_id).task_id);
  }

  // Reports `completed` for the trial's current process and returns the next workload.
  events::TrialWorkloadAssigned Report(int64_t trial_id, events::WorkloadKind completed,
                                       int64_t batches = 0, const std::string& metrics = "{}",
                                       const std::string& uuid = "") {
    const TaskRecord& task = RunOf(trial_id);
    const TrialRecord& trial = Trial(trial_id);
    ReportWorkload report;
    report.allocation_id = task.allocation_id;
    report.sequence = trial.workload_allocation == task.allocation_id ? trial.last_sequence + 1 : 0;
    report.completed = completed;
    report.batches = batches;
    report.metrics_json = metrics;
    if (completed == events::WORKLOAD_KIND_CHECKPOINT) {
      report.checkpoint.set_uuid(uuid.empty() || uuid.size() == 36 ? uuid : TestUuid(uuid));
      report.checkpoint.set_total_batches(trial.batches);
      report.checkpoint.set_size_bytes(10);
    }
    auto decision = cluster_.Run(report);
    EXPECT_TRUE(decision.ok()) << decision.status().ToString();
    EXPECT_FALSE(Trial(trial_id).awaiting_answer);
    return Trial(trial_id).last_answer;
  }

  // Runs the trial's current process through every workload the master gives it, reporting
  // `loss` at validations, until it is told to exit; then the process exits 0. `saved` is called
  // with each checkpoint's uuid once it is recorded.
  std::vector<std::string> RunToExit(
      int64_t trial_id, double loss,
      const std::function<void(const std::string& uuid)>& saved = nullptr) {
    std::vector<std::string> seen;
    auto next = Report(trial_id, events::WORKLOAD_KIND_UNSPECIFIED);
    while (next.kind() != events::WORKLOAD_KIND_EXIT && seen.size() < 100) {
      seen.push_back(events::WorkloadKind_Name(next.kind()));
      switch (next.kind()) {
        case events::WORKLOAD_KIND_TRAIN:
          next = Report(trial_id, next.kind(), next.batches(), R"({"loss": 1})");
          break;
        case events::WORKLOAD_KIND_VALIDATE:
          next = Report(trial_id, next.kind(), 0, nlohmann::json{{"loss", loss}}.dump());
          break;
        default:
          next = Report(trial_id, next.kind(), 0, "{}",
                        "ckpt-" + std::to_string(trial_id) + "-" + std::to_string(++uuids_));
          if (saved) saved(Trial(trial_id).latest_checkpoint);
          break;
      }
    }
    Exit(trial_id, 0);
    return seen;
  }

  void Exit(int64_t trial_id, int exit_code) {
    const std::string task_id = Trial(trial_id).task_id;
    auto decision = cluster_.Run(testing::Exit(task_id, exit_code));
    EXPECT_TRUE(decision.ok()) << decision.status().ToString();
  }

 private:
  Cluster& cluster_;
  int uuids_ = 0;
};

int Count(const Cluster& cluster, events::Envelope::PayloadCase payload) {
  int count = 0;
  for (const auto& event : cluster.all_events) count += event.payload_case() == payload;
  return count;
}

// The TrialCreated that created `trial_id`, or nullptr.
const events::TrialCreated* CreatedEventOf(const Cluster& cluster, int64_t trial_id) {
  for (const auto& event : cluster.all_events) {
    if (event.has_trial_created() && event.trial_created().trial_id() == trial_id) {
      return &event.trial_created();
    }
  }
  return nullptr;
}

class ExperimentFlowTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cluster.Run(Agent("a1", 2)).ok()); }

  const ExperimentRecord& Experiment1() { return cluster.state.experiments.at(1); }

  Cluster cluster;
  Harness harness{cluster};
};

TEST_F(ExperimentFlowTest, GridRunsEveryPointToCompletion) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  ASSERT_EQ(Experiment1().trial_ids, (std::vector<int64_t>{1, 2}));
  // Both trials got their length, a run, and a slot in the same write.
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialTrainTo), 2);
  EXPECT_EQ(cluster.Holding(),
            (std::vector<std::string>{TrialRunTaskId(1, 1, 1), TrialRunTaskId(1, 2, 1)}));
  EXPECT_EQ(harness.RunToExit(1, 0.5),
            (std::vector<std::string>{"WORKLOAD_KIND_TRAIN", "WORKLOAD_KIND_TRAIN",
                                      "WORKLOAD_KIND_VALIDATE", "WORKLOAD_KIND_CHECKPOINT"}));
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_COMPLETED);
  EXPECT_EQ(harness.Trial(1).batches, 200);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_ACTIVE);
  harness.RunToExit(2, 0.25);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_COMPLETED);
  EXPECT_FALSE(cluster.state.jobs.at("experiment-1").accepts_changes());
}

TEST_F(ExperimentFlowTest, ARetriedReportGetsTheSameAnswerAndIsRecordedOnce) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  auto first = harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  auto train = harness.Report(1, events::WORKLOAD_KIND_TRAIN, 100, R"({"loss": 1})");
  size_t events_before = cluster.all_events.size();
  ReportWorkload retry;
  retry.allocation_id = harness.RunOf(1).allocation_id;
  retry.sequence = 1;
  retry.completed = events::WORKLOAD_KIND_TRAIN;
  retry.batches = 100;
  retry.metrics_json = R"({"loss": 1})";
  ASSERT_TRUE(cluster.Run(retry).ok());
  EXPECT_EQ(cluster.all_events.size(), events_before);
  EXPECT_EQ(harness.Trial(1).last_answer.SerializeAsString(), train.SerializeAsString());
  EXPECT_EQ(harness.Trial(1).batches, 100);
  // Out of order, or a result that is not what was assigned, is refused.
  retry.sequence = 5;
  EXPECT_EQ(cluster.Run(retry).status().code(), StatusCode::kFailedPrecondition);
  retry.sequence = 2;
  retry.batches = 7;
  EXPECT_EQ(cluster.Run(retry).status().code(), StatusCode::kInvalidArgument);
  (void)first;
}

// searcher.source_trial_id / source_checkpoint_uuid: every trial of the new experiment begins
// from the source's checkpoint, at batch 0 (Determined's warm start), until it saves its own.
TEST_F(ExperimentFlowTest, AWarmStartedTrialBeginsFromItsSourceCheckpoint) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  harness.RunToExit(1, 0.5);
  harness.RunToExit(2, 0.1);
  const std::string source = harness.Trial(1).latest_checkpoint;
  ASSERT_FALSE(source.empty());
  auto warm = [](const std::string& line) {
    return "name: warm\nentrypoint: model_def:Trial\nsearcher:\n  name: single\n  metric: loss\n"
           "  max_length: {batches: 100}\n" +
           line +
           "\ncheckpoint_storage:\n  type: shared_fs\n  host_path: /tmp/cairn-test-checkpoints\n";
  };
  EXPECT_EQ(cluster.Run(Experiment(warm("  source_trial_id: 99"))).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(cluster.Run(Experiment(warm("  source_checkpoint_uuid: " + TestUuid("none"))))
                .status()
                .code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(cluster.Run(Experiment(warm("  source_trial_id: 1"))).ok());
  const ExperimentRecord& warmed = cluster.state.experiments.at(2);
  EXPECT_EQ(warmed.warm_start_checkpoint, source);
  const int64_t trial_id = warmed.trial_ids.at(0);
  auto start = DescribeLiveTrialRun(cluster.state, harness.RunOf(trial_id).allocation_id);
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  EXPECT_EQ(start->latest_checkpoint, source);
  EXPECT_EQ(start->checkpoint_batches, 0);
  EXPECT_EQ(harness.Report(trial_id, events::WORKLOAD_KIND_UNSPECIFIED).start_batch(), 0);
  // A checkpoint named by its uuid works the same way.
  ASSERT_TRUE(
      cluster
          .Run(Experiment(warm("  source_checkpoint_uuid: " + harness.Trial(2).latest_checkpoint)))
          .ok());
  EXPECT_EQ(cluster.state.experiments.at(3).warm_start_checkpoint,
            harness.Trial(2).latest_checkpoint);
}

constexpr const char* kPbtConfig = R"(
name: pbt
entrypoint: model_def:Trial
hyperparameters:
  lr: {type: double, minval: 0.01, maxval: 1}
searcher:
  name: pbt
  metric: loss
  population_size: 2
  num_rounds: 2
  length_per_round: {batches: 100}
  replace_function: {truncate_fraction: 0.5}
  explore_function: {resample_probability: 0, perturb_factor: 0.2}
scheduling_unit: 100
checkpoint_storage:
  type: shared_fs
  host_path: /tmp/cairn-test-checkpoints
)";

// Population-based training: a round ends with a checkpoint, then the validation; the worse of
// two is closed and the better is cloned from its round's checkpoint, at batch 0.
TEST_F(ExperimentFlowTest, APbtRoundClonesTheBetterTrialFromItsRoundsCheckpoint) {
  ASSERT_TRUE(cluster.Run(Experiment(kPbtConfig)).ok());
  ASSERT_EQ(Experiment1().trial_ids, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(harness.RunToExit(1, 0.2),
            (std::vector<std::string>{"WORKLOAD_KIND_TRAIN", "WORKLOAD_KIND_CHECKPOINT",
                                      "WORKLOAD_KIND_VALIDATE"}));
  const std::string round_checkpoint = harness.Trial(1).latest_checkpoint;
  ASSERT_FALSE(round_checkpoint.empty());
  EXPECT_EQ(Experiment1().trial_ids.size(), 2u) << "the round waits for the whole population";
  harness.RunToExit(2, 0.5);
  EXPECT_TRUE(harness.Trial(2).closed);
  EXPECT_EQ(harness.Trial(2).state, events::EXPERIMENT_STATE_COMPLETED);
  EXPECT_EQ(harness.Trial(1).train_to, 200);
  ASSERT_EQ(Experiment1().trial_ids, (std::vector<int64_t>{1, 2, 3}));
  const TrialRecord& clone = harness.Trial(3);
  EXPECT_EQ(clone.cloned_from_trial, 1);
  EXPECT_EQ(clone.warm_start_checkpoint, round_checkpoint);
  EXPECT_EQ(clone.train_to, 100);
  const double parent_lr = nlohmann::json::parse(harness.Trial(1).hparams_json)["lr"];
  const double clone_lr = nlohmann::json::parse(clone.hparams_json)["lr"];
  EXPECT_TRUE(std::abs(clone_lr - parent_lr * 0.8) < 1e-9 ||
              std::abs(clone_lr - std::min(parent_lr * 1.2, 1.0)) < 1e-9)
      << parent_lr << " -> " << clone_lr;
  // The exploit and explore decisions are events, with their reasons.
  const events::TrialCreated* created = CreatedEventOf(cluster, 3);
  ASSERT_NE(created, nullptr);
  const std::string created_reason = created->reason();
  EXPECT_EQ(created->warm_start_checkpoint_uuid(), round_checkpoint);
  EXPECT_EQ(created->cloned_from_trial_id(), 1);
  for (const auto& event : cluster.all_events) {
    if (event.has_trial_closed() && event.trial_closed().trial_id() == 2) {
      EXPECT_NE(event.trial_closed().reason().find("among the worst 1 of 2 (loss=0.5"),
                std::string::npos)
          << event.trial_closed().reason();
    }
  }
  EXPECT_NE(created_reason.find("clone of trial request 1 (loss=0.2, rank 1 of 2)"),
            std::string::npos)
      << created_reason;
  EXPECT_NE(created_reason.find("begins from trial 1's checkpoint " + round_checkpoint),
            std::string::npos)
      << created_reason;
  // The clone's run begins from the parent's checkpoint at batch 0.
  auto start = DescribeLiveTrialRun(cluster.state, harness.RunOf(3).allocation_id);
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  EXPECT_EQ(start->latest_checkpoint, round_checkpoint);
  EXPECT_EQ(start->checkpoint_batches, 0);
  // Garbage collection keeps the source while the clone has no checkpoint of its own.
  EXPECT_TRUE(cluster.state.WarmStartSources().count(round_checkpoint));
  // The last round: both train, and the search completes.
  harness.RunToExit(1, 0.1);
  harness.RunToExit(3, 0.3);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_COMPLETED);
  EXPECT_EQ(harness.Trial(3).batches, 100) << "the clone trained its own round from batch 0";
  EXPECT_EQ(harness.Trial(1).batches, 200);
}

TEST_F(ExperimentFlowTest, AFailedRunRestartsFromItsCheckpointThenErrorsPastMaxRestarts) {
  auto config = std::string(kGridConfig) + "min_checkpoint_period: {batches: 100}\n";
  ASSERT_TRUE(cluster.Run(Experiment(config)).ok());
  auto next = harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  next = harness.Report(1, events::WORKLOAD_KIND_TRAIN, next.batches(), "{}");
  ASSERT_EQ(next.kind(), events::WORKLOAD_KIND_CHECKPOINT);
  harness.Report(1, events::WORKLOAD_KIND_CHECKPOINT, 0, "{}", "c1");
  harness.Exit(1, 137);  // the process died after its checkpoint at 100 batches
  EXPECT_EQ(harness.Trial(1).restarts, 1);
  EXPECT_EQ(harness.Trial(1).task_id, TrialRunTaskId(1, 1, 2));
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialRestarted), 1);
  // The new process resumes at the checkpoint.
  auto resumed = harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  EXPECT_EQ(resumed.kind(), events::WORKLOAD_KIND_TRAIN);
  EXPECT_EQ(resumed.start_batch(), 100);
  // max_restarts is 1: the second failure ends the trial, and the search goes on without it.
  harness.Exit(1, 1);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_ERROR);
  harness.RunToExit(2, 0.1);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_COMPLETED);
}

TEST_F(ExperimentFlowTest, PauseCheckpointsAndReleasesActivateResumes) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  auto next = harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kPause}).ok());
  next = harness.Report(1, events::WORKLOAD_KIND_TRAIN, next.batches(), "{}");
  EXPECT_EQ(next.kind(), events::WORKLOAD_KIND_CHECKPOINT);
  next = harness.Report(1, events::WORKLOAD_KIND_CHECKPOINT, 0, "{}", "p1");
  EXPECT_EQ(next.kind(), events::WORKLOAD_KIND_EXIT);
  EXPECT_EQ(next.reason(), "the experiment is PAUSED");
  harness.Exit(1, 0);
  EXPECT_TRUE(harness.Trial(1).task_id.empty());
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_ACTIVE);
  EXPECT_EQ(cluster.Holding("experiment-1"), (std::vector<std::string>{TrialRunTaskId(1, 2, 1)}));
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kActivate}).ok());
  EXPECT_EQ(harness.Trial(1).task_id, TrialRunTaskId(1, 1, 2));
  auto resumed = harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  EXPECT_EQ(resumed.start_batch(), 100);
  EXPECT_EQ(harness.Trial(1).restarts, 0);  // a pause is not a failure
  // Pausing twice, or activating an active experiment, changes nothing.
  auto again = cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kActivate});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->events.empty());
}

TEST_F(ExperimentFlowTest, KillEndsEveryTrialAsCanceled) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kKill}).ok());
  EXPECT_EQ(cluster.Last(events::Envelope::kKillRequested).size(), 2u);
  harness.Exit(1, 143);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_STOPPING_KILLED);
  harness.Exit(2, 143);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_CANCELED);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_CANCELED);
  EXPECT_EQ(harness.Trial(2).state, events::EXPERIMENT_STATE_CANCELED);
  // A killed experiment cannot be paused or activated.
  EXPECT_EQ(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kActivate}).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(ExperimentFlowTest, GarbageCollectionKeepsTheLatestCheckpointOfEachTrial) {
  auto config = std::string(kGridConfig) + "min_checkpoint_period: {batches: 100}\n";
  ASSERT_TRUE(cluster.Run(Experiment(config)).ok());
  harness.RunToExit(1, 0.5);
  ASSERT_EQ(harness.Trial(1).checkpoints.size(), 2u);
  auto deleted = cluster.Last(events::Envelope::kCheckpointsDeleted);
  ASSERT_EQ(deleted.size(), 1u);
  ASSERT_EQ(deleted[0].checkpoints_deleted().uuids_size(), 1);
  EXPECT_EQ(deleted[0].checkpoints_deleted().uuids(0), harness.Trial(1).checkpoints[0]);
  EXPECT_TRUE(cluster.state.checkpoints.at(harness.Trial(1).checkpoints[0]).deleted);
  EXPECT_FALSE(cluster.state.checkpoints.at(harness.Trial(1).latest_checkpoint).deleted);
}

TEST_F(ExperimentFlowTest, GarbageCollectionKeepsACheckpointAModelVersionPointsAt) {
  auto config = std::string(kGridConfig) + "min_checkpoint_period: {batches: 100}\n";
  ASSERT_TRUE(cluster.Run(Experiment(config)).ok());
  CreateModel model;
  model.name = "keeper";
  ASSERT_TRUE(cluster.Run(model).ok());
  // The trial's first checkpoint is registered as soon as it is saved; the policy keeps only the
  // latest, so without the registration it would be collected when the trial ends.
  std::string registered;
  harness.RunToExit(1, 0.5, [&](const std::string& uuid) {
    if (!registered.empty()) return;
    registered = uuid;
    RegisterModelVersion version;
    version.model_id = 1;
    version.checkpoint_uuid = uuid;
    ASSERT_TRUE(cluster.Run(version).ok());
  });
  ASSERT_EQ(harness.Trial(1).checkpoints.size(), 2u);
  ASSERT_EQ(registered, harness.Trial(1).checkpoints[0]);
  EXPECT_TRUE(cluster.state.IsCheckpointRegistered(registered));
  EXPECT_EQ(Count(cluster, events::Envelope::kCheckpointsDeleted), 0);
  EXPECT_FALSE(cluster.state.checkpoints.at(registered).deleted);
  EXPECT_FALSE(cluster.state.checkpoints.at(harness.Trial(1).latest_checkpoint).deleted);
}

TEST_F(ExperimentFlowTest, OnlyAUsersKillCancelsATrialOtherKillsRestartIt) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  // Disabling the agent (no drain) kills both runs: that is no reason to give up the trials.
  ASSERT_TRUE(cluster.Run(DisableAgent{"a1", false}).ok());
  harness.Exit(1, 143);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_ACTIVE);
  EXPECT_EQ(harness.Trial(1).restarts, 1);
  ASSERT_TRUE(cluster.Run(EnableAgent{"a1"}).ok());
  // A user killing a run's task ends its trial.
  ASSERT_TRUE(cluster.Run(KillTask{harness.Trial(1).task_id, "not this one"}).ok());
  harness.Exit(1, 143);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_CANCELED);
}

TEST_F(ExperimentFlowTest, ALogPolicyLabelsItsTrialAndCancelRetriesKeepsAFailedRunDown) {
  const std::string config = std::string(kGridConfig) +
                             "log_policies:\n"
                             "  - {name: Exit7, pattern: 'code 7', action: cancel_retries}\n";
  ASSERT_TRUE(cluster.Run(Experiment(config)).ok());
  const std::string run = harness.Trial(1).task_id;
  const experiments::LogPolicy exit7{"Exit7", "code 7", experiments::kLogActionCancelRetries};
  const RecordLogPolicyMatch match{run, "a1", exit7, "worker exited with code 7"};
  ASSERT_TRUE(cluster.Run(match, "", "system:log-policies").ok());
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialLogPolicyMatched), 1);
  EXPECT_EQ(harness.Trial(1).log_policy_matched, "Exit7");
  // The same match again changes nothing and records nothing.
  ASSERT_TRUE(cluster.Run(match, "", "system:log-policies").ok());
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialLogPolicyMatched), 1);
  // Only the experiment's own policies, and never a user's report.
  auto foreign = cluster.Run(RecordLogPolicyMatch{run, "a1", {"Other", "x", ""}, "x"}, "",
                             "system:log-policies");
  EXPECT_EQ(foreign.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster.Run(match).status().code(), StatusCode::kPermissionDenied);

  // Its failure is not retried, though max_restarts allows one; the other trial's is.
  harness.Exit(1, 7);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_ERROR);
  EXPECT_EQ(harness.Trial(1).restarts, 0);
  const auto ended = cluster.Last(events::Envelope::kTrialEnded);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_NE(ended[0].trial_ended().reason().find("matched logs to a don't retry policy"),
            std::string::npos);
  harness.Exit(2, 1);
  EXPECT_EQ(harness.Trial(2).restarts, 1);
}

TEST_F(ExperimentFlowTest, ExcludeNodeKeepsTheTrialsLaterRunsOffTheAgent) {
  std::string config = std::string(kGridConfig) +
                       "log_policies:\n"
                       "  - {name: Xid, pattern: 'Xid 79', action: exclude_node}\n";
  config.replace(config.find("max_restarts: 1"), 15, "max_restarts: 3");
  ASSERT_TRUE(cluster.Run(Experiment(config)).ok());
  ASSERT_TRUE(cluster.Run(Agent("a2", 1)).ok());
  ASSERT_EQ(harness.RunOf(1).agent_id, "a1");
  const experiments::LogPolicy xid{"Xid", "Xid 79", experiments::kLogActionExcludeNode};
  ASSERT_TRUE(cluster
                  .Run(RecordLogPolicyMatch{harness.Trial(1).task_id, "a1", xid, "NVRM: Xid 79"},
                       "", "system:log-policies")
                  .ok());
  EXPECT_EQ(harness.Trial(1).excluded_agents, std::vector<std::string>{"a1"});
  harness.Exit(1, 1);
  EXPECT_EQ(harness.Trial(1).restarts, 1);
  const auto submitted = cluster.Last(events::Envelope::kTaskSubmitted);
  ASSERT_EQ(submitted.size(), 1u);
  EXPECT_EQ(submitted[0].task_submitted().resources().excluded_agents(0), "a1");
  // a1 has a free slot again, but the run goes to a2.
  EXPECT_EQ(harness.RunOf(1).agent_id, "a2");

  // Excluded from both, the next run waits, and the explanation says why.
  ASSERT_TRUE(cluster
                  .Run(RecordLogPolicyMatch{harness.Trial(1).task_id, "a2", xid, "NVRM: Xid 79"},
                       "", "system:log-policies")
                  .ok());
  harness.Exit(1, 1);
  const TaskRecord& waiting = harness.RunOf(1);
  EXPECT_EQ(waiting.state, TaskState::kQueued);
  auto explained = ExplainTask(cluster.state, waiting.task_id, cluster.now);
  ASSERT_TRUE(explained.ok()) << explained.status().ToString();
  EXPECT_NE(explained->reason.find("exclude_node) keeps it off agent a1 a2"), std::string::npos)
      << explained->reason;
}

TEST_F(ExperimentFlowTest, EachPolicyIsRecordedOncePerRunHoweverOftenItsLinesMatch) {
  const std::string config = std::string(kGridConfig) +
                             "log_policies:\n"
                             "  - {name: Oom, pattern: 'out of memory'}\n"
                             "  - {name: Any, pattern: 'ERROR'}\n";
  ASSERT_TRUE(cluster.Run(Experiment(config)).ok());
  const std::string run = harness.Trial(1).task_id;
  const std::vector<experiments::LogPolicy> policies = {{"Oom", "out of memory", ""},
                                                        {"Any", "ERROR", ""}};
  for (int batch = 0; batch < 3; ++batch) {
    for (const auto& policy : policies) {
      ASSERT_TRUE(cluster
                      .Run(RecordLogPolicyMatch{run, "a1", policy, "ERROR: out of memory"}, "",
                           "system:log-policies")
                      .ok());
    }
  }
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialLogPolicyMatched), 2);
  EXPECT_EQ(harness.Trial(1).log_policy_matched, "Any");
  // The next run's matches are its own.
  harness.Exit(1, 1);
  ASSERT_TRUE(cluster
                  .Run(RecordLogPolicyMatch{harness.Trial(1).task_id, "a1", policies[0], "oom"}, "",
                       "system:log-policies")
                  .ok());
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialLogPolicyMatched), 3);
}

TEST_F(ExperimentFlowTest, ARunThatExitsWithoutBeingToldCountsAsAFailure) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  // Pause and activate leave an EXIT answer behind; the next run must not inherit it.
  harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kPause}).ok());
  auto next = harness.Report(1, events::WORKLOAD_KIND_TRAIN, 100, "{}");
  next = harness.Report(1, events::WORKLOAD_KIND_CHECKPOINT, 0, "{}", "p1");
  ASSERT_EQ(next.kind(), events::WORKLOAD_KIND_EXIT);
  harness.Exit(1, 0);
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kActivate}).ok());
  harness.Exit(1, 0);  // a startup hook that says `exit 0`: the run never asked for work
  EXPECT_EQ(harness.Trial(1).restarts, 1);
  harness.Exit(1, 0);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_ERROR);  // max_restarts is 1
}

TEST_F(ExperimentFlowTest, AClosedTrialThatCrashesWithEverythingSavedCompletes) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  auto next = harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  while (next.kind() != events::WORKLOAD_KIND_EXIT) {
    if (next.kind() == events::WORKLOAD_KIND_TRAIN) {
      next = harness.Report(1, next.kind(), next.batches(), "{}");
    } else if (next.kind() == events::WORKLOAD_KIND_VALIDATE) {
      next = harness.Report(1, next.kind(), 0, R"({"loss": 0.3})");
    } else {
      next = harness.Report(1, next.kind(), 0, "{}", "final");
    }
  }
  harness.Exit(1, 1);  // crashed while exiting
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_COMPLETED);
  EXPECT_EQ(harness.Trial(1).restarts, 0);
}

TEST_F(ExperimentFlowTest, ResultsThatCouldHarmAreRefused) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  auto next = harness.Report(1, events::WORKLOAD_KIND_UNSPECIFIED);
  next = harness.Report(1, events::WORKLOAD_KIND_TRAIN, 100, "{}");
  next = harness.Report(1, events::WORKLOAD_KIND_TRAIN, 100, "{}");
  ASSERT_EQ(next.kind(), events::WORKLOAD_KIND_VALIDATE);
  ReportWorkload report;
  report.allocation_id = harness.RunOf(1).allocation_id;
  report.sequence = harness.Trial(1).last_sequence + 1;
  report.completed = events::WORKLOAD_KIND_VALIDATE;
  report.metrics_json = R"({"accuracy": 0.9})";  // no `loss`, the searcher's metric
  auto refused = cluster.Run(report);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("loss"), std::string::npos);
  next = harness.Report(1, events::WORKLOAD_KIND_VALIDATE, 0, R"({"loss": 0.3})");
  ASSERT_EQ(next.kind(), events::WORKLOAD_KIND_CHECKPOINT);
  // A checkpoint id becomes a directory that garbage collection deletes: only a UUID will do.
  report.sequence = harness.Trial(1).last_sequence + 1;
  report.completed = events::WORKLOAD_KIND_CHECKPOINT;
  report.checkpoint.set_total_batches(200);
  for (const char* bad : {"..", ".", "a/b", "not-a-uuid"}) {
    report.checkpoint.set_uuid(bad);
    EXPECT_EQ(cluster.Run(report).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(cluster.state.checkpoints.empty());
}

TEST_F(ExperimentFlowTest, AnExperimentFromANewerSearcherEndsInErrorInsteadOfDiverging) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  events::Envelope newer = cluster.all_events.back();
  for (const auto& event : cluster.all_events) {
    if (event.has_experiment_created()) newer = event;
  }
  auto* created = newer.mutable_experiment_created();
  created->set_experiment_id(2);
  created->set_job_id("experiment-2");
  created->set_searcher_version(experiments::kSearcherVersion + 1);
  cluster.Append(newer);
  cluster.FollowUps();
  const ExperimentRecord& experiment = cluster.state.experiments.at(2);
  EXPECT_EQ(experiment.state, events::EXPERIMENT_STATE_ERROR);
  EXPECT_TRUE(experiment.trial_ids.empty());
  auto changed = cluster.Last(events::Envelope::kExperimentStateChanged);
  ASSERT_FALSE(changed.empty());
  EXPECT_NE(changed.back().experiment_state_changed().reason().find("searcher version"),
            std::string::npos);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_ACTIVE);  // the others go on
}

TEST_F(ExperimentFlowTest, AnExperimentCreatedPausedWaitsForActivation) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig, /*activate=*/false)).ok());
  EXPECT_EQ(Experiment1().trial_ids.size(), 2u);  // the searcher's trials exist
  EXPECT_TRUE(cluster.Holding().empty());         // but ask for nothing while paused
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kActivate}).ok());
  EXPECT_EQ(cluster.Holding().size(), 2u);
}

TEST_F(ExperimentFlowTest, BadConfigurationsAreRefused) {
  auto command = Experiment(kGridConfig);
  command.created.set_context_digest("");
  EXPECT_EQ(cluster.Run(command).status().code(), StatusCode::kInvalidArgument);
  command = Experiment(kGridConfig);
  command.created.mutable_resources()->set_resource_pool("nowhere");
  EXPECT_EQ(cluster.Run(command).status().code(), StatusCode::kInvalidArgument);
  command = Experiment(kGridConfig);
  command.created.set_config_json("{");
  EXPECT_FALSE(cluster.Run(command).ok());
  EXPECT_TRUE(cluster.state.experiments.empty());
}

TEST_F(ExperimentFlowTest, ReplayingTheLogRebuildsTheSameStateAndNeedsNoReaction) {
  auto config = std::string(kGridConfig) + "min_checkpoint_period: {batches: 100}\n";
  ASSERT_TRUE(cluster.Run(Experiment(config)).ok());
  harness.RunToExit(1, 0.5);
  auto next = harness.Report(2, events::WORKLOAD_KIND_UNSPECIFIED);
  harness.Report(2, events::WORKLOAD_KIND_TRAIN, next.batches(), "{}");
  DecisionState replayed;
  for (const auto& event : cluster.all_events) Apply(replayed, event);
  for (const auto& [trial_id, trial] : cluster.state.trials) {
    const TrialRecord& other = replayed.trials.at(trial_id);
    EXPECT_EQ(other.state, trial.state);
    EXPECT_EQ(other.batches, trial.batches);
    EXPECT_EQ(other.checkpoints, trial.checkpoints);
    EXPECT_EQ(other.last_answer.SerializeAsString(), trial.last_answer.SerializeAsString());
  }
  EXPECT_EQ(replayed.experiments.at(1).pending_ops.size(), 0u);
  EXPECT_DOUBLE_EQ(replayed.experiments.at(1).searcher->Progress(),
                   Experiment1().searcher->Progress());
  EXPECT_TRUE(ReactToExperiments(replayed).empty());
}

}  // namespace
}  // namespace cairn::commands

namespace cairn::commands {
namespace {

TEST_F(ExperimentFlowTest, AMovedExperimentsLaterRunsBelongToItsNewWorkspace) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  ASSERT_TRUE(cluster.Run(CreateWorkspace{"team", "", ""}).ok());
  ASSERT_TRUE(cluster.Run(CreateProject{2, "vision", ""}).ok());
  const int32_t project = cluster.state.tenancy.last_project_id;
  // The owner may move it only into a project where they may create experiments.
  cluster.AddUser("stranger");
  EXPECT_EQ(cluster.Run(MoveExperiment{1, project}, "", "user:stranger").status().code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(cluster.Run(MoveExperiment{1, project}).ok());
  EXPECT_EQ(Experiment1().workspace_id, 2);
  EXPECT_EQ(Experiment1().project_id, project);
  EXPECT_EQ(cluster.state.jobs.at("experiment-1").workspace_id, 2);
  UpdateProject archive;
  archive.project_id = project;
  archive.archived = true;
  ASSERT_TRUE(cluster.Run(archive).ok());
  EXPECT_EQ(cluster.Run(MoveExperiment{1, 1}).status().code(), StatusCode::kOk);
  EXPECT_EQ(cluster.Run(MoveExperiment{1, project}).status().code(),
            StatusCode::kFailedPrecondition);
  // A project with experiments is not deleted.
  EXPECT_EQ(cluster.Run(DeleteProject{1}).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ExperimentFlowTest, TrialRunsCarryTheirExperimentsWorkspace) {
  ASSERT_TRUE(cluster.Run(CreateWorkspace{"team", "", ""}).ok());
  ASSERT_TRUE(cluster.Run(CreateProject{2, "vision", ""}).ok());
  CreateExperiment create = Experiment(kGridConfig);
  create.created.set_project_id(cluster.state.tenancy.last_project_id);
  ASSERT_TRUE(cluster.Run(create).ok());
  EXPECT_EQ(Experiment1().workspace_id, 2);
  int runs = 0;
  for (const auto& event : cluster.all_events) {
    if (!event.has_task_submitted()) continue;
    EXPECT_EQ(event.task_submitted().workspace_id(), 2);
    ++runs;
  }
  EXPECT_EQ(runs, 2);
  // An unknown project is refused by name.
  CreateExperiment lost = Experiment(kGridConfig);
  lost.created.set_project_id(99);
  EXPECT_EQ(cluster.Run(lost).status().code(), StatusCode::kNotFound);
}

TEST_F(ExperimentFlowTest, KillingOneTrialCancelsItAndTheSearchGoesOn) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  auto killed = cluster.Run(KillTrial{1});
  ASSERT_TRUE(killed.ok()) << killed.status().ToString();
  ASSERT_EQ(killed->events.size(), 2u);
  EXPECT_TRUE(killed->events[0].has_trial_kill_requested());
  EXPECT_TRUE(killed->events[1].kill_requested().by_user());
  harness.Exit(1, 143);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_CANCELED);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_ACTIVE);  // trial 2 still trains
  // Killing it again, or a trial that does not exist.
  EXPECT_TRUE(cluster.Run(KillTrial{1})->events.empty());
  EXPECT_EQ(cluster.Run(KillTrial{99}).status().code(), StatusCode::kNotFound);
  harness.RunToExit(2, 0.5);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_COMPLETED);
}

TEST_F(ExperimentFlowTest, AKilledTrialWithoutARunEndsAtOnce) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kPause}).ok());
  harness.Exit(1, 0);  // paused: the run checkpoints and leaves
  ASSERT_TRUE(harness.Trial(1).task_id.empty());
  ASSERT_TRUE(cluster.Run(KillTrial{1}).ok());
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_CANCELED);
}

TEST_F(ExperimentFlowTest, DeletionWaitsForTheEndAndTakesTheCheckpointsAlong) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  using Kind = ExperimentAction::Kind;
  EXPECT_EQ(cluster.Run(ExperimentAction{1, Kind::kDelete}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(cluster.Run(ExperimentAction{1, Kind::kArchive}).status().code(),
            StatusCode::kFailedPrecondition);
  harness.RunToExit(1, 0.5);
  harness.RunToExit(2, 0.25);
  ASSERT_EQ(Experiment1().state, events::EXPERIMENT_STATE_COMPLETED);
  const std::string kept = harness.Trial(1).latest_checkpoint;
  ASSERT_FALSE(cluster.state.checkpoints.at(kept).deleted);
  // Checkpoints are deleted by hand only where the caller names them, once the experiment ended.
  EXPECT_EQ(cluster.Run(DeleteCheckpoints{{TestUuid("nothing")}}).status().code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, Kind::kArchive}).ok());
  EXPECT_TRUE(Experiment1().archived);
  auto deleted = cluster.Run(ExperimentAction{1, Kind::kDelete});
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  ASSERT_EQ(deleted->events.size(), 2u);
  EXPECT_EQ(deleted->events[0].checkpoints_deleted().uuids_size(), 2);  // one left per trial
  EXPECT_TRUE(deleted->events[1].has_experiment_deleted());
  EXPECT_TRUE(cluster.state.checkpoints.at(kept).deleted);
  // Gone for every command.
  for (Kind kind : {Kind::kActivate, Kind::kDelete, Kind::kUnarchive}) {
    EXPECT_EQ(cluster.Run(ExperimentAction{1, kind}).status().code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(cluster.Run(UpdateExperiment{1, "new name", {}, {}, {}, {}}).status().code(),
            StatusCode::kNotFound);
  // Its checkpoints are gone already: deleting one again changes nothing.
  auto again = cluster.Run(DeleteCheckpoints{{kept}});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->events.empty());
}

// det experiment set gc-policy: the ended trials' checkpoints the new policy drops go at once,
// the best of the experiment by its metric stays, and the configuration shows the new policy.
TEST_F(ExperimentFlowTest, AChangedGcPolicyCollectsWhatItDropsAtOnce) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  harness.RunToExit(1, 0.5);
  harness.RunToExit(2, 0.25);
  const std::string worse = harness.Trial(1).latest_checkpoint;
  const std::string best = harness.Trial(2).latest_checkpoint;
  ASSERT_FALSE(cluster.state.checkpoints.at(worse).deleted);
  UpdateExperiment change{1, {}, {}, {}, {}, {}};
  change.gc_policy = UpdateExperiment::GcPolicy{1, 0, 0};
  auto changed = cluster.Run(change);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_EQ(changed->events.size(), 2u);
  EXPECT_EQ(changed->events[0].experiment_updated().save_experiment_best(), 1);
  const auto& deleted = changed->events[1].checkpoints_deleted();
  ASSERT_EQ(deleted.uuids_size(), 1);
  EXPECT_EQ(deleted.uuids(0), worse);
  EXPECT_EQ(deleted.reason().rfind("gc policy changed: keeping the 0 latest", 0), 0u)
      << deleted.reason();
  EXPECT_TRUE(cluster.state.checkpoints.at(worse).deleted);
  EXPECT_FALSE(cluster.state.checkpoints.at(best).deleted);
  EXPECT_EQ(Experiment1().config->checkpoint_storage->save_experiment_best, 1);
  EXPECT_EQ(Experiment1().config->checkpoint_storage->save_trial_latest, 0);
  // Bad values, and nothing to collect from without checkpoint storage.
  change.gc_policy = UpdateExperiment::GcPolicy{-1, 0, 0};
  EXPECT_EQ(cluster.Run(change).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ExperimentFlowTest, UpdatesCarryOnlyWhatChangedAndRenameTheRuns) {
  ASSERT_TRUE(cluster.Run(Experiment(kGridConfig)).ok());
  auto renamed = cluster.Run(UpdateExperiment{
      1, "better", std::nullopt, "some notes", std::vector<std::string>{"a", "b"}, {}});
  ASSERT_TRUE(renamed.ok());
  const auto& updated = renamed->events.at(0).experiment_updated();
  EXPECT_EQ(updated.name(), "better");
  EXPECT_FALSE(updated.has_description());
  EXPECT_EQ(updated.notes(), "some notes");
  EXPECT_TRUE(updated.labels_set());
  EXPECT_EQ(updated.job_id(), "experiment-1");
  EXPECT_EQ(Experiment1().name, "better");
  EXPECT_EQ(cluster.Run(UpdateExperiment{1, "", {}, {}, {}, {}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster.Run(UpdateExperiment{1, {}, {}, {}, std::vector<std::string>{""}, {}})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  // A restarted run is named after the experiment's new name.
  harness.Exit(1, 1);
  bool seen = false;
  for (const auto& event : cluster.all_events) {
    if (!event.has_task_submitted() || event.task_submitted().task_id() != harness.Trial(1).task_id)
      continue;
    EXPECT_EQ(event.task_submitted().job_name(), "better");
    seen = true;
  }
  EXPECT_TRUE(seen);
}

// --- Trials running Determined's own package (ReportTrial) -----------------------------------

constexpr const char* kCoreApiConfig = R"(
name: core api
entrypoint: python3 train.py
searcher:
  name: single
  metric: x
max_restarts: 0
checkpoint_storage:
  type: shared_fs
  host_path: /tmp/cairn-test-checkpoints
)";

constexpr const char* kAshaConfig = R"(
name: asha
entrypoint: python3 train.py
hyperparameters:
  increment_by: {type: int, minval: 1, maxval: 8}
searcher:
  name: adaptive_asha
  metric: x
  max_trials: 4
  max_concurrent_trials: 4
  max_rungs: 2
  divisor: 2
  mode: aggressive
  time_metric: batches
  max_time: 100
max_restarts: 0
checkpoint_storage:
  type: shared_fs
  host_path: /tmp/cairn-test-checkpoints
)";

ReportTrial Metrics(const std::string& allocation_id, int64_t trial_id, const std::string& group,
                    int64_t steps, const std::string& metrics_json) {
  ReportTrial report;
  report.kind = ReportTrial::Kind::kMetrics;
  report.trial_id = trial_id;
  report.allocation_id = allocation_id;
  report.metrics.set_group(group);
  report.metrics.set_steps_completed(steps);
  report.metrics.set_metrics_json(metrics_json);
  report.metrics.set_trial_run_id(1);
  return report;
}

TEST_F(ExperimentFlowTest, AReportIsRecordedOnceAndOnlyFromTheTrialsLiveRun) {
  ASSERT_TRUE(cluster.Run(Experiment(kCoreApiConfig)).ok());
  const std::string run = harness.RunOf(1).allocation_id;
  auto report = Metrics(run, 1, "training", 10, R"({"x": 10})");
  ASSERT_TRUE(cluster.Run(report).ok());
  const size_t recorded = cluster.all_events.size();
  // The package retries a POST whose answer it lost: the same report again changes nothing.
  ASSERT_TRUE(cluster.Run(report).ok());
  EXPECT_EQ(cluster.all_events.size(), recorded);
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialMetricsReported), 1);
  // The next report of the group is new, even with the same values.
  ASSERT_TRUE(cluster.Run(Metrics(run, 1, "training", 20, R"({"x": 10})")).ok());
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialMetricsReported), 2);
  // Another trial's number, another allocation, a malformed group: refused, nothing written.
  EXPECT_EQ(cluster.Run(Metrics(run, 2, "training", 30, "{}")).status().code(),
            StatusCode::kPermissionDenied);
  auto stranger = Metrics(run, 1, "training", 30, "{}");
  stranger.allocation_id = run + "0";
  EXPECT_FALSE(cluster.Run(stranger).ok());
  EXPECT_EQ(cluster.Run(Metrics(run, 1, "a.b", 30, "{}")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster.Run(Metrics(run, 1, "training", 30, "[1]")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialMetricsReported), 2);
  // A checkpoint reported twice is one checkpoint; its uuid with other contents is refused.
  ReportTrial checkpoint;
  checkpoint.kind = ReportTrial::Kind::kCheckpoint;
  checkpoint.trial_id = 1;
  checkpoint.allocation_id = run;
  checkpoint.checkpoint.set_uuid(TestUuid("core-1"));
  checkpoint.checkpoint.set_total_batches(20);
  checkpoint.checkpoint.set_metadata_json(R"({"steps_completed": 20})");
  ASSERT_TRUE(cluster.Run(checkpoint).ok());
  ASSERT_TRUE(cluster.Run(checkpoint).ok());
  EXPECT_EQ(Count(cluster, events::Envelope::kCheckpointSaved), 1);
  EXPECT_EQ(harness.Trial(1).latest_checkpoint, TestUuid("core-1"));
  EXPECT_EQ(harness.Trial(1).checkpoint_batches, 20);
  checkpoint.checkpoint.set_total_batches(30);
  EXPECT_EQ(cluster.Run(checkpoint).status().code(), StatusCode::kAlreadyExists);
  // Once the run has ended, its reports are refused.
  harness.Exit(1, 0);
  EXPECT_EQ(cluster.Run(Metrics(run, 1, "training", 40, "{}")).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(ExperimentFlowTest, ACommandThatExitsZeroFinishesItsTrialAndAPauseStopsIt) {
  ASSERT_TRUE(cluster.Run(Experiment(kCoreApiConfig)).ok());
  const std::string allocation = harness.RunOf(1).allocation_id;
  EXPECT_FALSE(TrialRunShouldStop(cluster.state, allocation));
  // Pausing raises the run's preemption signal; the package acknowledges and exits 0.
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kPause}).ok());
  EXPECT_TRUE(TrialRunShouldStop(cluster.state, allocation));
  ReportTrial ack;
  ack.kind = ReportTrial::Kind::kPreemptionAck;
  ack.allocation_id = allocation;
  ASSERT_TRUE(cluster.Run(ack).ok());
  ASSERT_TRUE(cluster.Run(ack).ok());
  EXPECT_EQ(Count(cluster, events::Envelope::kTrialPreemptionAcknowledged), 1);
  harness.Exit(1, 0);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_ACTIVE);  // paused, not done
  ASSERT_TRUE(cluster.Run(ExperimentAction{1, ExperimentAction::Kind::kActivate}).ok());
  ASSERT_EQ(harness.Trial(1).runs, 2);
  // A clean exit nobody asked for is the end of the script: the trial and the search complete.
  harness.Exit(1, 0);
  EXPECT_EQ(harness.Trial(1).state, events::EXPERIMENT_STATE_COMPLETED);
  EXPECT_EQ(Experiment1().state, events::EXPERIMENT_STATE_COMPLETED);
}

// A validation of `steps` with x from the trial's live run (Determined's package).
void ValidateX(Cluster& cluster, Harness& harness, int64_t trial, int64_t steps, double x) {
  ASSERT_TRUE(cluster
                  .Run(Metrics(harness.RunOf(trial).allocation_id, trial, "validation", steps,
                               nlohmann::json{{"x", x}}.dump()))
                  .ok());
}

// kPbtConfig for a script of Determined's package, with `rounds` rounds.
std::string CoreApiPbtConfig(int rounds) {
  std::string config = kPbtConfig;
  config.replace(config.find("entrypoint: model_def:Trial"), 27, "entrypoint: python3 train.py");
  config.replace(config.find("metric: loss"), 12, "metric: x");
  config.replace(config.find("num_rounds: 2"), 13, "num_rounds: " + std::to_string(rounds));
  return config;
}

// A script of Determined's package may validate before it checkpoints: a clone then waits for
// its parent's checkpoint of the round, while the rest of the round's decisions go ahead.
TEST_F(ExperimentFlowTest, APbtCloneOfACoreApiTrialWaitsForItsParentsCheckpoint) {
  ASSERT_TRUE(cluster.Run(Experiment(CoreApiPbtConfig(2))).ok());
  auto validate = [&](int64_t trial, int64_t steps, double x) {
    ValidateX(cluster, harness, trial, steps, x);
  };
  validate(1, 100, 1);
  validate(2, 100, 5);
  EXPECT_TRUE(harness.Trial(2).closed);
  EXPECT_EQ(harness.Trial(1).train_to, 200) << "the parent goes on";
  EXPECT_EQ(Experiment1().trial_ids.size(), 2u) << "the clone waits for a checkpoint";
  ReportTrial checkpoint;
  checkpoint.kind = ReportTrial::Kind::kCheckpoint;
  checkpoint.trial_id = 1;
  checkpoint.allocation_id = harness.RunOf(1).allocation_id;
  checkpoint.checkpoint.set_uuid(TestUuid("round-1"));
  checkpoint.checkpoint.set_total_batches(100);
  ASSERT_TRUE(cluster.Run(checkpoint).ok());
  ASSERT_EQ(Experiment1().trial_ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(harness.Trial(3).warm_start_checkpoint, TestUuid("round-1"));
  EXPECT_EQ(harness.Trial(3).train_to, 100);
  EXPECT_FALSE(harness.Trial(3).task_id.empty()) << "the clone's run is submitted";
}

// A parent that saves nothing must not hold up the search: once it validated past the round,
// its clone begins with what the parent had saved by the round (here nothing).
TEST_F(ExperimentFlowTest, APbtCloneOfAParentThatSavesNothingStartsOnceTheParentMovesOn) {
  ASSERT_TRUE(cluster.Run(Experiment(CoreApiPbtConfig(3))).ok());
  auto validate = [&](int64_t trial, int64_t steps, double x) {
    ValidateX(cluster, harness, trial, steps, x);
  };
  validate(1, 100, 1);
  validate(2, 100, 5);
  EXPECT_EQ(Experiment1().trial_ids.size(), 2u) << "the clone waits while the parent may save";
  validate(1, 200, 1);
  ASSERT_EQ(Experiment1().trial_ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(harness.Trial(3).warm_start_checkpoint, "");
  EXPECT_EQ(harness.Trial(3).cloned_from_trial, 1);
  const events::TrialCreated* created = CreatedEventOf(cluster, 3);
  ASSERT_NE(created, nullptr);
  const std::string& reason = created->reason();
  EXPECT_NE(reason.find("trial 1 saved no checkpoint by then: it begins from scratch"),
            std::string::npos)
      << reason;
}

TEST_F(ExperimentFlowTest, AdaptiveAshaOnATimeMetricStopsTheTrialsBelowTheCut) {
  ASSERT_TRUE(cluster.Run(Agent("a2", 2)).ok());
  ASSERT_TRUE(cluster.Run(Experiment(kAshaConfig)).ok());
  ASSERT_EQ(Experiment1().trial_ids.size(), 4u);
  // A validation without the time metric cannot be ranked: refused, saying what is missing.
  auto missing = Metrics(harness.RunOf(1).allocation_id, 1, "validation", 50, R"({"x": 1})");
  auto refused = cluster.Run(missing);
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("time_metric 'batches'"), std::string::npos);
  // Rung 0 (batches 50): each trial reports there in turn, smaller x better; the first ranks
  // first and goes on, a worse one is stopped, a better one goes on.
  auto validate = [&](int64_t trial, int64_t batches, double x) {
    const std::string metrics = nlohmann::json{{"x", x}, {"batches", batches}}.dump();
    ASSERT_TRUE(
        cluster
            .Run(Metrics(harness.RunOf(trial).allocation_id, trial, "validation", batches, metrics))
            .ok());
  };
  validate(1, 50, 5);
  EXPECT_FALSE(harness.Trial(1).closed);
  EXPECT_EQ(harness.Trial(1).train_to, 100);
  validate(2, 50, 9);
  EXPECT_TRUE(harness.Trial(2).closed);
  EXPECT_TRUE(TrialRunShouldStop(cluster.state, harness.RunOf(2).allocation_id));
  validate(3, 50, 1);
  EXPECT_FALSE(harness.Trial(3).closed);
  // At the top rung every trial is done.
  validate(1, 100, 4);
  EXPECT_TRUE(harness.Trial(1).closed);
}

}  // namespace
}  // namespace cairn::commands
