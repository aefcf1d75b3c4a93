#include "api/checkpoint_collector.h"

#include <cstdio>
#include <filesystem>
#include <vector>

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
  std::vector<std::pair<std::string, std::string>> doomed;  // uuid, directory
  {
    std::lock_guard lock(mutex_);
    loop_->Read([&](const commands::DecisionState& state) {
      for (const auto& [uuid, checkpoint] : state.checkpoints) {
        if (!checkpoint.deleted || swept_.count(uuid)) continue;
        const commands::ExperimentRecord* experiment =
            state.FindExperiment(checkpoint.experiment_id);
        if (experiment == nullptr || experiment->config == nullptr) continue;
        std::string root = experiments::CheckpointDirectory(*experiment->config);
        if (!root.empty()) doomed.emplace_back(uuid, root + "/" + uuid);
      }
    });
  }
  size_t removed = 0;
  for (const auto& [uuid, directory] : doomed) {
    std::error_code error;
    uintmax_t count = std::filesystem::remove_all(directory, error);
    if (error) {
      std::fprintf(stderr, "cairn-master: cannot delete checkpoint %s: %s\n", directory.c_str(),
                   error.message().c_str());
      continue;  // tried again on the next sweep
    }
    removed += count > 0;
    std::lock_guard lock(mutex_);
    swept_.insert(uuid);
  }
  return removed;
}

}  // namespace cairn
