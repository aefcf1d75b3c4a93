// The live side of the projections: one RocksDB per projection directory with one column family
// per projector, fed from the EventLog in batches. Each projector's checkpoint (applied offset
// and newest writer epoch) is written in the same WriteBatch as its view changes (in bulk
// loads, the same ingested table file), so a crash never applies an event twice or loses one.
// Used through projections/projections.h.
#pragma once

#include <rocksdb/db.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "events/event_log.h"
#include "projections/projector.h"

namespace cairn::projections {

class RocksBatchStore;

// The layout of the views this build writes, recorded in every checkpoint. Bump it when a view,
// a key or the meaning of either changes: a DB of another layout is wiped and rebuilt on open.
// 2: job views aggregate live tasks and follow JobQueueChanged; allocation indexes.
// 3: the experiments projection.
// 4: the job queue's order by position and per-pool counts (pages read without a sort).
// 5: checkpoints record the latest event time applied (snapshots for time travel).
// 6: task_order keeps each task's list (type and user) and each list's version.
// 7: the allocations projection (the allocation ledger).
// 8: job_queue: a held (paused) task's job leaves the queue once its allocation is released.
// 9: tasks record log retention (TaskView.logs_expired); the webhooks projection.
// 10: workspaces record their checkpoint storage (WorkspaceView.checkpoint_storage_json).
// 11: task container defaults and log policies in the views.
// 12: the metric_series projection.
inline constexpr uint32_t kViewFormat = 12;

class ProjectionEngine;

struct EngineOptions {
  std::vector<std::string> projectors = ProjectorNames();  // which projectors this DB maintains
  size_t max_batch_events = 1000;                          // events per write batch
  // false for a scratch DB thrown away after use (a past state): its writes skip RocksDB's
  // write-ahead log, so a crash loses what the memtables held.
  bool write_ahead_log = true;
  // Snapshots (projections/snapshots.h): when the applied offset passes a multiple of
  // `snapshot_every_events`, the engine's own thread, between batches, calls `take_snapshot`,
  // which checkpoints the DB (CreateCheckpoint) and hands the rest of the work to another
  // thread. 0 = never.
  uint64_t snapshot_every_events = 0;
  std::function<void(ProjectionEngine&)> take_snapshot;
  // Bulk loading: a CatchUp at least `bulk_load_min_events` behind the log (a rebuild, a first
  // start on a long log, a start from an old snapshot) reads `bulk_batch_events` at a time and
  // keeps the projectors' changes in memory across batches, up to about `bulk_load_bytes` in
  // all, then writes each projector's as one sorted table file that the DB ingests: no memtable
  // inserts, no flushes, no compaction of intermediate versions, and no reads of a family that
  // is still empty. Its events become readable (AppliedOffset advances) only when their files
  // are ingested: at the budget, and when the CatchUp ends. An error drops what was not
  // ingested yet; it is applied again. The background thread catches up this way once when it
  // starts, then follows the log `max_batch_events` at a time. 0 bytes = never.
  // 32 MiB: a master started on a long history is ready as soon with it as with 64, and peaks
  // lower (docs/benchmarks.md, "Projections: memtables and bulk loads").
  size_t bulk_load_bytes = size_t{32} << 20;
  uint64_t bulk_load_min_events = 10000;
  size_t bulk_batch_events = 20000;  // each batch is a thread per projector
};

// One projector's position and view digest.
struct ProjectionSummary {
  std::string name;
  uint64_t next_offset = 0;  // every event below it is applied
  uint64_t newest_epoch = 0;
  std::string digest;  // hex SHA-256 of the views (see DigestViews); empty in a position
};

class ProjectionEngine {
 public:
  // Opens (creating when missing) the projection DB in `dir` for `log`, which must outlive the
  // engine. When the DB was built from another log, or from a longer one, or by a build with
  // another view layout, it is wiped (the reason goes to stderr) and rebuilt from offset 0.
  static Result<std::unique_ptr<ProjectionEngine>> Open(const std::string& dir, EventLog* log,
                                                        EngineOptions options);
  ~ProjectionEngine();

