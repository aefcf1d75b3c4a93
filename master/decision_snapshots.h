// The write side's snapshots on disk, and the thread that takes them, so that a master start
// decodes the newest snapshot and folds only the log's tail (commands/decision_snapshot.h has the
// encoding and its contract).
//
// Files: <dir>/decision-<20-digit offset>.snap, a whole snapshot, and .delta, a delta (the tasks
// and jobs that changed since the snapshot before it, commands/decision_snapshot.h), the offset
// being the snapshot's next_offset. A chain is a whole snapshot and the deltas that follow it,
// each naming its parent; a restore decodes the whole chain. Each file starts with a line
// "cairn-decision-snapshot sha256=<hex of the rest>" (a delta's: "cairn-decision-delta
// sha256=<hex> base=<offset> parent=<offset>") and is written to a temporary, synced and renamed,
// so a crash leaves a whole snapshot or none. Mode 0600: like the log, a snapshot holds password
// hashes and session-token digests.
//
// Snapshots are a cache of the log. One that fails its checksum, does not decode, was written by
// another format, belongs to another log (its anchor events are not at their offsets) or whose
// chain misses a link is passed over with a log line, for an older one (a shorter chain) or for
// the log from offset 0.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/files.h"
#include "base/status.h"
#include "commands/decision_snapshot.h"
#include "events/event_log.h"

namespace cairn {

// How many whole snapshots the master keeps, with the deltas after the older: the newest chain,
// and one to fall back on. (Time travel reads the projections' snapshots; the write side needs
// only its latest state.)
inline constexpr size_t kDecisionSnapshotsKept = 2;
// The most deltas a chain holds before the next snapshot is whole: a bound on what a restore
// decodes beyond the whole snapshot (the records are bounded by the state's size too). 4 keeps a
// restart from the longest chain within the 2 s target, which 8 did not always
// (docs/benchmarks.md, "Write-side snapshots"), and a whole snapshot's cost is still spread over
// five intervals.
inline constexpr size_t kMaxDeltasPerChain = 4;

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

  // One file: a whole snapshot, or a delta on the chain from `base` whose previous link is
  // `parent` (both as its first line says).
  struct Entry {
    uint64_t offset = 0;
    bool delta = false;
    uint64_t base = 0;
    uint64_t parent = 0;
    // False for a delta whose first line does not read or whose links do not go back
    // (0 < base <= parent < offset): no link of any chain, listed for retention to remove.
    bool readable = true;
  };
  // The files, oldest first (a whole snapshot before a delta at the same offset).
  std::vector<Entry> Entries() const;
  // The snapshots' offsets, whole or readable delta, oldest first.
  std::vector<uint64_t> Offsets() const;

  // Writes `state`, folded from `log`, as the whole snapshot at its next_offset, then removes the
  // files no kept chain needs (the newest `keep` whole snapshots are kept, with the deltas after
  // the oldest of them). Streams the encoding to the file: the bytes are never held whole.
  Status Write(const commands::DecisionState& state, EventLog& log) const;
  // Writes the tasks and jobs `state` counted as changed since its last TakeChanged (which this
  // calls) as the delta at its next_offset on the chain (base, parent), as a forked child does.
  // For tools and tests: a master's snapshots are taken by DecisionSnapshotter.
  Status WriteDelta(commands::DecisionState& state, EventLog& log, uint64_t base,
                    uint64_t parent) const;
  // The newest snapshot's offset, whole or delta; 0 when there is none.
  uint64_t NewestOffset() const;

  // Write in two halves, for a writer that encodes elsewhere (a forked child): Begin (a whole
  // snapshot) or BeginDelta creates the temporary with a placeholder checksum line, the body is
  // written after it through the file's descriptor, and Seal checksums the body as written,
  // fills in the line, publishes the file and removes what no kept chain needs.
  Result<std::unique_ptr<AtomicFile>> Begin(uint64_t offset) const;
  Result<std::unique_ptr<AtomicFile>> BeginDelta(uint64_t offset, uint64_t base,
                                                 uint64_t parent) const;
  Status Seal(AtomicFile& file) const;

  struct Restored {
    std::unique_ptr<commands::DecisionState> state;  // nullptr: no snapshot serves
    commands::LogAnchor anchor;
    std::vector<uint64_t> chain;  // the offsets decoded: the whole snapshot, then each delta
  };
  // The newest snapshot at or below `end` whose chain verifies, decodes and belongs to `log`.
  // Never an error: whatever cannot be used is logged and passed over.
  Restored RestoreNewest(EventLog& log, uint64_t end) const;

  const std::string& dir() const { return dir_; }

 private:
  DecisionSnapshotStore(std::string dir, size_t keep) : dir_(std::move(dir)), keep_(keep) {}
  std::string PathOf(uint64_t offset, bool delta) const;
  Result<std::unique_ptr<AtomicFile>> Create(uint64_t offset, bool delta,
                                             const std::string& first_line) const;
  Status WriteEncoded(const commands::DecisionState& state, EventLog& log,
                      const commands::DecisionDelta* delta) const;
  // The file's body, once its checksum verified.
  Result<std::string> ReadBody(const Entry& entry) const;

