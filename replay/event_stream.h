// The log as a stream of events from an offset, for readers outside the master's own state: the
// REST event stream (`GET /api/v1/events`, analytics consumers and agents in embedded mode).
// Replay endpoints read the log through here, never through the writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "events/epoch_fence.h"
#include "events/event_log.h"

namespace cairn::replay {

struct EventStreamOptions {
  uint64_t from = 0;
  // Only the placement orders addressed to this agent ("" = every event). Orders of a master
  // that a newer one fenced off are not orders and are left out.
  std::string agent;
  // The newest writer epoch claimed before `from` (Queries::NewestEpochBefore), so that an agent
  // resuming in the middle of the log fences as a reader from offset 0 would.
  uint64_t fence_epoch = 0;
  // Only these payload types ("TaskSubmitted", ...); empty = all.
  std::set<std::string> types;
};

// Not thread-safe: one stream belongs to one reader.
class EventStream {
 public:
  // InvalidArgument when `from` is past the end of the log.
  static Result<std::unique_ptr<EventStream>> Open(EventLog* log, EventStreamOptions options);

  // The next events that pass the filters, in order; waits up to `wait` when none is there (an
  // empty result is not an error).
  Result<std::vector<events::Envelope>> Next(size_t max_events, std::chrono::milliseconds wait);
  // The offset of the next event the log will hand over (filtered or not).
  uint64_t position() const;

 private:
  EventStream(std::unique_ptr<LogReader> reader, EventStreamOptions options)
      : reader_(std::move(reader)), options_(std::move(options)), fence_(options_.fence_epoch) {}
  std::unique_ptr<LogReader> reader_;
  EventStreamOptions options_;
  EpochFence fence_;
};

}  // namespace cairn::replay
