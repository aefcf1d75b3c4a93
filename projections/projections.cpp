#include "projections/projections.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "base/crash_points.h"
#include "base/log.h"
#include "base/memory.h"
#include "base/thread_priority.h"

namespace cairn {

using projections::ViewReader;

// Takes the engine's snapshots: the checkpoint on the engine's thread (hard links and a copy of
// the write-ahead log, with each projector's position), the publication (the metadata, its sync,
// the rename) on a thread of its own, so the projections never wait for it.
class Projections::Snapshotter {
 public:
  Snapshotter(std::unique_ptr<projections::SnapshotStore> store, projections::SnapshotPolicy policy)
      : store_(std::move(store)), policy_(policy), thread_([this] { Run(); }) {}
  ~Snapshotter() { Stop(); }

  const projections::SnapshotStore& store() const { return *store_; }

  // On the engine's thread, between batches.
  void Take(projections::ProjectionEngine& engine) {
    const auto start = std::chrono::steady_clock::now();
    auto made = projections::CheckpointInto(engine, *store_);
    if (!made.ok()) {
      log::Warn("snapshots", "no snapshot at offset {}: {}", engine.AppliedOffset(), made.status());
      return;
    }
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    pending_.push_back(
        {std::move(made).value(),
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    wakeup_.notify_all();
  }

  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wakeup_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  std::optional<projections::SnapshotInfo> latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
  }
  void set_latest(projections::SnapshotInfo info) {
    std::lock_guard lock(mutex_);
    latest_ = std::move(info);
  }
  Status WaitFor(uint64_t offset, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    const bool published = published_.wait_for(
        lock, timeout, [&] { return stopping_ || (latest_ && latest_->next_offset >= offset); });
    if (published && latest_ && latest_->next_offset >= offset) return Status::Ok();
    return Status::DeadlineExceeded("no snapshot at or past offset " + std::to_string(offset));
  }

 private:
  struct Job {
    projections::Checkpointed checkpoint;
    double seconds = 0;  // taking the checkpoint
  };

  void Run() {
    // Publishing measures the checkpoint's files and syncs their directory: at nice 19 it takes
    // the idle time, not the cores the writer and the projections need.
    NameThisThread(kSnapshotThreadName);
    SetThisThreadNice(kBackgroundNice);
    std::unique_lock lock(mutex_);
    while (true) {
      wakeup_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (stopping_) return;  // what is pending stays tmp-, removed at the next start
      Job job = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      CrashPoint("snapshot-publish");
      auto published = store_->Publish(job.checkpoint, policy_.keep, job.seconds);
      lock.lock();
      if (!published.ok()) {
        log::Warn("snapshots", "snapshot at offset {} not published: {}",
                  job.checkpoint.next_offset, published.status());
        continue;
      }
      log::Info("snapshots",
                "snapshot at offset {} published in {:.2f} s (the projections paused {:.1f} ms "
                "for its checkpoint; {} bytes): {}",
                published->next_offset, published->seconds_to_take, job.seconds * 1000,
                published->bytes, published->path);
      latest_ = std::move(published).value();
      published_.notify_all();
    }
  }

  const std::unique_ptr<projections::SnapshotStore> store_;
  const projections::SnapshotPolicy policy_;
  mutable std::mutex mutex_;
  std::condition_variable wakeup_;
  std::condition_variable published_;
  std::deque<Job> pending_;
  std::optional<projections::SnapshotInfo> latest_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after everything it reads
};

namespace {

// Whether `engine`, opened on a copy of `snapshot`, is what was published: every table block
// passes its checksum, and each projector is at the offset recorded. The second catches what the
// first cannot: views still in the write-ahead log the checkpoint copied, whose replay stops
// quietly at a damaged or missing record (every batch writes its projectors' offsets with their
// views, so any record lost leaves one behind). Snapshots published by earlier builds also carry
// each projection's digest, checked too.
Status CheckRestored(projections::ProjectionEngine& engine,
                     const projections::SnapshotInfo& snapshot) {
  CAIRN_RETURN_IF_ERROR(engine.VerifyChecksums());
  const auto offsets = engine.ProjectorOffsets();
  std::vector<std::string> digested;
  for (const auto& expected : snapshot.projections) {
    auto found = std::find_if(offsets.begin(), offsets.end(),
                              [&](const auto& offset) { return offset.first == expected.name; });
    const uint64_t at = found == offsets.end() ? 0 : found->second;
    if (at != expected.next_offset) {
      return Status::Corruption(expected.name + " is at offset " + std::to_string(at) +
                                ", not at " + std::to_string(expected.next_offset) +
                                " as published");
    }
    if (!expected.digest.empty()) digested.push_back(expected.name);
  }
  if (digested.empty()) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auto summaries, engine.SummarizeAll(digested));
  for (const auto& summary : summaries) {
    for (const auto& expected : snapshot.projections) {
      if (expected.name == summary.name && expected.digest != summary.digest) {
        return Status::Corruption(expected.name + " does not match the digest it was taken with");
      }
    }
  }
  return Status::Ok();
}

// Opens the projection DB in `dir`; when it is missing or does not open, starts it from the
// newest snapshot that checks out instead (its table files' checksums and its projectors' offsets;
// digests too when it has them), else from offset 0. Says which in the log.
Result<std::unique_ptr<projections::ProjectionEngine>> OpenOrRestore(
    const std::string& dir, EventLog* log, const projections::EngineOptions& options,
    const projections::SnapshotStore& store,
    std::optional<projections::SnapshotInfo>* started_from) {
  std::error_code error;
  const bool present = std::filesystem::exists(dir + "/CURRENT", error);
  if (present) {
    auto engine = projections::ProjectionEngine::Open(dir, log, options);
    if (engine.ok()) return engine;
    log::Error("projections", "cannot open the projections at {} ({}); restoring them", dir,
               engine.status());
  }
  std::vector<projections::SnapshotInfo> snapshots = store.List();
  if (!present && snapshots.empty()) return projections::ProjectionEngine::Open(dir, log, options);
  if (!present) log::Warn("projections", "the projections at {} are missing; restoring them", dir);
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    std::filesystem::remove_all(dir, error);
    Status status = store.CopyTo(*it, dir);
    if (status.ok()) {
      auto engine = projections::ProjectionEngine::Open(dir, log, options);
      status = engine.status();
      if (status.ok()) status = CheckRestored(**engine, *it);
      if (status.ok()) {
        log::Info("projections",
                  "started the projections from snapshot {} (offset {}); the log's tail follows",
                  it->path, it->next_offset);
        *started_from = *it;
        return std::move(engine).value();
      }
    }
    log::Warn("projections", "snapshot {} is not usable ({}); trying an older one", it->path,
              status);
  }
  std::filesystem::remove_all(dir, error);
  log::Warn("projections", "no usable snapshot: folding the whole log into {}", dir);
  return projections::ProjectionEngine::Open(dir, log, options);
}

}  // namespace

