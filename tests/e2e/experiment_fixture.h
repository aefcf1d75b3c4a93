// What the experiment end-to-end tests share: a cluster fixture that submits experiments over
// REST and waits on the event log, the gated model that holds a trial at a chosen batch, and
// readers of the log's experiment events. The tests are experiment_e2e_test.cpp (searches,
// restarts, crashes) and experiment_control_e2e_test.cpp (pause, preemption, templates, refusals).
//
// a real cairn-master and cairn-agent, trials run by the Python harness on
// examples/spiral-mlp, submitted over REST the way Determined's CLI does. The tests wait on the
// event log (and, for files the master deletes in the background, on the file system), never on
// time. A trial that must be caught mid-run uses gated_model.py, which the tests add to a copy of
// the example: at a given batch (before training on, or before saving a checkpoint) it waits until
// the test releases a file lock.
#pragma once

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

namespace cairn::testing::experiment_e2e {

namespace fs = std::filesystem;

// SpiralTrial, held at a gate: with CAIRN_TEST_GATE (a file) and CAIRN_TEST_GATE_AT
// ("train:B": before training from batch B on; "save:B": before saving a checkpoint at B or more
// batches), the trial first takes a shared lock on the file, which waits while the test holds it.
inline constexpr char kGatedModel[] = R"(import fcntl
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
inline int64_t Int(const json& value) {
  if (value.is_string()) return std::stoll(value.get<std::string>());
  if (value.is_number()) return value.get<int64_t>();
  return 0;
}

struct Found {
  uint64_t offset = 0;
  json payload;
};

// The payloads of type `type` (e.g. "checkpointSaved") for which `match` holds, in log order.
inline std::vector<Found> Find(const std::vector<json>& events, const char* type,
                               const std::function<bool(const json&)>& match = nullptr) {
  std::vector<Found> found;
  for (const auto& event : events) {
    if (!event.contains(type)) continue;
    if (match && !match(event[type])) continue;
    found.push_back({static_cast<uint64_t>(Int(event["offset"])), event[type]});
  }
  return found;
}

inline std::function<bool(const json&)> OfExperiment(int64_t experiment_id) {
  return [experiment_id](const json& p) {
    return Int(p.value("experimentId", json(0))) == experiment_id;
  };
}
inline std::function<bool(const json&)> OfTrial(int64_t trial_id) {
  return [trial_id](const json& p) { return Int(p.value("trialId", json(0))) == trial_id; };
}
inline std::function<bool(const json&)> OfTask(const std::string& task_id) {
  return [task_id](const json& p) { return p.value("taskId", "") == task_id; };
}

// The TRAIN workloads the master assigned to `trial`, in order.
inline std::vector<Found> TrainsAssigned(const std::vector<json>& events, int64_t trial_id) {
  return Find(events, "trialWorkloadAssigned", [trial_id](const json& p) {
    return Int(p.value("trialId", json(0))) == trial_id &&
           p.value("kind", "") == "WORKLOAD_KIND_TRAIN";
  });
}

inline bool TrainAssignedFrom(const std::vector<json>& events, int64_t trial_id,
                              int64_t start_batch) {
  for (const auto& train : TrainsAssigned(events, trial_id)) {
    if (Int(train.payload["startBatch"]) == start_batch) return true;
  }
  return false;
}

inline bool ReachedState(const std::vector<json>& events, int64_t experiment_id,
                         const std::string& state) {
  return !Find(events, "experimentStateChanged", [&](const json& p) {
            return OfExperiment(experiment_id)(p) && p.value("state", "") == state;
          }).empty();
}

// The trial id of the experiment's only (first) trial, 0 before it exists.
inline int64_t FirstTrial(const std::vector<json>& events, int64_t experiment_id) {
  auto created = Find(events, "trialCreated", OfExperiment(experiment_id));
  return created.empty() ? 0 : Int(created[0].payload["trialId"]);
}

// The trial's runs (task ids) in submission order.
inline std::vector<std::string> RunsOf(const std::vector<json>& events, int64_t trial_id) {
  std::vector<std::string> runs;
  for (const auto& submitted : Find(events, "taskSubmitted", OfTrial(trial_id))) {
    runs.push_back(submitted.payload["taskId"]);
  }
  return runs;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Replaces the one occurrence of `from` in `text` (an example changed under the test fails here).
inline void ReplaceOnce(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "'" << from << "' is not in:\n" << text;
  ASSERT_EQ(text.find(from, at + 1), std::string::npos) << "'" << from << "' occurs twice";
  text.replace(at, from.size(), to);
}

// Waits until none of `paths` exists, or `timeout` passes. The master deletes collected
// checkpoints in the background and the log does not record the deletion, so this waits on the
// file system's own notifications (inotify on the paths' directories), not on a timer.
inline bool WaitUntilRemoved(const std::vector<std::string>& paths,
                             std::chrono::milliseconds timeout) {
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
inline std::vector<std::pair<int64_t, int64_t>> TrainingRanges(const json& workloads) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& workload : workloads) {
    if (!workload.contains("training")) continue;
    const int64_t end = Int(workload["training"]["totalBatches"]);
    ranges.emplace_back(end - Int(workload["training"]["numInputs"]), end);
  }
  return ranges;
}

// The training workloads cover [0, length) once each, in order: no gap, no batch trained twice.
inline void ExpectContiguousTraining(const json& workloads, int64_t length) {
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
  // `master_log`: the master's own log lines (stderr) are captured, to be waited for.
  void StartMaster(const std::string& master_config = "", bool master_log = false) {
    cluster_ = std::make_unique<Cluster>(master_config);
    cluster_->StartMaster({}, master_log);
  }
  void StartCluster(int slots, const std::string& master_config = "", bool master_log = false) {
    StartMaster(master_config, master_log);
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

}  // namespace cairn::testing::experiment_e2e
