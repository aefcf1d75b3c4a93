// Cairn's read side, as the master and the replay tools use it.
//
//  * Projections: the live projection DB of a master. A background thread tails the EventLog and
//    folds every event into the views (projector.h lists them); the queries (queries.h) read
//    consistent snapshots. Every method is thread-safe.
//  * RebuildProjections: a fresh projection DB from offset 0, optionally only up to an offset.
//  * SummarizeProjectionDir (projection_engine.h): offsets and digests of a DB another process
//    may own.
//  * ProjectionState: the same projectors folded into memory, for "the cluster as of offset N",
//    with the same queries.
//
// Views, keys, the exactly-once rule and digests are described in projections/README.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/event_log.h"
#include "projections/projection_engine.h"
#include "projections/queries.h"
#include "projections/snapshots.h"
#include "views.pb.h"

namespace cairn {

class Projections : public Queries {
 public:
  // Opens (creating when missing) the projection DB in `dir` and starts following `log`, which
  // must outlive this object. A DB built from another log, or from a longer one than `log`, is
  // wiped and rebuilt (the reason is logged). Returns before the projections have caught up:
  // readers that need an offset call WaitForOffset.
  static Result<std::unique_ptr<Projections>> Open(const std::string& dir, EventLog* log,
                                                   projections::EngineOptions options = {});

  // The same, with snapshots (projections/snapshots.h) in `snapshot_dir`: taken in the
  // background as `policy` says, and used when the DB in `dir` is missing or cannot be opened:
  // the newest snapshot that checks out (every table block's checksum, each projector at the
  // offset recorded, and the digests of a snapshot that has them), else an older one, else a
  // fold from offset 0, each step logged.
  static Result<std::unique_ptr<Projections>> Open(const std::string& dir, EventLog* log,
                                                   const std::string& snapshot_dir,
                                                   projections::SnapshotPolicy policy,
                                                   projections::EngineOptions options = {});
  ~Projections() override;  // stops

  // The snapshot store, or nullptr when this master takes none.
  const projections::SnapshotStore* snapshots() const;
  // The snapshot the projections were restored from when this object opened them, if any.
  const std::optional<projections::SnapshotInfo>& StartedFrom() const { return started_from_; }
  // The newest snapshot this process published or started from.
  std::optional<projections::SnapshotInfo> LatestSnapshot() const;
  // Blocks until a snapshot at or past `offset` is published; DeadlineExceeded after `timeout`.
  Status WaitForSnapshot(uint64_t offset, std::chrono::milliseconds timeout);

  // Stops following the log. Queries keep working on what was applied. Idempotent.
  void Stop();

  // Every event below this offset is applied in every projection.
  uint64_t AppliedOffset() const;
  // Each projection's own next offset.
  std::vector<std::pair<std::string, uint64_t>> ProjectionOffsets() const {
    return engine_->ProjectorOffsets();
  }
  projections::ProjectionEngine::StorageMemory MeasureMemory() const {
    return engine_->MeasureMemory();
  }
  // Blocks until every event <= offset is applied: OK, or DeadlineExceeded after `timeout`, or
  // Unavailable once stopped.
  Status WaitForOffset(uint64_t offset, std::chrono::milliseconds timeout);

  // Hex SHA-256 of the projection's views in key order, excluding its offset/epoch bookkeeping:
  // equal for a live and a rebuilt projection at the same offset.
  Result<std::string> Digest(const std::string& projection);
  Result<projections::ProjectionSummary> Summary(const std::string& projection);

 protected:
  Status ReadViews(const std::string& projector,
                   const std::function<Status(projections::ViewReader&)>& read) override;

 private:
  class Snapshotter;
  explicit Projections(std::unique_ptr<projections::ProjectionEngine> engine,
                       std::shared_ptr<Snapshotter> snapshotter = nullptr);
  std::unique_ptr<projections::ProjectionEngine> engine_;
  std::shared_ptr<Snapshotter> snapshotter_;  // shared with the engine's take_snapshot
  std::optional<projections::SnapshotInfo> started_from_;
};

// Builds a fresh projection DB in `out_dir` (absent or empty) from offset 0 of `log`, up to and
// including `last_offset` when given, else to the log's current end. `names` empty = every
// projection. Returns each projection's summary. Transparent huge pages are off, process-wide,
// while it runs (ScopedHugePagesOff, base/memory.h): a rebuild has its process to itself.
Result<std::vector<projections::ProjectionSummary>> RebuildProjections(
    const std::string& out_dir, EventLog* log, const std::vector<std::string>& names,
    std::optional<uint64_t> last_offset, size_t max_batch_events = 50000);

// Every projector folded into memory: the state of the cluster after a prefix of the log.
// Not thread-safe.
class ProjectionState : public Queries {
 public:
  ProjectionState();
  ~ProjectionState() override;
  ProjectionState(ProjectionState&&) noexcept;
  ProjectionState& operator=(ProjectionState&&) noexcept;

  // Applies the event at offset next_offset() (fenced like the live projections).
  Status Apply(const events::Envelope& event);
  uint64_t next_offset() const;

  Result<std::string> Digest(const std::string& projection);

 protected:
  Status ReadViews(const std::string& projector,
                   const std::function<Status(projections::ViewReader&)>& read) override;

 private:
  struct Part;
  Result<Part*> Find(const std::string& projection);
  std::vector<std::unique_ptr<Part>> parts_;
};

}  // namespace cairn
