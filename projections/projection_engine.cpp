#include "projections/projection_engine.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <stdlib.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <system_error>

#include "base/log.h"
#include "base/memory.h"
#include "base/thread_priority.h"
#include "projections/rocks_views.h"

namespace cairn::projections {

namespace {

// In the default column family: the event id at offset 0 of the log the projections follow.
const std::string kLogIdentityKey = "log_identity";

// Batches at least this large are applied by all projectors in parallel, overlapping with the
// read of the next batch; smaller (live) ones inline, without a thread hop.
constexpr size_t kParallelBatchEvents = 256;

constexpr auto kTailWait = std::chrono::milliseconds(100);
constexpr auto kRetryDelay = std::chrono::seconds(1);
// Events below EndOffset() are durable, so a read of them returns at once; this only bounds a
// misbehaving backend.
constexpr auto kReadAvailableWait = std::chrono::seconds(10);

Result<ProjectionSummary> SummarizeFamily(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
                                          const rocksdb::Snapshot* snapshot,
                                          const std::string& name) {
  RocksReader reader(db, family, snapshot);
  ProjectionSummary summary;
  summary.name = name;
  CAIRN_ASSIGN_OR_RETURN(auto checkpoint, ReadCheckpoint(reader));
  summary.next_offset = checkpoint.next_offset();
  summary.newest_epoch = checkpoint.newest_epoch();
  CAIRN_ASSIGN_OR_RETURN(summary.digest, DigestViews(reader));
  return summary;
}

// Memory is bounded for the whole database, not per column family. By default each family
// (one per projector, a dozen) may hold two 64 MiB memtables and builds its own 32 MiB block
// cache, so the master's RSS grew with history (docs/benchmarks.md, "Projections: memtables and
// bulk loads").
constexpr size_t kMemtableBytesPerDatabase = size_t{64} << 20;
// A memtable reserves its arena blocks (1/8 of this) and its bloom filter (5% of it) up front,
// and those count against the database's budget: at RocksDB's default of 64 MiB a dozen empty
// memtables took most of it, and at a 32 MiB budget every write forced a flush. Small memtables
// leave the budget to data.
constexpr size_t kMemtableBytesPerFamily = size_t{8} << 20;
constexpr size_t kBlockCacheBytes = size_t{32} << 20;
// A checkpoint copies up to this much write-ahead log rather than flush the memtables. The flush
// ahead of a live snapshot leaves well under that; a catch-up at full speed writes more, and its
// snapshots are flushed as before: whoever opens a snapshot replays its log, and a long one made
// past states read from it slower (docs/benchmarks.md, "Projections: snapshots and compactions").
constexpr uint64_t kCheckpointLogBytes = uint64_t{8} << 20;

// One block cache for every family of every projection database in the process.
std::shared_ptr<rocksdb::Cache> SharedBlockCache() {
  static const std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  return cache;
}

// Projectors look up many keys that do not exist yet (every new task); bloom filters, in the
// memtable and the tables, answer those without searching.
rocksdb::ColumnFamilyOptions FamilyOptions() {
  rocksdb::ColumnFamilyOptions options;
  options.memtable_prefix_bloom_size_ratio = 0.05;
  options.memtable_whole_key_filtering = true;
  options.write_buffer_size = kMemtableBytesPerFamily;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = SharedBlockCache();
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

std::vector<std::string> ExistingFamilies(const std::string& dir) {
  std::vector<std::string> families;
  if (!rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &families).ok()) families.clear();
  return families;
}

}  // namespace

struct ProjectionEngine::Pending {
  Pending(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family, bool family_is_empty,
          views::ProjectorCheckpoint from)
      : store(db, family, family_is_empty, /*keep_parsed_views=*/true),
        checkpoint(std::move(from)) {}
  RocksBatchStore store;
  views::ProjectorCheckpoint checkpoint;  // as applied into `store`
};

ProjectionEngine::Slot::Slot(std::unique_ptr<Projector> projector)
    : projector(std::move(projector)) {}
ProjectionEngine::Slot::Slot(Slot&&) noexcept = default;
ProjectionEngine::Slot::~Slot() = default;

Result<std::unique_ptr<ProjectionEngine>> ProjectionEngine::Open(const std::string& dir,
                                                                 EventLog* log,
                                                                 EngineOptions options) {
  if (options.projectors.empty()) return Status::InvalidArgument("no projectors to maintain");
  if (options.max_batch_events == 0) return Status::InvalidArgument("max_batch_events is 0");
  for (const auto& name : options.projectors) {
    if (std::count(options.projectors.begin(), options.projectors.end(), name) > 1) {
      return Status::InvalidArgument("projector '" + name + "' named twice");
    }
  }
  std::unique_ptr<ProjectionEngine> engine(new ProjectionEngine(dir, log, std::move(options)));
  for (const auto& name : engine->options_.projectors) {
    CAIRN_ASSIGN_OR_RETURN(auto projector, MakeProjector(name));
    engine->slots_.emplace_back(std::move(projector));
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Status::IOError("cannot create " + dir + ": " + error.message());
  CAIRN_RETURN_IF_ERROR(engine->OpenDb());
  CAIRN_RETURN_IF_ERROR(engine->CheckLogIdentity());
  return engine;
}

ProjectionEngine::~ProjectionEngine() {
  Stop();
  CloseDb();
}

Status ProjectionEngine::OpenDb() {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.db_write_buffer_size = kMemtableBytesPerDatabase;
  // Table files are opened by the opening thread: RocksDB's default of 16 threads a column
  // family made a start create hundreds of threads to open a few files.
  db_options.max_file_opening_threads = 1;
  std::vector<std::string> names = ExistingFamilies(dir_);
  if (std::find(names.begin(), names.end(), rocksdb::kDefaultColumnFamilyName) == names.end()) {
    names.push_back(rocksdb::kDefaultColumnFamilyName);
  }
  for (const auto& slot : slots_) {
    if (std::find(names.begin(), names.end(), slot.projector->name()) == names.end()) {
      names.push_back(slot.projector->name());
    }
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& name : names) descriptors.emplace_back(name, FamilyOptions());
  rocksdb::DB* raw = nullptr;
  CAIRN_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(db_options, dir_, descriptors, &handles_, &raw),
                                  "open projections at " + dir_));
  db_.reset(raw);
  for (auto& slot : slots_) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == slot.projector->name()) slot.family = handles_[i];
    }
    RocksReader reader(db_.get(), slot.family, nullptr);
    CAIRN_ASSIGN_OR_RETURN(slot.checkpoint, ReadCheckpoint(reader));
    std::unique_ptr<rocksdb::Iterator> any(db_->NewIterator(rocksdb::ReadOptions(), slot.family));
    any->SeekToFirst();
    slot.family_is_empty = !any->Valid() && any->status().ok();
  }
  std::string identity;
  rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), kLogIdentityKey, &identity);
  if (!status.IsNotFound()) CAIRN_RETURN_IF_ERROR(FromRocks(status, "read log identity"));
  identity_recorded_ = status.ok();
  std::lock_guard lock(mutex_);
  applied_offset_ = MinNextOffset();
  PublishOffsets();
  return Status::Ok();
}