  const std::string dir_;
  const size_t keep_;
};

// Takes a snapshot each time the writer's state passes a multiple of `every_events`, without
// stopping the writer, in one of two ways (snapshots.write_side_copy):
//
// kFork (this class's default; the master's is kFold, master_config.h): without a second copy of
// the state. The writer thread forks
// (StateAdvanced), and the child process, which sees the state as it was at that instant,
// copy-on-write, encodes it into the snapshot's temporary and exits. It encodes a delta, the
// tasks and jobs that changed since the snapshot before (ByOwnId::TakeChanged), unless the chain
// has no whole snapshot yet in this process (the first after a start, or after one failed),
// holds kMaxDeltasPerChain deltas, or would hold more records than the state: so a snapshot's
// cost follows the tasks and jobs that changed, not how many the state holds, and a restore
// decodes at most about twice the state. This object's thread waits
// for the child, then checksums and publishes the file. The writer pauses for fork() itself
// (copying page tables, longer as the state grows); the memory a snapshot costs is the pages the
// writer changes while the child runs, which the log line reports with the pause. The price is
// paid in page faults of every thread of the master: every page one writes after a fork faults
// once (and is copied while the child lives), so a window with a snapshot takes fewer
// submissions, at a higher p99, than with kFold; on a VM whose page tables are paravirtualized
// the fork paused the master 76-556 ms and its faults stalled every request for about a second
// under load (docs/benchmarks.md, "Write-side snapshots").
//
// kFold: this object's thread, at low priority, decodes the newest snapshot (or starts from
// offset 0), folds the log up to the multiple into a second state and writes that, whole. The price
// is that second state's memory, once per interval (docs/benchmarks.md, "Write-side snapshots"),
// and the fold's CPU.
//
// The child does only what is safe after fork() in a threaded process: it allocates (jemalloc,
// which the master links, and glibc's malloc both hold their locks across fork()), encodes and
// writes to a descriptor opened before the fork. No logging, no log reads, no OpenSSL (locks
// another thread may have held at the fork). It closes every other descriptor at once (a socket
// the master closes must not stay open in it) and dies with the thread that forked it.
class DecisionSnapshotter {
 public:
  enum class Copy { kFork, kFold };
  // `log` and `store` must outlive it.
  DecisionSnapshotter(EventLog* log, const DecisionSnapshotStore* store, uint64_t every_events,
                      Copy copy = Copy::kFork);
  ~DecisionSnapshotter();  // Stop()

  void Start();
  // Idempotent; a snapshot being taken is finished first. Call it before the writer thread
  // ends: the child dies with that thread.
  void Stop();

  // On the writer thread, after a durable append left `state` at its next_offset, the append's
  // last event being `last_event_id`. Returns at once unless the state passed a multiple of
  // every_events since the newest snapshot and none is being taken; then forks (kFork) or wakes
  // the thread (kFold, which snapshots at the multiple). Before Start() it takes none: a master
  // that starts decides about its startup snapshot itself, and the writer's first append (its
  // epoch claim) would otherwise fork a second writer of the same file.
  // Takes the state's changed tasks and jobs (ByOwnId::TakeChanged) when it forks.
  void StateAdvanced(commands::DecisionState& state, const std::string& last_event_id);

  // Blocks until a snapshot at `offset` or later was written; false on timeout, once stopped or
  // when the one at `offset` or later failed.
  bool WaitForSnapshot(uint64_t offset, std::chrono::milliseconds timeout);

 private:
  struct Child {
    pid_t pid = -1;
    uint64_t offset = 0;
    std::unique_ptr<AtomicFile> file;
    int report_fd = -1;  // the child's private memory, in KiB, when it is done
    std::chrono::steady_clock::time_point started;
    double fork_ms = 0;
    uint64_t base = 0;   // a delta's whole snapshot; 0 for a whole one
    size_t records = 0;  // a delta's tasks and jobs
  };
  void Run();
  bool FoldDue() const;  // kFold, under mutex_: the log passed a multiple with no snapshot
  // The snapshot `child` was writing, once it exited.
  Status Finish(Child& child, uint64_t& private_kib);
  // kFold: decodes the newest snapshot, folds the log to `offset` and writes it there.
  Status Fold(uint64_t offset);

  EventLog* const log_;
  const DecisionSnapshotStore* const store_;
  const uint64_t every_events_;
  const Copy copy_;
  std::string first_event_id_;  // the writer thread's
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Child> child_;  // the snapshot being taken (kFork)
  uint64_t log_end_ = 0;        // as far as the writer said (kFold)
  uint64_t newest_ = 0;         // the newest snapshot's offset
  uint64_t failed_at_ = 0;      // an offset whose snapshot failed: none before the next multiple
  // The chain the next delta continues (kFork): its whole snapshot (0: none, the next is whole),
  // its newest link, and its deltas and their records so far.
  uint64_t chain_base_ = 0;
  uint64_t chain_parent_ = 0;
  size_t chain_deltas_ = 0;
  size_t chain_records_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn
