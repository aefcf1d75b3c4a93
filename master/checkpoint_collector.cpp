#include "master/checkpoint_collector.h"

#include <chrono>
#include <filesystem>
#include <vector>

#include "api/checkpoint_objects.h"
#include "base/ids.h"
#include "base/log.h"
#include "events/envelope_util.h"

namespace cairn {

namespace {
// The longest wait before a failed deletion is tried again.
constexpr std::chrono::seconds kMaxRetryWait{300};
}  // namespace

void CheckpointCollector::Start(std::chrono::milliseconds period) {
  thread_ = std::thread([this, period] {
    while (!stopping_) {
      SweepOnce();
      std::unique_lock lock(wakeup_mutex_);
      wakeup_.wait_for(lock, period, [this] { return stopping_.load(); });
    }
  });
}

void CheckpointCollector::Stop() {
  {
    std::lock_guard lock(wakeup_mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t CheckpointCollector::SweepOnce() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  std::vector<Doomed> doomed;
  std::vector<Doomed> waiting;
  for (auto& checkpoint : retry_) {
    (checkpoint.not_before <= now ? doomed : waiting).push_back(std::move(checkpoint));
  }
  retry_ = std::move(waiting);
  // Only what garbage collection decided since the last sweep: the list only grows.
  std::vector<TensorboardSweep> tensorboards;
  loop_->Read([&](const commands::DecisionState& state) {
    for (; next_tensorboard_ < state.tensorboard_deletions.size(); ++next_tensorboard_) {
      const auto& deletion = state.tensorboard_deletions[next_tensorboard_];
      const commands::ExperimentRecord* experiment = state.FindExperiment(deletion.experiment_id);
      if (experiment == nullptr || experiment->config == nullptr) continue;
      std::string root = experiments::CheckpointDirectory(*experiment->config);
      if (root.empty()) continue;
      tensorboards.push_back(
          {root + "/tensorboard/experiment/" + std::to_string(deletion.experiment_id),
           deletion.time_unix_micros});
    }
    for (; next_ < state.deleted_checkpoints.size(); ++next_) {
      const std::string& uuid = state.deleted_checkpoints[next_];
      // Only uuid-named directories are ever deleted (the decider refuses any other id).
      if (!IsCanonicalUuid(uuid)) continue;
      const commands::CheckpointRecord& checkpoint = state.checkpoints.at(uuid);
      const commands::ExperimentRecord* experiment = state.FindExperiment(checkpoint.experiment_id);
      if (experiment == nullptr || experiment->config == nullptr ||
          !experiment->config->checkpoint_storage) {
        continue;
      }
      const auto& storage = *experiment->config->checkpoint_storage;
      if (storage.IsObjectStore()) {
        doomed.push_back({"", storage, uuid});
        continue;
      }
      std::string root = experiments::CheckpointDirectory(*experiment->config);
      if (!root.empty()) doomed.push_back({root + "/" + uuid, std::nullopt, uuid});
    }
  });
  size_t removed = 0;
  for (auto& checkpoint : doomed) {
    if (stopping_) {  // the next start's sweep finds it again (from the log, or here)
      retry_.push_back(std::move(checkpoint));
      continue;
    }
    Result<bool> deleted = checkpoint.storage ? DeleteObjects(*checkpoint.storage, checkpoint.uuid)
                                              : DeleteDirectory(checkpoint.directory);
    if (!deleted.ok()) {
      ++checkpoint.failures;
      // Logged at the 1st, 2nd, 4th, 8th... failure: a lasting outage does not flood the log.
      if ((checkpoint.failures & (checkpoint.failures - 1)) == 0) {
        log::Warn("checkpoint_collector", "cannot delete checkpoint {} (attempt {}): {}",
                  checkpoint.uuid, checkpoint.failures, deleted.status().message());
      }
      const auto wait = std::min(
          std::chrono::seconds(int64_t{1} << std::min(checkpoint.failures - 1, 9)), kMaxRetryWait);
      checkpoint.not_before = now + wait;
      retry_.push_back(std::move(checkpoint));
      continue;
    }
    // Said once per checkpoint: the store tells no one, and an operator (or a test) can see
    // that the decision recorded in the log was carried out.
    log::Info("checkpoint_collector", "collected checkpoint {}{}", checkpoint.uuid,
              *deleted ? "" : " (nothing was left to delete)");
    removed += *deleted;
  }
  for (const auto& sweep : tensorboards) removed += DeleteTensorboardFiles(sweep) > 0;
  return removed;
}

Result<bool> CheckpointCollector::DeleteDirectory(const std::string& directory) {
  std::error_code error;
  uintmax_t count = std::filesystem::remove_all(directory, error);
  if (error) return Status::IOError(directory + ": " + error.message());
  return count > 0;
}

Result<bool> CheckpointCollector::DeleteObjects(const experiments::CheckpointStorageConfig& storage,
                                                const std::string& uuid) const {
  CAIRN_ASSIGN_OR_RETURN(CheckpointObjects objects, OpenCheckpointObjects(storage, sealer_));
  CAIRN_ASSIGN_OR_RETURN(auto listed, objects.store->List(CheckpointKeyPrefix(objects, uuid)));
  for (const net::StoredObject& object : listed) {
    CAIRN_RETURN_IF_ERROR(objects.store->Delete(object.key));
  }
  return !listed.empty();
}

size_t CheckpointCollector::DeleteTensorboardFiles(const TensorboardSweep& sweep) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(sweep.directory, error)) return 0;
  // Only files written up to the request: a trial that goes on writes new ones, and a master
  // that replays the request after a restart must not delete those.
  const auto cutoff =
      std::chrono::system_clock::time_point(std::chrono::microseconds(sweep.time_unix_micros));
  size_t deleted = 0;
  std::vector<fs::path> directories;
  for (auto it = fs::recursive_directory_iterator(sweep.directory, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory(error)) {
      directories.push_back(it->path());
      continue;
    }
    auto written = it->last_write_time(error);
    if (error) break;
    if (std::chrono::file_clock::to_sys(written) > cutoff) continue;
    deleted += fs::remove(it->path(), error);
  }
  if (error) {
    log::Warn("checkpoint_collector", "cannot delete TensorBoard files under {}: {}",
              sweep.directory, error.message());
  }
  // Directories left empty go too, deepest first.
  for (auto at = directories.rbegin(); at != directories.rend(); ++at) {
    if (fs::is_empty(*at, error)) fs::remove(*at, error);
  }
  return deleted;
}

}  // namespace cairn
