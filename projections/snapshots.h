// Snapshots of the projection DB: RocksDB checkpoints taken at log offsets, each with the offset,
// the latest event time of its prefix and every projection's offset. They serve two purposes:
//  * a master whose projection DB is lost or corrupt starts from the newest valid snapshot plus
//    the log's tail instead of folding the whole log (Projections::Open);
//  * "the cluster as of offset N or time T" starts from the newest snapshot at or before it plus
//    the events up to it (PastProjections), instead of folding from offset 0.
//
// On disk, in the snapshot directory (<data_dir>/snapshots):
//   snap-<next_offset, 20 digits>/   a RocksDB checkpoint plus SNAPSHOT (the metadata, JSON)
//   tmp-*/                           a snapshot being made; removed on open (a crash left it)
//   scratch-*/                       a time-travel copy in use; its owner removes it
// A snapshot is published by renaming its finished tmp- directory, after its SNAPSHOT file is
// synced, so a crash at any moment leaves either the complete snapshot or none.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "events/event_log.h"
#include "projections/projection_engine.h"
#include "projections/queries.h"

namespace cairn::projections {

struct SnapshotPolicy {
  uint64_t every_events = 50'000;  // 0 = take none
  size_t keep = 32;                // the newest ones kept; older ones are deleted
};

struct SnapshotInfo {
  std::string path;
  uint64_t next_offset = 0;                // every event below it is in the snapshot
  int64_t max_event_time_unix_micros = 0;  // the latest event time among them
  uint32_t view_format = 0;
  // Each one's position (next_offset, newest epoch). Snapshots published by earlier builds also
  // carry each one's digest; later ones leave it empty: a restore checks the table files' block
  // checksums and each projector's offset instead (CheckRestored, projections.cpp), and a digest
  // costs a scan of every view at every snapshot (docs/benchmarks.md, "Projections: snapshots
  // and compactions"). A build from before this change skips these snapshots (it requires the
  // digest) and folds instead.
  std::vector<ProjectionSummary> projections;
  uint64_t bytes = 0;                 // the snapshot's files
  double seconds_to_take = 0;         // checkpoint and publication
  int64_t published_unix_micros = 0;  // by the clock of the machine that took it
};

struct Checkpointed;  // below

class SnapshotStore {
 public:
  // Opens (creating) `dir` and removes what a crash left unfinished (tmp-*, scratch-*).
  static Result<std::unique_ptr<SnapshotStore>> Open(const std::string& dir);
  // Opens `dir` without changing it (the replay tools beside a running master).
  static std::unique_ptr<SnapshotStore> OpenExisting(const std::string& dir);

  const std::string& dir() const { return dir_; }

  // The published snapshots whose metadata reads back and whose view format is this build's,
  // oldest first. Others are skipped with a log line.
  std::vector<SnapshotInfo> List() const;

  // A fresh directory for a checkpoint in the making (tmp-...).
  Result<std::string> NewTemporaryDir(uint64_t next_offset) const;

  // Finishes a checkpoint (CheckpointInto): writes and syncs SNAPSHOT with the positions the
  // engine had when it took it (every one must be at its offset), and publishes it by renaming.
  // Then deletes the oldest snapshots beyond `keep`. The checkpoint is not opened here: a
  // restore checks what it holds (CheckRestored, projections.cpp).
  Result<SnapshotInfo> Publish(const Checkpointed& checkpoint, size_t keep, double seconds_so_far);

  // Copies `snapshot` into `target` (absent or empty) so that it can be opened and written:
  // table files are hard-linked (they never change), the rest copied.
  Status CopyTo(const SnapshotInfo& snapshot, const std::string& target) const;

  // A scratch directory for a time-travel copy (scratch-...), removed by the caller.
  Result<std::string> NewScratchDir() const;

 private:
  explicit SnapshotStore(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

struct Checkpointed {
  std::string dir;  // a temporary directory of the store, for Publish
  uint64_t next_offset = 0;
  int64_t max_event_time_unix_micros = 0;
  std::vector<ProjectionSummary> projections;  // each one's position, no digest
};

// Takes a checkpoint of `engine`'s DB at its applied offset into a new temporary directory of
// `store`. Not while the engine's thread runs (that thread calls this itself, in take_snapshot).
Result<Checkpointed> CheckpointInto(ProjectionEngine& engine, const SnapshotStore& store);

// The projections as of a past moment: the newest snapshot at or before it (by offset, and by
// time when `until_time` is given) copied to a scratch directory, plus the log's events from the
// snapshot up to and including `last_offset` and, with `until_time`, up to the first event after
// it. Without a usable snapshot (or a store: nullptr) it folds from offset 0. Read through
// Queries; the scratch copy is removed on destruction. `projectors` (empty = all): only these
// fold the tail, so a reader that needs a few pays for those; reading another is an error.
class PastProjections : public Queries {
 public:
  static Result<std::unique_ptr<PastProjections>> Open(
      const SnapshotStore* store, EventLog* log, uint64_t last_offset,
      std::optional<int64_t> until_time, const std::vector<std::string>& projectors = {});
  ~PastProjections() override;

  uint64_t next_offset() const;  // every event below it is applied
  // The snapshot it started from; nullopt = offset 0.
  const std::optional<SnapshotInfo>& base() const { return base_; }
  Result<std::string> Digest(const std::string& projection);

 protected:
  Status ReadViews(const std::string& projector,
                   const std::function<Status(ViewReader&)>& read) override;

 private:
  PastProjections() = default;
  std::string scratch_dir_;
  std::optional<SnapshotInfo> base_;
  std::unique_ptr<ProjectionEngine> engine_;
};

}  // namespace cairn::projections