Projections::Projections(std::unique_ptr<projections::ProjectionEngine> engine,
                         std::shared_ptr<Snapshotter> snapshotter)
    : engine_(std::move(engine)), snapshotter_(std::move(snapshotter)) {}

Result<std::unique_ptr<Projections>> Projections::Open(const std::string& dir, EventLog* log,
                                                       projections::EngineOptions options) {
  CAIRN_ASSIGN_OR_RETURN(auto engine,
                         projections::ProjectionEngine::Open(dir, log, std::move(options)));
  engine->Start();
  return std::unique_ptr<Projections>(new Projections(std::move(engine)));
}

Result<std::unique_ptr<Projections>> Projections::Open(const std::string& dir, EventLog* log,
                                                       const std::string& snapshot_dir,
                                                       projections::SnapshotPolicy policy,
                                                       projections::EngineOptions options) {
  CAIRN_ASSIGN_OR_RETURN(auto store, projections::SnapshotStore::Open(snapshot_dir));
  auto snapshotter = std::make_shared<Snapshotter>(std::move(store), policy);
  options.snapshot_every_events = policy.every_events;
  options.take_snapshot = [snapshotter](projections::ProjectionEngine& engine) {
    snapshotter->Take(engine);
  };
  std::optional<projections::SnapshotInfo> started_from;
  CAIRN_ASSIGN_OR_RETURN(auto engine,
                         OpenOrRestore(dir, log, options, snapshotter->store(), &started_from));
  if (started_from) {
    snapshotter->set_latest(*started_from);
  } else if (auto snapshots = snapshotter->store().List(); !snapshots.empty()) {
    snapshotter->set_latest(snapshots.back());
  }
  engine->Start();
  std::unique_ptr<Projections> opened(new Projections(std::move(engine), std::move(snapshotter)));
  opened->started_from_ = std::move(started_from);
  return opened;
}

Projections::~Projections() { Stop(); }

void Projections::Stop() {
  engine_->Stop();
  if (snapshotter_) snapshotter_->Stop();
}