  // Applies on the calling thread every event up to the log end seen now, or up to and
  // including `last_offset`, and with `until_time` only the events before the first one later
  // than it; in bulk when that is far enough (EngineOptions::bulk_load_bytes). Not while the
  // background thread runs.
  Status CatchUp(std::optional<uint64_t> last_offset,
                 std::optional<int64_t> until_time = std::nullopt);
  // CatchUp, then every projector's summary (SummarizeAll), each taken as soon as that
  // projector's last table file is in while the others may still be writing theirs: a rebuild
  // ends on its largest projection, and the smaller ones' digests fill the time.
  Result<std::vector<ProjectionSummary>> CatchUpAndSummarize(std::optional<uint64_t> last_offset);

  // A RocksDB checkpoint of the DB, every projector at the same offset, in `target_dir` (which
  // must not exist): its table files hard-linked, and what the memtables hold since their last
  // flush as a copy of the write-ahead log (replayed by whoever opens it), unless that log has
  // grown past 8 MiB (kCheckpointLogBytes) or the DB keeps none: then the memtables are flushed
  // first. Returns the offset it holds every event below. On the engine's own thread
  // (take_snapshot), or while that thread is not running.
  Result<uint64_t> CreateCheckpoint(const std::string& target_dir);
  // Each projector's name, next offset and newest epoch, from its checkpoint, without a digest.
  // On the engine's own thread, or while that thread is not running.
  std::vector<ProjectionSummary> Positions() const;
  // The latest event time among the applied events.
  int64_t MaxEventTime() const;
  // Each projector's next offset (every event below it applied), in the engine's order.
  // Thread-safe.
  std::vector<std::pair<std::string, uint64_t>> ProjectorOffsets() const;

  // Starts / stops the background thread that tails the log. Stop is idempotent.
  void Start();
  void Stop();

  // Every event below this offset is applied in every projector of this engine.
  uint64_t AppliedOffset() const { return applied_offset_.load(); }
  // Blocks until every event <= offset is applied; DeadlineExceeded on timeout, Unavailable
  // once the engine is stopped.
  Status WaitForOffset(uint64_t offset, std::chrono::milliseconds timeout);

  // How many table files bulk loading ingested (EngineOptions::bulk_load_bytes).
  uint64_t BulkFilesIngested() const { return bulk_files_ingested_.load(); }

  // What RocksDB holds in memory for the views. Thread-safe.
  struct StorageMemory {
    uint64_t memtable_bytes = 0;      // writes not yet flushed, every family
    uint64_t block_cache_bytes = 0;   // the block cache every projection DB of the process shares
    uint64_t table_reader_bytes = 0;  // open table files' indexes and filters
  };
  StorageMemory MeasureMemory() const;

  // Runs `read` over one consistent snapshot of the named projector's views.
  Status Read(const std::string& projector, const std::function<Status(ViewReader&)>& read);
  Result<ProjectionSummary> Summarize(const std::string& projector);
  // The named projectors' summaries, in that order, taken on one thread each: every digest is a
  // scan of its views, so side by side they take about the time of the largest. The first error,
  // once all are done.
  Result<std::vector<ProjectionSummary>> SummarizeAll(const std::vector<std::string>& projectors);
  // Reads every block of every table file and checks its checksum (RocksDB's VerifyChecksum):
  // Corruption when a byte of a table file changed. Table files only: views still in the
  // memtables came from the write-ahead log, whose records RocksDB checked as it replayed them.
  // A fraction of a digest's cost (no view is parsed or hashed; blocks are read in file order).
  Status VerifyChecksums();

 private:
  // A bulk load's changes not yet ingested (EngineOptions::bulk_load_bytes).
  struct Pending;
  struct Slot {
    explicit Slot(std::unique_ptr<Projector> projector);
    Slot(Slot&&) noexcept;
    ~Slot();
    std::unique_ptr<Projector> projector;
    rocksdb::ColumnFamilyHandle* family = nullptr;
    views::ProjectorCheckpoint checkpoint;  // as committed
    bool family_is_empty = false;           // no key written yet (bulk loads skip reads)
    std::unique_ptr<Pending> pending;
    // The checkpoint of changes staged in a shared write (ApplyInOneWrite), not yet committed.
    std::optional<views::ProjectorCheckpoint> staged;
  };