void ProjectionEngine::CloseDb() {
  if (!db_) return;
  for (auto* handle : handles_) db_->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  handles_.clear();
  for (auto& slot : slots_) slot.family = nullptr;
  db_->Close().PermitUncheckedError();
  db_.reset();
}

Status ProjectionEngine::CheckLogIdentity() {
  // The furthest any family got, including families of projectors this engine does not run:
  // a wipe removes them too.
  uint64_t furthest = 0;
  std::string reason;
  for (auto* handle : handles_) {
    if (handle->GetName() == rocksdb::kDefaultColumnFamilyName) continue;
    RocksReader reader(db_.get(), handle, nullptr);
    CAIRN_ASSIGN_OR_RETURN(auto checkpoint, ReadCheckpoint(reader));
    furthest = std::max(furthest, checkpoint.next_offset());
    if (checkpoint.next_offset() > 0 && checkpoint.view_format() != kViewFormat && reason.empty()) {
      reason = "the " + handle->GetName() + " views have layout " +
               std::to_string(checkpoint.view_format()) + ", this build writes layout " +
               std::to_string(kViewFormat);
    }
  }
  if (furthest == 0) return Status::Ok();

  // Views of another layout cannot be continued: they are rebuilt like a foreign log's.
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log_->EndOffset());
  if (reason.empty() && end < furthest) {
    reason = "the log ends at offset " + std::to_string(end) + " but the projections applied " +
             std::to_string(furthest) + " events";
  } else if (reason.empty()) {
    CAIRN_ASSIGN_OR_RETURN(auto reader, log_->OpenReader(0));
    CAIRN_ASSIGN_OR_RETURN(auto first, reader->Next(1, kReadAvailableWait));
    if (first.empty()) return Status::Unavailable("cannot read offset 0 of " + log_->Describe());
    std::string stored;
    rocksdb::Status status = db_->Get(rocksdb::ReadOptions(), kLogIdentityKey, &stored);
    if (status.IsNotFound()) {
      reason = "the projections record no log identity";
    } else {
      CAIRN_RETURN_IF_ERROR(FromRocks(status, "read log identity"));
      if (stored != first.front().event_id()) {
        reason = "the log's first event is " + first.front().event_id() +
                 " but the projections were built from a log starting with " + stored;
      }
    }
  }
  if (reason.empty()) return Status::Ok();

  log::Warn("projections", "{} does not match {}: {}; wiping it and rebuilding from offset 0", dir_,
            log_->Describe(), reason);
  CloseDb();
  CAIRN_RETURN_IF_ERROR(
      FromRocks(rocksdb::DestroyDB(dir_, rocksdb::Options()), "wipe projections at " + dir_));
  return OpenDb();
}