const projections::SnapshotStore* Projections::snapshots() const {
  return snapshotter_ ? &snapshotter_->store() : nullptr;
}

Status Projections::WaitForSnapshot(uint64_t offset, std::chrono::milliseconds timeout) {
  if (!snapshotter_) return Status::FailedPrecondition("these projections take no snapshots");
  return snapshotter_->WaitFor(offset, timeout);
}

std::optional<projections::SnapshotInfo> Projections::LatestSnapshot() const {
  return snapshotter_ ? snapshotter_->latest() : std::nullopt;
}

Status Projections::ReadViews(const std::string& projector,
                              const std::function<Status(ViewReader&)>& read) {
  return engine_->Read(projector, read);
}

uint64_t Projections::AppliedOffset() const { return engine_->AppliedOffset(); }

Status Projections::WaitForOffset(uint64_t offset, std::chrono::milliseconds timeout) {
  return engine_->WaitForOffset(offset, timeout);
}

Result<std::string> Projections::Digest(const std::string& projection) {
  CAIRN_ASSIGN_OR_RETURN(auto summary, engine_->Summarize(projection));
  return summary.digest;
}

Result<projections::ProjectionSummary> Projections::Summary(const std::string& projection) {
  return engine_->Summarize(projection);
}

namespace {
// In all: more than the projections of the 1M-event benchmark history hold at its end as counted
// (views kept parsed count 5x their bytes), so each is ingested as one table file
// (docs/benchmarks.md, "Projections: memtables and bulk loads").
constexpr size_t kRebuildBulkLoadBytes = size_t{1024} << 20;
}  // namespace

Result<std::vector<projections::ProjectionSummary>> RebuildProjections(
    const std::string& out_dir, EventLog* log, const std::vector<std::string>& names,
    std::optional<uint64_t> last_offset, size_t max_batch_events) {
  std::error_code error;
  if (std::filesystem::exists(out_dir, error) && !std::filesystem::is_empty(out_dir, error)) {
    return Status::FailedPrecondition("rebuild needs a fresh directory; " + out_dir +
                                      " is not empty");
  }
  projections::EngineOptions options;
  if (!names.empty()) options.projectors = names;
  options.max_batch_events = max_batch_events;
  // Rebuilt whole or not at all: closing the DB flushes what its memtables hold.
  options.write_ahead_log = false;
  options.bulk_load_bytes = kRebuildBulkLoadBytes;
  options.bulk_load_min_events = 0;
  options.bulk_batch_events = max_batch_events;
  // A rebuild is run by a tool or a benchmark on its own, so the process-wide switch is its to
  // make (base/memory.h).
  ScopedHugePagesOff huge_pages_off;
  CAIRN_ASSIGN_OR_RETURN(auto engine, projections::ProjectionEngine::Open(out_dir, log, options));
  return engine->CatchUpAndSummarize(last_offset);
}

struct ProjectionState::Part {
  std::unique_ptr<projections::Projector> projector;
  projections::MemoryViewStore store;
  views::ProjectorCheckpoint checkpoint;
};

ProjectionState::ProjectionState() {
  for (const auto& name : projections::ProjectorNames()) {
    auto part = std::make_unique<Part>();
    part->projector = std::move(projections::MakeProjector(name)).value();
    parts_.push_back(std::move(part));
  }
}

ProjectionState::~ProjectionState() = default;
ProjectionState::ProjectionState(ProjectionState&&) noexcept = default;
ProjectionState& ProjectionState::operator=(ProjectionState&&) noexcept = default;

Status ProjectionState::Apply(const events::Envelope& event) {
  for (auto& part : parts_) {
    CAIRN_RETURN_IF_ERROR(
        projections::ApplyEvent(*part->projector, event, part->store, part->checkpoint));
  }
  return Status::Ok();
}

uint64_t ProjectionState::next_offset() const { return parts_.front()->checkpoint.next_offset(); }

Result<ProjectionState::Part*> ProjectionState::Find(const std::string& projection) {
  for (auto& part : parts_) {
    if (part->projector->name() == projection) return part.get();
  }
  return Status::InvalidArgument("unknown projection '" + projection + "'");
}

Status ProjectionState::ReadViews(const std::string& projector,
                                  const std::function<Status(ViewReader&)>& read) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projector));
  return read(part->store);
}

Result<std::string> ProjectionState::Digest(const std::string& projection) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projection));
  return projections::DigestViews(part->store);
}

}  // namespace cairn
