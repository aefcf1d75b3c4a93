// Experiments end to end: a real cairn-master and cairn-agent, trials run by the Python harness on
// examples/spiral-mlp, submitted over REST the way Determined's CLI does. The tests wait on the
// event log (and, for files the master deletes in the background, on the file system), never on
// time. A trial that must be caught mid-run uses gated_model.py, which the tests add to a copy of
// the example: at a given batch (before training on, or before saving a checkpoint) it waits until
// the test releases a file lock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/e2e/cluster_fixture.h"

namespace cairn::testing {
namespace {

namespace fs = std::filesystem;

// SpiralTrial, held at a gate: with CAIRN_TEST_GATE (a file) and CAIRN_TEST_GATE_AT
// ("train:B": before training from batch B on; "save:B": before saving a checkpoint at B or more
// batches), the trial first takes a shared lock on the file, which waits while the test holds it.
constexpr char kGatedModel[] = R"(import fcntl
import os

from model_def import SpiralTrial


def wait_at_gate(stage, batch):
    gate = os.environ.get("CAIRN_TEST_GATE")
    gate_stage, _, gate_batch = os.environ.get("CAIRN_TEST_GATE_AT", "").partition(":")
    if gate and stage == gate_stage and batch >= int(gate_batch):
        print(f"gated-model: waiting at the gate before {stage} at batch {batch}", flush=True)
        with open(gate, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_SH)


class GatedSpiralTrial(SpiralTrial):
    def __init__(self, context):
        super().__init__(context)
        latest = context.latest_checkpoint
        self.trained_to = latest["batches"] if latest else 0

    def train_batches(self, batches, start_batch):
        wait_at_gate("train", start_batch)
        self.trained_to = start_batch + batches
        return super().train_batches(batches, start_batch)