void ProjectionEngine::PublishOffsets() {
  projector_offsets_.clear();
  for (const auto& slot : slots_) {
    projector_offsets_.emplace_back(slot.projector->name(), slot.checkpoint.next_offset());
  }
}

std::vector<std::pair<std::string, uint64_t>> ProjectionEngine::ProjectorOffsets() const {
  std::lock_guard lock(mutex_);
  return projector_offsets_;
}

uint64_t ProjectionEngine::MinNextOffset() const {
  uint64_t lowest = UINT64_MAX;
  for (const auto& slot : slots_) lowest = std::min(lowest, slot.checkpoint.next_offset());
  return lowest;
}

Status ProjectionEngine::ApplyToSlot(Slot& slot, const std::vector<Envelope>& events,
                                     rocksdb::WriteBatch* shared) {
  const bool bulk = bulk_;
  if (bulk && !slot.pending) {
    slot.pending =
        std::make_unique<Pending>(db_.get(), slot.family, slot.family_is_empty, slot.checkpoint);
  }
  std::optional<RocksBatchStore> batch_store;
  RocksBatchStore& store = bulk ? slot.pending->store : batch_store.emplace(db_.get(), slot.family);
  views::ProjectorCheckpoint checkpoint = bulk ? slot.pending->checkpoint : slot.checkpoint;
  bool applied = false;
  for (const auto& event : events) {
    if (event.offset() < checkpoint.next_offset()) continue;  // applied before a restart
    Status status = ApplyEvent(*slot.projector, event, store, checkpoint);
    if (!status.ok()) {
      slot.pending.reset();  // partly applied: dropped, and applied again from the checkpoint
      return status;
    }
    applied = true;
  }
  if (!applied) return Status::Ok();
  checkpoint.set_view_format(kViewFormat);
  CAIRN_RETURN_IF_ERROR(store.PutMessage(kCheckpointKey, checkpoint));
  if (bulk) {
    slot.pending->checkpoint = checkpoint;  // in the table file with the views (IngestPending)
    return Status::Ok();
  }
  if (shared != nullptr) {
    // Committed with the other projectors' changes in one write (ApplyInOneWrite).
    shared->SetSavePoint();
    Status staged = store.WriteTo(shared);
    if (!staged.ok()) {
      (void)shared->RollbackToSavePoint();
      return staged;
    }
    slot.staged = std::move(checkpoint);
    return Status::Ok();
  }
  rocksdb::WriteBatch batch;
  CAIRN_RETURN_IF_ERROR(store.WriteTo(&batch));
  CAIRN_RETURN_IF_ERROR(FromRocks(db_->Write(ViewWriteOptions(), &batch),
                                  "write " + slot.projector->name() + " projection"));
  slot.checkpoint = checkpoint;
  return Status::Ok();
}

rocksdb::WriteOptions ProjectionEngine::ViewWriteOptions() const {
  rocksdb::WriteOptions write_options;
  write_options.disableWAL = !options_.write_ahead_log;
  return write_options;
}

Status ProjectionEngine::ApplyInOneWrite(const std::vector<Envelope>& events) {
  // A small batch (a submission or two, live) is applied projector after projector on this
  // thread and committed in one RocksDB write, not one per projector: the write path's mutexes
  // and WAL record were most of a small batch's cost. A projector that fails keeps its
  // checkpoint and the others commit, as when each commits on its own.
  rocksdb::WriteBatch batch;
  Status result;
  for (auto& slot : slots_) {
    Status status = ApplyToSlot(slot, events, &batch);
    if (!status.ok() && result.ok()) result = status;
  }
  Status written = batch.Count() == 0
                       ? Status::Ok()
                       : FromRocks(db_->Write(ViewWriteOptions(), &batch), "write projections");
  for (auto& slot : slots_) {
    if (written.ok() && slot.staged) slot.checkpoint = std::move(*slot.staged);
    slot.staged.reset();
  }
  PublishProgress();
  return written.ok() ? result : written;
}

