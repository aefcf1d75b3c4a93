// Carries out checkpoint garbage collection: the experiment reactor decides which checkpoints go
// and records it (CheckpointsDeleted); this deletes their directories under the experiment's
// shared_fs storage or their objects in its S3 or Azure storage (api/checkpoint_objects.h), and the
// TensorBoard files of det experiment delete-tb-files (TensorboardFilesDeleted) written up to the
// request. Idempotent and restartable: a sweep removes every deleted checkpoint's directory that is
// still on disk, so a master that crashed mid-way finishes the job after its replay.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/sealed_secrets.h"
#include "master/decision_loop.h"

namespace cairn {

class CheckpointCollector {
 public:
  // `loop` must outlive the collector.
  // `sealer` opens the storages' credentials, which the log keeps sealed (events/sealing.h).
  CheckpointCollector(DecisionLoop* loop, SecretSealer sealer)
      : loop_(loop), sealer_(std::move(sealer)) {}
  ~CheckpointCollector() { Stop(); }

  // Sweeps now and then every `period` on its own thread.
  void Start(std::chrono::milliseconds period = std::chrono::milliseconds(1000));
  void Stop();

  // One sweep; returns how many checkpoint directories and TensorBoard requests it removed
  // something for. Thread-safe.
  size_t SweepOnce();

 private:
  struct TensorboardSweep {
    std::string directory;  // <checkpoint storage>/tensorboard/experiment/<id>
    int64_t time_unix_micros = 0;
  };
  static size_t DeleteTensorboardFiles(const TensorboardSweep& sweep);
  // A checkpoint to delete: its directory, or its storage when that is an object store.
  struct Doomed {
    std::string directory;
    std::optional<experiments::CheckpointStorageConfig> storage;
    std::string uuid;
    // After a failure, tried again no sooner than this, the wait doubling with each failure (a
    // store that refuses for hours is asked a few times an hour and logged about as often).
    int failures = 0;
    std::chrono::steady_clock::time_point not_before{};
  };
  // Whether anything was there to delete.
  static Result<bool> DeleteDirectory(const std::string& directory);
  Result<bool> DeleteObjects(const experiments::CheckpointStorageConfig& storage,
                             const std::string& uuid) const;

  DecisionLoop* loop_;
  const SecretSealer sealer_;
  std::mutex wakeup_mutex_;  // only for the wait between sweeps
  std::condition_variable wakeup_;
  // Read between deletions too: a stop never waits for more than the deletion under way.
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // one sweep at a time, and what it keeps below
  size_t next_ = 0;   // DecisionState::deleted_checkpoints before this one are dealt with
  size_t next_tensorboard_ = 0;  // the same for DecisionState::tensorboard_deletions
  std::vector<Doomed> retry_;    // checkpoints whose deletion failed
  std::thread thread_;
};

}  // namespace cairn