    def save(self, path):
        wait_at_gate("save", self.trained_to)
        super().save(path)
)";

// A lock file that the test holds exclusively until Release(); see kGatedModel.
class Gate {
 public:
  explicit Gate(std::string path) : path_(std::move(path)) {
    // O_CLOEXEC: a master or agent forked later must not share (and so keep) the lock.
    fd_ = open(path_.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    EXPECT_GE(fd_, 0) << path_;
    EXPECT_EQ(flock(fd_, LOCK_EX), 0);
  }
  ~Gate() { Release(); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  void Release() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// proto3 JSON writes int64 as a string, int32 as a number.
int64_t Int(const json& value) {
  if (value.is_string()) return std::stoll(value.get<std::string>());
  if (value.is_number()) return value.get<int64_t>();
  return 0;
}

struct Found {
  uint64_t offset = 0;
  json payload;
};

// The payloads of type `type` (e.g. "checkpointSaved") for which `match` holds, in log order.
std::vector<Found> Find(const std::vector<json>& events, const char* type,
                        const std::function<bool(const json&)>& match = nullptr) {
  std::vector<Found> found;
  for (const auto& event : events) {
    if (!event.contains(type)) continue;
    if (match && !match(event[type])) continue;
    found.push_back({static_cast<uint64_t>(Int(event["offset"])), event[type]});
  }
  return found;
}

std::function<bool(const json&)> OfExperiment(int64_t experiment_id) {
  return [experiment_id](const json& p) {
    return Int(p.value("experimentId", json(0))) == experiment_id;
  };
}
std::function<bool(const json&)> OfTrial(int64_t trial_id) {
  return [trial_id](const json& p) { return Int(p.value("trialId", json(0))) == trial_id; };
}
std::function<bool(const json&)> OfTask(const std::string& task_id) {
  return [task_id](const json& p) { return p.value("taskId", "") == task_id; };
}

// The TRAIN workloads the master assigned to `trial`, in order.
std::vector<Found> TrainsAssigned(const std::vector<json>& events, int64_t trial_id) {
  return Find(events, "trialWorkloadAssigned", [trial_id](const json& p) {
    return Int(p.value("trialId", json(0))) == trial_id &&
           p.value("kind", "") == "WORKLOAD_KIND_TRAIN";
  });
}

bool TrainAssignedFrom(const std::vector<json>& events, int64_t trial_id, int64_t start_batch) {
  for (const auto& train : TrainsAssigned(events, trial_id)) {
    if (Int(train.payload["startBatch"]) == start_batch) return true;
  }
  return false;
}

bool ReachedState(const std::vector<json>& events, int64_t experiment_id,
                  const std::string& state) {
  return !Find(events, "experimentStateChanged", [&](const json& p) {
            return OfExperiment(experiment_id)(p) && p.value("state", "") == state;
          }).empty();
}

// The trial id of the experiment's only (first) trial, 0 before it exists.
int64_t FirstTrial(const std::vector<json>& events, int64_t experiment_id) {
  auto created = Find(events, "trialCreated", OfExperiment(experiment_id));
  return created.empty() ? 0 : Int(created[0].payload["trialId"]);
}

// The trial's runs (task ids) in submission order.
std::vector<std::string> RunsOf(const std::vector<json>& events, int64_t trial_id) {
  std::vector<std::string> runs;
  for (const auto& submitted : Find(events, "taskSubmitted", OfTrial(trial_id))) {
    runs.push_back(submitted.payload["taskId"]);
  }
  return runs;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Replaces the one occurrence of `from` in `text` (an example changed under the test fails here).
void ReplaceOnce(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "'" << from << "' is not in:\n" << text;
  ASSERT_EQ(text.find(from, at + 1), std::string::npos) << "'" << from << "' occurs twice";
  text.replace(at, from.size(), to);
}

// Waits until none of `paths` exists, or `timeout` passes. The master deletes collected
// checkpoints in the background and the log does not record the deletion, so this waits on the
// file system's own notifications (inotify on the paths' directories), not on a timer.
bool WaitUntilRemoved(const std::vector<std::string>& paths, std::chrono::milliseconds timeout) {
  const int notify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  EXPECT_GE(notify, 0) << "inotify_init1";
  if (notify < 0) return false;
  std::set<std::string> directories;
  for (const auto& path : paths) directories.insert(fs::path(path).parent_path().string());
  for (const auto& directory : directories) {
    // Watching before the first look, so no deletion can fall between the look and the wait.
    if (inotify_add_watch(notify, directory.c_str(), IN_DELETE | IN_MOVED_FROM) < 0 &&
        errno != ENOENT) {
      ADD_FAILURE() << "inotify_add_watch " << directory;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool gone = false;
  while (true) {
    gone = std::none_of(paths.begin(), paths.end(),
                        [](const std::string& path) { return fs::exists(path); });
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (gone || left.count() <= 0) break;
    pollfd ready{notify, POLLIN, 0};
    if (poll(&ready, 1, static_cast<int>(left.count())) > 0) {
      char events[4096];
      while (read(notify, events, sizeof events) > 0) {
      }
    }
  }
  close(notify);
  return gone;
}

// [start, end) of each training workload, in order.
std::vector<std::pair<int64_t, int64_t>> TrainingRanges(const json& workloads) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& workload : workloads) {
    if (!workload.contains("training")) continue;
    const int64_t end = Int(workload["training"]["totalBatches"]);
    ranges.emplace_back(end - Int(workload["training"]["numInputs"]), end);
  }
  return ranges;
}

// The training workloads cover [0, length) once each, in order: no gap, no batch trained twice.
void ExpectContiguousTraining(const json& workloads, int64_t length) {
  int64_t next = 0;
  for (const auto& [start, end] : TrainingRanges(workloads)) {
    EXPECT_EQ(start, next) << "training [" << start << ", " << end << ") after batch " << next;
    next = end;
  }
  EXPECT_EQ(next, length) << workloads.dump();
}

struct TrialOptions {
  std::string name = "spiral";
  int max_length = 400;
  int checkpoint_period = 0;  // min_checkpoint_period in batches; 0 leaves it unset
  std::optional<int> priority;
  const Gate* gate = nullptr;  // hold the trial at `gate_at` (see kGatedModel)
  std::string gate_at = "train:100";
};

class ExperimentEndToEnd : public ::testing::Test {
 protected:
  void StartMaster(const std::string& master_config = "") {
    cluster_ = std::make_unique<Cluster>(master_config);
    cluster_->StartMaster();
  }
  void StartCluster(int slots, const std::string& master_config = "") {
    StartMaster(master_config);
    cluster_->StartAgent("agent-1", slots);
  }

  std::string CheckpointRoot() const { return cluster_->dir().Sub("checkpoints"); }
  // Where the example's configurations put checkpoints (storage_path inside host_path).
  std::string CheckpointPath(const std::string& uuid) const {
    return CheckpointRoot() + "/cairn-checkpoints/" + uuid;
  }

  // examples/spiral-mlp copied into the test's directory, with gated_model.py beside it.
  std::string Context() {
    const std::string context = cluster_->dir().Sub("context");
    if (!fs::exists(context)) {
      fs::copy(ExamplePath("spiral-mlp"), context, fs::copy_options::recursive);
      std::ofstream(context + "/gated_model.py") << kGatedModel;
    }
    return context;
  }

  // examples/spiral-mlp/const.yaml run by the gated model, changed as `options` says.
  std::string SingleTrialConfig(const TrialOptions& options) {
    std::string text = ReadFile(ExamplePath("spiral-mlp") + "/const.yaml");
    ReplaceOnce(text, "name: spiral-mlp-const", "name: " + options.name);
    ReplaceOnce(text, "entrypoint: model_def:SpiralTrial",
                "entrypoint: gated_model:GatedSpiralTrial");
    ReplaceOnce(text, "    batches: 500", "    batches: " + std::to_string(options.max_length));
    ReplaceOnce(text, "host_path: /tmp", "host_path: " + CheckpointRoot());
    if (options.priority) {
      ReplaceOnce(text, "  slots_per_trial: 1\n",
                  "  slots_per_trial: 1\n  priority: " + std::to_string(*options.priority) + "\n");
    }
    if (options.checkpoint_period > 0) {
      text +=
          "min_checkpoint_period:\n  batches: " + std::to_string(options.checkpoint_period) + "\n";
    }
    if (options.gate != nullptr) {
      text +=
          "environment:\n  environment_variables:\n    - CAIRN_TEST_GATE=" + options.gate->path() +
          "\n    - CAIRN_TEST_GATE_AT=" + options.gate_at + "\n";
    }
    return text;
  }

  // Creates the experiment and returns its id (0 on failure, with the test failed).
  int64_t Create(const std::string& config_yaml, const std::string& context) {
    Reply created = cluster_->CreateExperiment(config_yaml, context);
    EXPECT_EQ(created.status, 200) << created.body.dump();
    if (created.status != 200) return 0;
    return Int(created.body["experiment"]["id"]);
  }

  std::vector<json> WaitForState(int64_t experiment_id, const std::string& state) {
    return cluster_->FollowEventsUntil([&](const std::vector<json>& events) {
      return ReachedState(events, experiment_id, state);
    });
  }

  // GET `target` once the projections have applied everything in the log so far.
  json GetCurrent(const std::string& target) {
    auto events = cluster_->AllEvents();
    std::string offset = events.empty() ? "0" : events.back()["offset"].get<std::string>();
    return cluster_->Get(target + (target.find('?') == std::string::npos ? "?" : "&") +
                         "minOffset=" + offset);
  }

  json Experiment(int64_t id) {
    return GetCurrent("/api/v1/experiments/" + std::to_string(id))["experiment"];
  }
  json Trials(int64_t experiment_id) {
    return GetCurrent("/api/v1/experiments/" + std::to_string(experiment_id) + "/trials")["trials"];
  }
  json Workloads(int64_t trial_id) {
    return GetCurrent("/api/v1/trials/" + std::to_string(trial_id) + "/workloads")["workloads"];
  }
  json Checkpoints(int64_t trial_id) {
    return GetCurrent("/api/v1/trials/" + std::to_string(trial_id) + "/checkpoints")["checkpoints"];
  }

  // The first TRAIN the master gave to `allocation_id`'s run of the trial.
  int64_t FirstTrainStart(const std::vector<json>& events, int64_t trial_id,
                          const std::string& allocation_id) {
    for (const auto& train : TrainsAssigned(events, trial_id)) {
      if (train.payload.value("allocationId", "") == allocation_id) {
        return Int(train.payload["startBatch"]);
      }
    }
    ADD_FAILURE() << "no TRAIN for " << allocation_id;
    return -1;
  }

  // The job's allocated slots in GET /api/v1/job-queues-v2; -1 when the job is not listed.
  int AllocatedSlots(const std::string& job_id) {
    json jobs = GetCurrent("/api/v1/job-queues-v2")["jobs"];
    for (const auto& job : jobs) {
      const json& full = job.contains("full") ? job["full"] : job;
      if (full.value("jobId", "") == job_id) return full.value("allocatedSlots", -1);
    }
    return -1;
  }

  // What the API says about the experiments, their trials, workloads and checkpoints.
  json Snapshot(const std::vector<int64_t>& experiment_ids) {
    json snapshot = json::array();
    for (int64_t id : experiment_ids) {
      json trials = Trials(id);
      json details = json::array();
      for (const auto& trial : trials) {
        details.push_back(
            {{"workloads", Workloads(trial["id"])}, {"checkpoints", Checkpoints(trial["id"])}});
      }
      snapshot.push_back(
          {{"experiment", Experiment(id)}, {"trials", trials}, {"details", details}});
    }
    return snapshot;
  }

  // 5. Projections rebuilt from the log equal the live ones, experiments included; and a master
  // restarted on the same data (startup is replay) answers exactly as before.
  void ExpectReplayKeeps(const std::vector<int64_t>& experiment_ids) {
    json before = Snapshot(experiment_ids);
    cluster_->ExpectRebuiltProjectionsEqualLive();  // stops the master
    cluster_->StartMaster();
    EXPECT_EQ(Snapshot(experiment_ids), before);
  }

  std::unique_ptr<Cluster> cluster_;
};

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
    if (task_ids.empty() || task_ids.back() != result["taskId"])
      task_ids.push_back(result["taskId"]);
    trained |=
        result["message"].get<std::string>().find("cairn-harness: TRAIN") != std::string::npos;
  }
  EXPECT_EQ(task_ids, (std::vector<std::string>{runs[0], runs[1]}));
  EXPECT_TRUE(trained) << logs->body;
  ExpectReplayKeeps({id});
}

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
  EXPECT_EQ(created.body["template"]["config"], template_config);
  Reply again = cluster_->Call("POST", "/api/v1/templates/t1",
                               {{"name", "t1"}, {"config", template_config}, {"workspaceId", 1}});
  EXPECT_EQ(again.status, 409) << again.body.dump();
  Reply got = cluster_->Call("GET", "/api/v1/templates/t1");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body["template"]["config"], template_config);
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
}  // namespace cairn::testing