Status ProjectionEngine::IngestPending(Slot& slot) {
  if (!slot.pending) return Status::Ok();
  std::unique_ptr<Pending> pending = std::move(slot.pending);
  // In the DB's directory, so that ingesting it is a rename of a link on the same file system.
  const std::string path = dir_ + "/bulk-" + slot.projector->name() + "-" +
                           std::to_string(pending->checkpoint.next_offset()) + ".sst";
  // The file is read right after (digests, queries): its pages stay cached.
  rocksdb::SstFileWriter table(rocksdb::EnvOptions(), db_->GetOptions(slot.family), slot.family,
                               /*invalidate_page_cache=*/false);
  Status status = FromRocks(table.Open(path), "create " + path);
  size_t written = 0;
  if (status.ok()) {
    auto changes = pending->store.WriteTo(table);
    status = changes.status();
    if (changes.ok()) written = *changes;
    // A file with no keys cannot be finished; none means no event was applied.
    if (status.ok() && written > 0) status = FromRocks(table.Finish(), "write " + path);
  }
  if (status.ok() && written > 0) {
    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;
    ingest.write_global_seqno = false;  // recorded in the manifest, not written into the file
    status = FromRocks(db_->IngestExternalFile(slot.family, {path}, ingest), "ingest " + path);
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);  // moved in, or a failed attempt's leftover
  if (!status.ok() || written == 0) return status;
  slot.checkpoint = pending->checkpoint;
  slot.family_is_empty = false;
  ++bulk_files_ingested_;
  return Status::Ok();
}

Status ProjectionEngine::ForEachSlot(const std::function<Status(Slot&)>& work) {
  // Each projector commits on its own, so projectors can work side by side.
  std::vector<std::future<Status>> others;
  for (size_t i = 1; i < slots_.size(); ++i) {
    others.push_back(std::async(std::launch::async, [this, i, &work] { return work(slots_[i]); }));
  }
  Status result;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Status status = i == 0 ? work(slots_[i]) : others[i - 1].get();
    if (!status.ok() && result.ok()) result = status;
  }
  PublishProgress();
  return result;
}

void ProjectionEngine::PublishProgress() {
  // Only the callers whose offset is now applied are woken, each on its own condition variable,
  // after the lock is let go: with one shared condition variable every batch woke every waiting
  // request thread, most of them only to sleep again, and a wake under the lock sent the woken
  // thread straight back to sleep on the mutex.
  std::vector<std::shared_ptr<std::condition_variable>> due;
  {
    std::lock_guard lock(mutex_);
    applied_offset_ = MinNextOffset();
    PublishOffsets();
    for (auto waiter = waiters_.begin();
         waiter != waiters_.end() && waiter->first < applied_offset_.load(); ++waiter) {
      due.push_back(waiter->second);
    }
  }
  for (const auto& waiter : due) waiter->notify_one();
}

Status ProjectionEngine::RecordLogIdentity(const std::vector<Envelope>& events) {
  if (identity_recorded_ || events.empty() || events.front().offset() != 0) return Status::Ok();
  // Written before any view, so a DB with applied events always names its log.
  CAIRN_RETURN_IF_ERROR(
      FromRocks(db_->Put(rocksdb::WriteOptions(), kLogIdentityKey, events.front().event_id()),
                "record log identity"));
  identity_recorded_ = true;
  return Status::Ok();
}

Status ProjectionEngine::ApplyBatch(const std::vector<Envelope>& events) {
  if (events.empty()) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(RecordLogIdentity(events));
  // (A bulk load applies its batches in lanes: CatchUpInLanes.)
  if (events.size() < kParallelBatchEvents) return ApplyInOneWrite(events);
  return ForEachSlot([&](Slot& slot) { return ApplyToSlot(slot, events); });
}

Status ProjectionEngine::Dispatch(std::vector<Envelope> events) {
  CAIRN_RETURN_IF_ERROR(Drain());
  if (events.size() < kParallelBatchEvents) return ApplyBatch(events);
  in_flight_ = std::async(std::launch::async,
                          [this, batch = std::move(events)] { return ApplyBatch(batch); });
  return Status::Ok();
}

Status ProjectionEngine::Drain() {
  if (!in_flight_.valid()) return Status::Ok();
  return in_flight_.get();
}

Status ProjectionEngine::CatchUp(std::optional<uint64_t> last_offset,
                                 std::optional<int64_t> until_time) {
  return CatchUpThen(last_offset, until_time, nullptr);
}

Result<std::vector<ProjectionSummary>> ProjectionEngine::CatchUpAndSummarize(
    std::optional<uint64_t> last_offset) {
  std::vector<std::optional<ProjectionSummary>> early(slots_.size());
  CAIRN_RETURN_IF_ERROR(CatchUpThen(last_offset, std::nullopt, [&](Slot& slot) -> Status {
    CAIRN_ASSIGN_OR_RETURN(early[&slot - slots_.data()], Summarize(slot.projector->name()));
    return Status::Ok();
  }));
  std::vector<std::string> late;  // no bulk load: nothing applied, or a batch at a time
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!early[i]) late.push_back(slots_[i].projector->name());
  }
  CAIRN_ASSIGN_OR_RETURN(auto late_summaries, SummarizeAll(late));
  std::vector<ProjectionSummary> summaries;
  auto next_late = late_summaries.begin();
  for (auto& summary : early) summaries.push_back(summary ? std::move(*summary) : *next_late++);
  return summaries;
}

