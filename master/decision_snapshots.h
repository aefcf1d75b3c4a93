// The write side's snapshots on disk, and the thread that takes them, so that a master start
// decodes the newest snapshot and folds only the log's tail (commands/decision_snapshot.h has the
// encoding and its contract).
//
// Files: <dir>/decision-<20-digit offset>.snap, the offset being the snapshot's next_offset. Each
// starts with a line "cairn-decision-snapshot sha256=<hex of the rest>" and is written to a
// temporary, synced and renamed, so a crash leaves a whole snapshot or none. Mode 0600: like the
// log, a snapshot holds password hashes and session-token digests.
//
// Snapshots are a cache of the log. One that fails its checksum, does not decode, was written by
// another format or belongs to another log (its anchor events are not at their offsets) is passed
// over with a log line, for an older one or for the log from offset 0.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "commands/decision_snapshot.h"
#include "events/event_log.h"

namespace cairn {

// How many the master keeps: the newest, and one to fall back on. (Time travel reads the
// projections' snapshots; the write side needs only its latest state.)
inline constexpr size_t kDecisionSnapshotsKept = 2;

// Applies the log's events from state.next_offset up to `end` (exclusive) to `state`: a start, a
// snapshot and the tools fold the write side this one way. `stopping`, when given, is asked
// between batches; Unavailable once it says so.
Status FoldLogInto(commands::DecisionState& state, EventLog& log, uint64_t end,
                   const std::function<bool()>& stopping = nullptr);

class DecisionSnapshotStore {
 public:
  // Opens `dir`, creating it; removes the temporaries a crash left. Keeps the newest `keep`
  // snapshots (at least 1).
  static Result<std::unique_ptr<DecisionSnapshotStore>> Open(const std::string& dir, size_t keep);

  // The snapshots' offsets, oldest first.
  std::vector<uint64_t> Offsets() const;

  // Writes `state`, folded from `log`, as the snapshot at its next_offset, then removes all but
  // the newest `keep`.
  Status Write(const commands::DecisionState& state, EventLog& log) const;
  // The newest snapshot's offset; 0 when there is none.
  uint64_t NewestOffset() const;

  struct Restored {
    std::unique_ptr<commands::DecisionState> state;  // nullptr: no snapshot serves
    commands::LogAnchor anchor;
  };
  // The newest snapshot at or below `end` that verifies, decodes and belongs to `log`. Never an
  // error: whatever cannot be used is logged and passed over.
  Restored RestoreNewest(EventLog& log, uint64_t end) const;

  const std::string& dir() const { return dir_; }

 private:
  DecisionSnapshotStore(std::string dir, size_t keep) : dir_(std::move(dir)), keep_(keep) {}
  std::string PathOf(uint64_t offset) const;
  Result<std::unique_ptr<commands::DecodedDecisionState>> Read(uint64_t offset) const;

  const std::string dir_;
  const size_t keep_;
};

// Takes a snapshot each time the log passes a multiple of `every_events`, on a thread of its own
// at low priority: it decodes the newest snapshot (or starts from offset 0), folds the log up to
// the multiple and writes the state there. The writer is never stopped; the cost is that fold and
// a transient second decision state, once per `every_events` events.
class DecisionSnapshotter {
 public:
  // `log` and `store` must outlive it.
  DecisionSnapshotter(EventLog* log, const DecisionSnapshotStore* store, uint64_t every_events);
  ~DecisionSnapshotter();  // Stop()

  void Start();
  void Stop();  // idempotent; a snapshot being taken is finished first

  // The log now ends at `end_offset` (the writer says so after each append). Cheap.
  void LogAdvanced(uint64_t end_offset);

  // Blocks until a snapshot at `offset` or later was written; false on timeout or once stopped.
  bool WaitForSnapshot(uint64_t offset, std::chrono::milliseconds timeout);

 private:
  void Run();
  // Writes the snapshot at exactly `offset`.
  Status Take(uint64_t offset);

  EventLog* const log_;
  const DecisionSnapshotStore* const store_;
  const uint64_t every_events_;
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t log_end_ = 0;
  uint64_t newest_ = 0;     // the newest snapshot's offset
  uint64_t failed_at_ = 0;  // a multiple whose snapshot failed: not retried before the next
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn
