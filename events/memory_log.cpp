#include "events/memory_log.h"

namespace cairn {

class MemoryLogReader : public LogReader {
 public:
  MemoryLogReader(MemoryEventLog* log, uint64_t from) : log_(log), position_(from) {}

  Result<std::vector<Envelope>> Next(size_t max_events, std::chrono::milliseconds wait) override {
    std::unique_lock lock(log_->mutex_);
    log_->appended_.wait_for(lock, wait, [&] { return log_->events_.size() > position_; });
    std::vector<Envelope> out;
    while (position_ < log_->events_.size() && out.size() < max_events) {
      out.push_back(log_->events_[position_++]);
    }
    return out;
  }
  uint64_t position() const override { return position_; }

 private:
  MemoryEventLog* log_;
  uint64_t position_;
};

Result<OffsetRange> MemoryEventLog::Append(const std::vector<Envelope>& batch) {
  if (batch.empty()) return Status::InvalidArgument("empty batch");
  std::lock_guard lock(mutex_);
  if (failures_left_ > 0) {
    --failures_left_;
    return Status::Unavailable("injected append failure");
  }
  OffsetRange range{events_.size(), events_.size() + batch.size() - 1};
  for (const auto& event : batch) {
    events_.push_back(event);
    events_.back().set_offset(events_.size() - 1);
  }
  appended_.notify_all();
  return range;
}

Result<uint64_t> MemoryEventLog::EndOffset() {
  std::lock_guard lock(mutex_);
  return static_cast<uint64_t>(events_.size());
}

Result<std::unique_ptr<LogReader>> MemoryEventLog::OpenReader(uint64_t from) {
  {
    std::lock_guard lock(mutex_);
    if (open_failures_left_ > 0) {
      --open_failures_left_;
      return Status::Unavailable("injected read failure");
    }
  }
  return std::unique_ptr<LogReader>(std::make_unique<MemoryLogReader>(this, from));
}

void MemoryEventLog::FailNextOpens(int count) {
  std::lock_guard lock(mutex_);
  open_failures_left_ = count;
}

void MemoryEventLog::FailNextAppends(int count) {
  std::lock_guard lock(mutex_);
  failures_left_ = count;
}

}  // namespace cairn