Status ProjectionEngine::CatchUpThen(std::optional<uint64_t> last_offset,
                                     std::optional<int64_t> until_time,
                                     const std::function<Status(Slot&)>& after_ingest) {
  CAIRN_RETURN_IF_ERROR(Drain());
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, log_->EndOffset());
  if (last_offset) end = std::min(end, *last_offset + 1);
  if (!reader_ || reader_->position() != MinNextOffset()) {
    CAIRN_ASSIGN_OR_RETURN(reader_, log_->OpenReader(MinNextOffset()));
  }
  bulk_ = options_.bulk_load_bytes > 0 && end >= MinNextOffset() + options_.bulk_load_min_events;
  Status status;
  if (bulk_) {
    status = CatchUpInLanes(end, until_time, after_ingest);
  } else {
    status = CatchUpLoop(end, until_time, [this](std::vector<Envelope> events) {
      return Dispatch(std::move(events));
    });
    Status drained = Drain();
    if (status.ok()) status = drained;
  }
  bulk_ = false;
  if (!status.ok()) {
    for (auto& slot : slots_) slot.pending.reset();
    reader_.reset();
  }
  return status;
}

namespace {

// How many batches a lane may hold that it has not started: the reader hands out the next batch
// once every lane has started the last one. Two were no faster and held more memory (a first
// start's batch is 20,000 events, parsed; docs/benchmarks.md, "Projections: memtables and bulk
// loads").
constexpr size_t kLaneDepth = 1;

}  // namespace

Status ProjectionEngine::CatchUpInLanes(uint64_t end, std::optional<int64_t> until_time,
                                        const std::function<Status(Slot&)>& after_ingest) {
  // A batch at a time with every projector on it, each batch waited for its slowest projector
  // while the other core idled (docs/benchmarks.md, "Projections: memtables and bulk loads"). In
  // lanes a projector goes on to the next batch, and the first done ingests its file and digests
  // it while the slowest is still applying.
  using Batch = std::shared_ptr<const std::vector<Envelope>>;
  struct Lane {
    std::deque<Batch> batches;
    size_t pending_bytes = 0;  // its bulk store's, after its last batch
    bool busy = false;         // applying a batch taken from `batches`
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Lane> lanes(slots_.size());
  bool closed = false;  // no more batches
  Status failed;        // the first lane's error: the reader stops
  auto idle = [&] {
    return std::all_of(lanes.begin(), lanes.end(),
                       [](const Lane& lane) { return lane.batches.empty() && !lane.busy; });
  };

  // A lane applies every batch handed to it, then ingests what it applied, whatever another
  // lane did: each projector commits on its own (a stop, or the reader's error, still commits
  // the batches already handed out). One that fails stops there (its changes not yet ingested
  // are dropped, to be applied again from its checkpoint) and stops the reader.
  auto run_lane = [&](size_t index) -> Status {
    Slot& slot = slots_[index];
    Lane& lane = lanes[index];
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return closed || !lane.batches.empty(); });
      if (lane.batches.empty()) break;  // closed, and every batch applied
      Batch batch = std::move(lane.batches.front());
      lane.batches.pop_front();
      lane.busy = true;
      lock.unlock();
      Status status;
      try {
        status = ApplyToSlot(slot, *batch);
      } catch (const std::exception& error) {  // as an error, or the reader would wait forever
        slot.pending.reset();
        status = Status::Internal("projector " + slot.projector->name() + ": " + error.what());
      }
      const size_t bytes = slot.pending ? slot.pending->store.ApproximateBytes() : 0;
      batch.reset();
      lock.lock();
      lane.busy = false;
      lane.pending_bytes = bytes;
      if (!status.ok()) {
        if (failed.ok()) failed = status;
        lane.batches.clear();
        changed.notify_all();
        return status;
      }
      changed.notify_all();
    }
    lock.unlock();
    Status status = IngestPending(slot);
    if (status.ok() && after_ingest) status = after_ingest(slot);
    return status;
  };
  std::vector<std::future<Status>> threads;
  try {
    for (size_t i = 0; i < lanes.size(); ++i) {
      threads.push_back(std::async(std::launch::async, run_lane, i));
    }
  } catch (const std::system_error& error) {
    {
      std::lock_guard lock(mutex);
      closed = true;  // the lanes started have nothing to apply: they end at once
    }
    changed.notify_all();
    for (auto& thread : threads) (void)thread.get();
    return Status::Unavailable(std::string("cannot start a projector's lane: ") + error.what());
  }

  Status read = CatchUpLoop(end, until_time, [&](std::vector<Envelope> events) -> Status {
    CAIRN_RETURN_IF_ERROR(RecordLogIdentity(events));
    auto batch = std::make_shared<const std::vector<Envelope>>(std::move(events));
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] {
      return !failed.ok() || std::all_of(lanes.begin(), lanes.end(), [](const Lane& lane) {
        return lane.batches.size() < kLaneDepth;
      });
    });
    if (!failed.ok()) return failed;
    for (auto& lane : lanes) lane.batches.push_back(batch);
    changed.notify_all();
    size_t pending_bytes = 0;
    for (const auto& lane : lanes) pending_bytes += lane.pending_bytes;
    if (pending_bytes < options_.bulk_load_bytes) return Status::Ok();
    // At the budget, every lane's changes are ingested together, so AppliedOffset (their
    // lowest offset) advances; the lanes wait for the next batch meanwhile.
    changed.wait(lock, [&] { return !failed.ok() || idle(); });
    if (!failed.ok()) return failed;
    for (auto& lane : lanes) lane.pending_bytes = 0;
    return ForEachSlot([this](Slot& slot) { return IngestPending(slot); });
  });
  {
    std::lock_guard lock(mutex);
    closed = true;
    if (!read.ok() && failed.ok()) failed = read;
  }
  changed.notify_all();
  Status result = read;
  for (auto& thread : threads) {
    Status status = thread.get();
    if (result.ok()) result = status;
  }
  if (result.ok()) result = failed;
  PublishProgress();
  return result;
}