  ProjectionEngine(std::string dir, EventLog* log, EngineOptions options)
      : dir_(std::move(dir)), log_(log), options_(std::move(options)) {}
  Status OpenDb();
  void CloseDb();
  Status CheckLogIdentity();
  Status ApplyBatch(const std::vector<Envelope>& events);
  // Applies `events` to the slot: into its pending bulk load, into `shared` (committed by the
  // caller), or in a write of its own when `shared` is null.
  Status ApplyToSlot(Slot& slot, const std::vector<Envelope>& events,
                     rocksdb::WriteBatch* shared = nullptr);
  Status ApplyInOneWrite(const std::vector<Envelope>& events);
  rocksdb::WriteOptions ViewWriteOptions() const;
  // Publishes the applied offset and wakes the callers waiting for it.
  void PublishProgress();
  // Writes the slot's pending changes as a table file and ingests it.
  Status IngestPending(Slot& slot);
  // Runs `work` on every slot, one thread each, then publishes the offsets. Returns the first
  // error.
  Status ForEachSlot(const std::function<Status(Slot&)>& work);
  // Applies `events` after the batch in flight; a large batch is applied on another thread
  // while the caller reads the next one. Returns the in-flight batch's error, if any.
  Status Dispatch(std::vector<Envelope> events);
  // Waits for the batch in flight and returns its status.
  Status Drain();
  // Reads the log up to `end` (and `until_time`), a batch at a time, handing each to `dispatch`.
  Status CatchUpLoop(uint64_t end, std::optional<int64_t> until_time,
                     const std::function<Status(std::vector<Envelope>)>& dispatch);
  // A bulk CatchUp: each projector applies the batches on a thread of its own (its lane), up to
  // kLaneDepth batches behind the reader, then ingests its last file and runs `after_ingest`.
  Status CatchUpInLanes(uint64_t end, std::optional<int64_t> until_time,
                        const std::function<Status(Slot&)>& after_ingest);
  // Writes the log's identity before the first batch from offset 0 is applied.
  Status RecordLogIdentity(const std::vector<Envelope>& events);
  // CatchUp; a bulk load's last files ingested, `after_ingest` runs for each projector on the
  // thread that ingested its file.
  Status CatchUpThen(std::optional<uint64_t> last_offset, std::optional<int64_t> until_time,
                     const std::function<Status(Slot&)>& after_ingest);
  void MaybeSnapshot();
  // At the background thread's start: CatchUp (in bulk) when the log is far enough ahead.
  void CatchUpInBulkIfFarBehind();
  Result<Slot*> FindSlot(const std::string& projector);
  uint64_t MinNextOffset() const;
  void PublishOffsets();  // under mutex_
  void Run();

  const std::string dir_;
  EventLog* const log_;
  const EngineOptions options_;

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // every family of the DB, for closing
  std::vector<Slot> slots_;                            // in options_.projectors order
  bool identity_recorded_ = false;
  std::unique_ptr<LogReader> reader_;
  std::future<Status> in_flight_;  // the batch being applied while the next one is read
  bool bulk_ = false;              // this CatchUp loads in bulk
  uint64_t snapshot_due_ = 0;      // the applied offset at which the next snapshot is taken
  bool flushed_ahead_ = false;     // the memtables' flush ahead of it is under way

  std::atomic<uint64_t> applied_offset_{0};
  std::atomic<uint64_t> bulk_files_ingested_{0};
  std::vector<std::pair<std::string, uint64_t>> projector_offsets_;  // under mutex_
  mutable std::mutex mutex_;
  std::condition_variable progress_;  // stopping_ changed (the retry wait)
  // WaitForOffset's callers: the offset each waits for, and what wakes it. Under mutex_.
  std::multimap<uint64_t, std::shared_ptr<std::condition_variable>> waiters_;
  bool stopping_ = false;
  bool stopped_ = false;
  Status last_error_;
  std::thread thread_;
};

// Process-wide and for good: RocksDB's compactions run at nice 19 from now on, yielding the cores
// to the threads a request waits for and taking the idle time. For a server (the master); a batch
// rebuild, which waits for its compactions, is faster without (docs/benchmarks.md, "Projections:
// snapshots and compactions"). Under a burst compactions fall behind and catch up after;
// RocksDB's own write slowdown (at 20 level-0 files) bounds how far.
void LowerCompactionPriority();

// Summaries of the projectors in an existing projection directory, opened as a RocksDB secondary
// so it works while a master owns the directory. `names` empty = every projector present.
Result<std::vector<ProjectionSummary>> SummarizeProjectionDir(
    const std::string& dir, const std::vector<std::string>& names);

}  // namespace cairn::projections
