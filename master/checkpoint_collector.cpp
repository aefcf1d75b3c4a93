#include "master/checkpoint_collector.h"

#include <filesystem>
#include <vector>

#include "base/ids.h"
#include "base/log.h"
#include "events/envelope_util.h"

namespace cairn {

void CheckpointCollector::Start(std::chrono::milliseconds period) {
  thread_ = std::thread([this, period] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      SweepOnce();
      lock.lock();
      wakeup_.wait_for(lock, period, [this] { return stopping_; });
    }
  });
}

void CheckpointCollector::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t CheckpointCollector::SweepOnce() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> doomed = std::move(retry_);
  retry_.clear();
  // Only what garbage collection decided since the last sweep: the list only grows.
  loop_->Read([&](const commands::DecisionState& state) {
    for (; next_ < state.deleted_checkpoints.size(); ++next_) {
      const std::string& uuid = state.deleted_checkpoints[next_];
      // Only uuid-named directories are ever deleted (the decider refuses any other id).
      if (!IsCanonicalUuid(uuid)) continue;
      const commands::CheckpointRecord& checkpoint = state.checkpoints.at(uuid);
      const commands::ExperimentRecord* experiment = state.FindExperiment(checkpoint.experiment_id);
      if (experiment == nullptr || experiment->config == nullptr) continue;
      std::string root = experiments::CheckpointDirectory(*experiment->config);
      if (!root.empty()) doomed.push_back(root + "/" + uuid);
    }
  });
  size_t removed = 0;
  for (const auto& directory : doomed) {
    std::error_code error;
    uintmax_t count = std::filesystem::remove_all(directory, error);
    if (error) {
      log::Warn("checkpoint_collector", "cannot delete checkpoint {}: {}", directory,
                error.message());
      retry_.push_back(directory);  // tried again on the next sweep
      continue;
    }
    removed += count > 0;
  }
  return removed;
}

}  // namespace cairn