Status ProjectionEngine::CatchUpLoop(uint64_t end, std::optional<int64_t> until_time,
                                     const std::function<Status(std::vector<Envelope>)>& dispatch) {
  const size_t batch_events = bulk_ ? options_.bulk_batch_events : options_.max_batch_events;
  while (reader_->position() < end) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return Status::Unavailable("projections are stopping");
    }
    size_t wanted = std::min<uint64_t>(batch_events, end - reader_->position());
    CAIRN_ASSIGN_OR_RETURN(auto events, reader_->Next(wanted, kReadAvailableWait));
    if (events.empty()) {
      return Status::Unavailable(log_->Describe() + " returned nothing at offset " +
                                 std::to_string(reader_->position()) + " below its end " +
                                 std::to_string(end));
    }
    if (until_time) {
      auto later = std::find_if(events.begin(), events.end(), [&](const Envelope& event) {
        return event.time_unix_micros() > *until_time;
      });
      if (later != events.end()) {
        events.erase(later, events.end());
        return dispatch(std::move(events));
      }
    }
    CAIRN_RETURN_IF_ERROR(dispatch(std::move(events)));
  }
  return Status::Ok();
}

Result<uint64_t> ProjectionEngine::CreateCheckpoint(const std::string& target_dir) {
  CAIRN_RETURN_IF_ERROR(Drain());
  const uint64_t offset = MinNextOffset();
  for (const auto& slot : slots_) {
    if (slot.checkpoint.next_offset() != offset) {
      return Status::FailedPrecondition(
          "the projectors are at different offsets (" + slot.projector->name() + " at " +
          std::to_string(slot.checkpoint.next_offset()) + ", not " + std::to_string(offset) + ")");
    }
  }
  rocksdb::Checkpoint* raw = nullptr;
  CAIRN_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw), "checkpoint"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // Flushing twelve memtables here paused the projections, and every request waiting on them,
  // even after a flush ahead (MaybeSnapshot): the flushes' fixed costs. Copying the log written
  // since the flush ahead pauses them less (docs/benchmarks.md, "Projections: snapshots and
  // compactions").
  const uint64_t log_size_for_flush = options_.write_ahead_log ? kCheckpointLogBytes : 0;
  CAIRN_RETURN_IF_ERROR(FromRocks(checkpoint->CreateCheckpoint(target_dir, log_size_for_flush),
                                  "checkpoint projections into " + target_dir));
  return offset;
}

int64_t ProjectionEngine::MaxEventTime() const {
  int64_t latest = 0;
  for (const auto& slot : slots_) {
    latest = std::max(latest, slot.checkpoint.max_event_time_unix_micros());
  }
  return latest;
}

void ProjectionEngine::MaybeSnapshot() {
  if (options_.snapshot_every_events == 0 || !options_.take_snapshot) return;
  const uint64_t applied = applied_offset_.load();
  if (snapshot_due_ == 0) {
    // The first multiple past what was applied at start: a restart does not take one at once.
    snapshot_due_ = (applied / options_.snapshot_every_events + 1) * options_.snapshot_every_events;
  }
  if (applied < snapshot_due_) {
    // The checkpoint copies the write-ahead log written since the memtables' last flush, or
    // flushes them while the projections wait (CreateCheckpoint): a flush in the background a
    // twentieth of an interval ahead keeps that log to a few MiB.
    if (!flushed_ahead_ && applied + options_.snapshot_every_events / 20 >= snapshot_due_) {
      flushed_ahead_ = true;
      rocksdb::FlushOptions ahead;
      ahead.wait = false;
      ahead.allow_write_stall = true;
      db_->Flush(ahead, handles_).PermitUncheckedError();  // the checkpoint flushes anyway
    }
    return;
  }
  snapshot_due_ = (applied / options_.snapshot_every_events + 1) * options_.snapshot_every_events;
  flushed_ahead_ = false;
  options_.take_snapshot(*this);
}

