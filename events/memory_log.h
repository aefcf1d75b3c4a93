// An in-memory EventLog for unit tests and for folding history in replay tools. Not durable.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "events/event_log.h"

namespace cairn {

class MemoryEventLog : public EventLog {
 public:
  Result<OffsetRange> Append(const std::vector<Envelope>& batch) override;
  Result<uint64_t> EndOffset() override;
  Result<std::unique_ptr<LogReader>> OpenReader(uint64_t from) override;
  std::string Describe() const override { return "memory"; }

  // Makes the next `count` appends fail with Unavailable (tests of error paths).
  void FailNextAppends(int count);
  // Makes the next `count` OpenReader calls fail with Unavailable.
  void FailNextOpens(int count);

 private:
  friend class MemoryLogReader;
  std::mutex mutex_;
  std::condition_variable appended_;
  std::vector<Envelope> events_;
  int failures_left_ = 0;
  int open_failures_left_ = 0;
};

}  // namespace cairn