void ProjectionEngine::Start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Run(); });
}

void ProjectionEngine::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [offset, waiter] : waiters_) waiter->notify_one();
  }
  progress_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProjectionEngine::CatchUpInBulkIfFarBehind() {
  if (options_.bulk_load_bytes == 0) return;
  auto end = log_->EndOffset();
  const uint64_t from = MinNextOffset();
  if (!end.ok() || *end < from + options_.bulk_load_min_events) return;
  if (options_.snapshot_every_events > 0 && snapshot_due_ == 0) {
    // A catch-up past a snapshot multiple takes one when it ends (MaybeSnapshot), so a lost
    // projection DB does not mean this fold again.
    snapshot_due_ = (from / options_.snapshot_every_events + 1) * options_.snapshot_every_events;
  }
  const auto started = std::chrono::steady_clock::now();
  Status status = CatchUp(std::nullopt);
  if (!status.ok()) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;  // stopped mid-way: nothing to warn about
    }
    log::Warn("projections",
              "catching up in bulk from offset {} stopped ({}); following the log "
              "a batch at a time from offset {}",
              from, status, MinNextOffset());
    return;
  }
  // Its stores were transient: their pages go back rather than staying in the allocator.
  ReturnFreedMemory();
  log::Info("projections", "caught up in bulk from offset {} to {} in {:.2f} s", from,
            MinNextOffset(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

void ProjectionEngine::Run() {
  NameThisThread(kProjectorThreadName);
  auto report = [this](const Status& status) {
    log::Error("projections", "{}; retrying in {} s", status,
               std::chrono::duration_cast<std::chrono::seconds>(kRetryDelay).count());
    std::unique_lock lock(mutex_);
    last_error_ = status;
    progress_.wait_for(lock, kRetryDelay, [this] { return stopping_; });
  };
  CatchUpInBulkIfFarBehind();
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
    }
    if (!reader_) {
      // Nothing is in flight here: the reader is only dropped after a Drain.
      auto reader = log_->OpenReader(MinNextOffset());
      if (!reader.ok()) {
        report(reader.status());
        continue;
      }
      reader_ = std::move(reader).value();
    }
    MaybeSnapshot();
    auto events = reader_->Next(options_.max_batch_events, kTailWait);
    Status status = events.ok() ? Dispatch(std::move(events).value()) : events.status();
    if (!status.ok()) {
      Status drained = Drain();
      reader_.reset();  // reopened at the lowest checkpoint; applied events are skipped
      report(drained.ok() ? status : drained);
    }
  }
  Status drained = Drain();
  if (!drained.ok()) log::Error("projections", "{}", drained);
}

ProjectionEngine::StorageMemory ProjectionEngine::MeasureMemory() const {
  StorageMemory memory;
  if (!db_) return memory;
  uint64_t value = 0;
  if (db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &value)) {
    memory.memtable_bytes = value;
  }
  if (db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kEstimateTableReadersMem, &value)) {
    memory.table_reader_bytes = value;
  }
  memory.block_cache_bytes = SharedBlockCache()->GetUsage();
  return memory;
}

Status ProjectionEngine::WaitForOffset(uint64_t offset, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (applied_offset_.load() <= offset && !stopping_) {
    auto woken = std::make_shared<std::condition_variable>();
    auto waiter = waiters_.emplace(offset, woken);
    woken->wait_for(lock, timeout, [&] { return applied_offset_.load() > offset || stopping_; });
    waiters_.erase(waiter);
  }
  if (applied_offset_.load() > offset) return Status::Ok();
  if (stopping_) return Status::Unavailable("projections are stopped");
  std::string message =
      "projections applied up to offset " + std::to_string(applied_offset_.load()) + ", not past " +
      std::to_string(offset) + ", within " + std::to_string(timeout.count()) + " ms";
  if (!last_error_.ok()) message += " (last error: " + last_error_.ToString() + ")";
  return Status::DeadlineExceeded(message);
}

Result<ProjectionEngine::Slot*> ProjectionEngine::FindSlot(const std::string& projector) {
  for (auto& slot : slots_) {
    if (slot.projector->name() == projector) return &slot;
  }
  return Status::NotFound("projection '" + projector + "' is not maintained here");
}

Status ProjectionEngine::Read(const std::string& projector,
                              const std::function<Status(ViewReader&)>& read) {
  CAIRN_ASSIGN_OR_RETURN(Slot * slot, FindSlot(projector));
  ScopedSnapshot snapshot(db_.get());
  RocksReader reader(db_.get(), slot->family, snapshot.get());
  return read(reader);
}

Result<ProjectionSummary> ProjectionEngine::Summarize(const std::string& projector) {
  CAIRN_ASSIGN_OR_RETURN(Slot * slot, FindSlot(projector));
  ScopedSnapshot snapshot(db_.get());
  return SummarizeFamily(db_.get(), slot->family, snapshot.get(), projector);
}

Result<std::vector<ProjectionSummary>> ProjectionEngine::SummarizeAll(
    const std::vector<std::string>& projectors) {
  std::vector<std::future<Result<ProjectionSummary>>> digests;
  for (const auto& name : projectors) {
    digests.push_back(std::async(std::launch::async, [this, &name] { return Summarize(name); }));
  }
  std::vector<ProjectionSummary> summaries;
  Status first_error;
  for (auto& digest : digests) {  // every one waited for: they read this engine
    auto summary = digest.get();
    if (!summary.ok()) {
      if (first_error.ok()) first_error = summary.status();
      continue;
    }
    summaries.push_back(std::move(summary).value());
  }
  if (!first_error.ok()) return first_error;
  return summaries;
}

std::vector<ProjectionSummary> ProjectionEngine::Positions() const {
  std::vector<ProjectionSummary> positions;
  for (const auto& slot : slots_) {
    ProjectionSummary position;
    position.name = slot.projector->name();
    position.next_offset = slot.checkpoint.next_offset();
    position.newest_epoch = slot.checkpoint.newest_epoch();
    positions.push_back(std::move(position));
  }
  return positions;
}

Status ProjectionEngine::VerifyChecksums() {
  return FromRocks(db_->VerifyChecksum(), "verify the table files' checksums");
}

void LowerCompactionPriority() {
  // kLow is nice 19 in RocksDB's POSIX environment; each thread of the pool lowers itself before
  // its next job.
  static std::once_flag lowered;
  std::call_once(lowered, [] {
    rocksdb::Env::Default()
        ->LowerThreadPoolCPUPriority(rocksdb::Env::Priority::LOW, rocksdb::CpuPriority::kLow)
        .PermitUncheckedError();
  });
}

Result<std::vector<ProjectionSummary>> SummarizeProjectionDir(
    const std::string& dir, const std::vector<std::string>& names) {
  std::vector<std::string> families;
  rocksdb::Status listed = rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &families);
  if (!listed.ok()) {
    return Status::NotFound("no projection database at " + dir + ": " + listed.ToString());
  }
  std::vector<std::string> wanted = names;
  if (wanted.empty()) {
    for (const auto& name : ProjectorNames()) {
      if (std::find(families.begin(), families.end(), name) != families.end()) {
        wanted.push_back(name);
      }
    }
  }
  for (const auto& name : wanted) {
    CAIRN_ASSIGN_OR_RETURN(auto projector, MakeProjector(name));
    (void)projector;
    if (std::find(families.begin(), families.end(), name) == families.end()) {
      return Status::NotFound("projection '" + name + "' is not in " + dir);
    }
  }

  // A secondary keeps its own info log in a scratch directory and never writes to `dir`.
  // temp_directory_path() fails (and its throwing form throws) when TMPDIR is not a directory.
  std::error_code temp_error;
  std::filesystem::path temp_dir = std::filesystem::temp_directory_path(temp_error);
  if (temp_error || temp_dir.empty()) temp_dir = "/tmp";
  std::string pattern = temp_dir.string() + "/cairn-secondary-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return Status::IOError("cannot create " + pattern);
  const std::string secondary_path = pattern;
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{secondary_path};

  rocksdb::DBOptions options;
  options.max_open_files = -1;  // required of a secondary
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& family : families) {
    descriptors.emplace_back(family, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  CAIRN_RETURN_IF_ERROR(FromRocks(
      rocksdb::DB::OpenAsSecondary(options, dir, secondary_path, descriptors, &handles, &raw),
      "open projections at " + dir + " as a secondary"));
  std::unique_ptr<rocksdb::DB> db(raw);
  Status caught_up = FromRocks(db->TryCatchUpWithPrimary(), "catch up with the primary");
  std::vector<ProjectionSummary> summaries;
  Status result = caught_up;
  for (const auto& name : wanted) {
    if (!result.ok()) break;
    for (size_t i = 0; i < families.size(); ++i) {
      if (families[i] != name) continue;
      auto summary = SummarizeFamily(db.get(), handles[i], nullptr, name);
      if (!summary.ok()) {
        result = summary.status();
        break;
      }
      summaries.push_back(std::move(summary).value());
    }
  }
  for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  db->Close().PermitUncheckedError();
  CAIRN_RETURN_IF_ERROR(result);
  return summaries;
}

}  // namespace cairn::projections
