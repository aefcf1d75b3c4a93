#include "projections/snapshots.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/files.h"
#include "base/log.h"

namespace cairn::projections {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMetadataFile = "SNAPSHOT";
constexpr const char* kPublishedPrefix = "snap-";
constexpr const char* kTemporaryPrefix = "tmp-";
constexpr const char* kScratchPrefix = "scratch-";

bool StartsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

std::string PublishedName(uint64_t next_offset) {
  char name[40];
  std::snprintf(name, sizeof name, "%s%020" PRIu64, kPublishedPrefix, next_offset);
  return name;
}

nlohmann::json MetadataJson(const SnapshotInfo& info) {
  nlohmann::json projections = nlohmann::json::array();
  for (const auto& summary : info.projections) {
    nlohmann::json projection = {{"name", summary.name},
                                 {"next_offset", summary.next_offset},
                                 {"newest_epoch", summary.newest_epoch}};
    if (!summary.digest.empty()) projection["digest"] = summary.digest;
    projections.push_back(std::move(projection));
  }
  return {{"next_offset", info.next_offset},
          {"max_event_time_unix_micros", info.max_event_time_unix_micros},
          {"view_format", info.view_format},
          {"bytes", info.bytes},
          {"seconds_to_take", info.seconds_to_take},
          {"published_unix_micros", info.published_unix_micros},
          {"projections", projections}};
}

Result<SnapshotInfo> ReadMetadata(const std::string& path) {
  CAIRN_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path + "/" + kMetadataFile));
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object()) return Status::Corruption(path + "/" + kMetadataFile + " is not JSON");
  SnapshotInfo info;
  info.path = path;
  try {
    info.next_offset = json.at("next_offset").get<uint64_t>();
    info.max_event_time_unix_micros = json.at("max_event_time_unix_micros").get<int64_t>();
    info.view_format = json.at("view_format").get<uint32_t>();
    info.bytes = json.at("bytes").get<uint64_t>();
    info.seconds_to_take = json.value("seconds_to_take", 0.0);
    info.published_unix_micros = json.value("published_unix_micros", int64_t{0});
    for (const auto& projection : json.at("projections")) {
      ProjectionSummary summary;
      summary.name = projection.at("name").get<std::string>();
      summary.next_offset = projection.at("next_offset").get<uint64_t>();
      summary.newest_epoch = projection.at("newest_epoch").get<uint64_t>();
      // Snapshots published by earlier builds carry each projection's digest; later ones do not.
      summary.digest = projection.value("digest", std::string());
      info.projections.push_back(std::move(summary));
    }
  } catch (const nlohmann::json::exception& error) {
    return Status::Corruption(path + "/" + kMetadataFile + ": " + error.what());
  }
  return info;
}

Result<std::string> MakeDirectory(const std::string& parent, const std::string& prefix) {
  std::string pattern = parent + "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::IOError("cannot create a directory in " + parent);
  }
  return pattern;
}

Result<std::string> TemporaryScratchDir() {
  std::error_code error;
  fs::path temp = fs::temp_directory_path(error);
  return MakeDirectory(error ? "/tmp" : temp.string(), "cairn-scratch-");
}

void RemoveQuietly(const std::string& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

}  // namespace

Result<std::unique_ptr<SnapshotStore>> SnapshotStore::Open(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return Status::IOError("cannot create " + dir + ": " + error.message());
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (StartsWith(name, kTemporaryPrefix) || StartsWith(name, kScratchPrefix)) {
      log::Info("snapshots", "removing {}, left unfinished by an earlier process",
                entry.path().string());
      RemoveQuietly(entry.path().string());
    }
  }
  if (error) return Status::IOError("cannot list " + dir + ": " + error.message());
  return std::unique_ptr<SnapshotStore>(new SnapshotStore(dir));
}

std::unique_ptr<SnapshotStore> SnapshotStore::OpenExisting(const std::string& dir) {
  return std::unique_ptr<SnapshotStore>(new SnapshotStore(dir));
}

std::vector<SnapshotInfo> SnapshotStore::List() const {
  std::vector<SnapshotInfo> snapshots;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (!StartsWith(name, kPublishedPrefix)) continue;
    auto info = ReadMetadata(entry.path().string());
    if (!info.ok()) {
      log::Warn("snapshots", "skipping snapshot {}: {}", entry.path().string(), info.status());
      continue;
    }
    if (info->view_format != kViewFormat) {
      log::Info("snapshots", "skipping snapshot {}: view layout {}, this build reads {}",
                entry.path().string(), info->view_format, kViewFormat);
      continue;
    }
    snapshots.push_back(std::move(info).value());
  }
  std::sort(snapshots.begin(), snapshots.end(), [](const SnapshotInfo& a, const SnapshotInfo& b) {
    return a.next_offset < b.next_offset;
  });
  return snapshots;
}

Result<std::string> SnapshotStore::NewTemporaryDir(uint64_t next_offset) const {
  CAIRN_ASSIGN_OR_RETURN(std::string parent,
                         MakeDirectory(dir_, kTemporaryPrefix + std::to_string(next_offset) + "-"));
  // RocksDB creates the checkpoint directory itself.
  return parent + "/db";
}

Result<std::string> SnapshotStore::NewScratchDir() const {
  auto beside = MakeDirectory(dir_, kScratchPrefix);
  if (beside.ok()) return beside;
  // A reader without write access to the master's directory (its table files are then copied).
  return TemporaryScratchDir();
}

Result<SnapshotInfo> SnapshotStore::Publish(const Checkpointed& checkpoint, size_t keep,
                                            double seconds_so_far) {
  const std::string& temporary_dir = checkpoint.dir;
  const uint64_t next_offset = checkpoint.next_offset;
  const auto start = std::chrono::steady_clock::now();
  const std::string holder = fs::path(temporary_dir).parent_path().string();
  SnapshotInfo info;
  info.next_offset = next_offset;
  info.max_event_time_unix_micros = checkpoint.max_event_time_unix_micros;
  info.view_format = kViewFormat;
  // Each projection's position (not its digest: a scan of every view, once per interval, only to
  // be compared at a restore that RocksDB's own block checksums and these offsets serve;
  // docs/benchmarks.md, "Projections: snapshots and compactions").
  info.projections = checkpoint.projections;
  for (const auto& summary : info.projections) {
    if (summary.next_offset != next_offset) {
      return Status::Internal("snapshot at " + std::to_string(next_offset) + ": " + summary.name +
                              " is at " + std::to_string(summary.next_offset));
    }
  }
  // The checkpoint's files move up into the directory that is published.
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(temporary_dir, error)) {
    fs::rename(entry.path(), holder + "/" + entry.path().filename().string(), error);
    if (error)
      return Status::IOError("cannot move " + entry.path().string() + ": " + error.message());
  }
  fs::remove(temporary_dir, error);
  info.bytes = DirectoryBytes(holder);
  info.seconds_to_take =
      seconds_so_far +
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  info.published_unix_micros = NowUnixMicros();
  CAIRN_RETURN_IF_ERROR(
      WriteFileAtomically(holder + "/" + kMetadataFile, MetadataJson(info).dump(2) + "\n"));
  const std::string published = dir_ + "/" + PublishedName(next_offset);
  RemoveQuietly(published);  // the same offset taken again (after a restore): the newer wins
  fs::rename(holder, published, error);
  if (error) return Status::IOError("cannot publish " + published + ": " + error.message());
  CAIRN_RETURN_IF_ERROR(SyncDirectory(dir_));
  info.path = published;

  std::vector<SnapshotInfo> all = List();
  for (size_t i = 0; i + keep < all.size(); ++i) RemoveQuietly(all[i].path);
  return info;
}

Status SnapshotStore::CopyTo(const SnapshotInfo& snapshot, const std::string& target) const {
  std::error_code error;
  fs::create_directories(target, error);
  if (error) return Status::IOError("cannot create " + target + ": " + error.message());
  for (const auto& entry : fs::directory_iterator(snapshot.path, error)) {
    const std::string name = entry.path().filename().string();
    if (name == kMetadataFile) continue;
    const std::string destination = target + "/" + name;
    // Table files are immutable: linked, they cost nothing. RocksDB rewrites the others.
    if (entry.path().extension() == ".sst") {
      fs::create_hard_link(entry.path(), destination, error);
      if (!error) continue;
      error.clear();  // another file system: copy instead
    }
    fs::copy_file(entry.path(), destination, fs::copy_options::overwrite_existing, error);
    if (error)
      return Status::IOError("cannot copy " + entry.path().string() + ": " + error.message());
  }
  if (error) return Status::IOError("cannot read " + snapshot.path + ": " + error.message());
  return Status::Ok();
}

Result<Checkpointed> CheckpointInto(ProjectionEngine& engine, const SnapshotStore& store) {
  Checkpointed made;
  CAIRN_ASSIGN_OR_RETURN(made.dir, store.NewTemporaryDir(engine.AppliedOffset()));
  auto offset = engine.CreateCheckpoint(made.dir);
  if (!offset.ok()) {
    RemoveQuietly(fs::path(made.dir).parent_path().string());
    return offset.status();
  }
  made.next_offset = *offset;
  made.max_event_time_unix_micros = engine.MaxEventTime();
  made.projections = engine.Positions();
  return made;
}

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<PastProjections>> PastProjections::Open(
    const SnapshotStore* store, EventLog* log, uint64_t last_offset,
    std::optional<int64_t> until_time, const std::vector<std::string>& projectors) {
  std::unique_ptr<PastProjections> past(new PastProjections());
  CAIRN_ASSIGN_OR_RETURN(past->scratch_dir_,
                         store != nullptr ? store->NewScratchDir() : TemporaryScratchDir());
  const std::string db_dir = past->scratch_dir_ + "/db";
  // A scratch DB, folded once and read: large batches (a view changed by many events of the tail
  // is written once), and no write-ahead log.
  EngineOptions options;
  options.max_batch_events = 50'000;
  options.write_ahead_log = false;
  if (!projectors.empty()) options.projectors = projectors;
  std::vector<SnapshotInfo> snapshots =
      store != nullptr ? store->List() : std::vector<SnapshotInfo>{};
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    if (it->next_offset > last_offset + 1) continue;
    if (until_time && it->max_event_time_unix_micros > *until_time) continue;
    Status copied = store->CopyTo(*it, db_dir);
    if (copied.ok()) {
      auto engine = ProjectionEngine::Open(db_dir, log, options);
      if (engine.ok() && (*engine)->AppliedOffset() == it->next_offset) {
        past->engine_ = std::move(engine).value();
        past->base_ = *it;
        break;
      }
      copied = engine.ok() ? Status::Corruption("it opened at another offset") : engine.status();
      past->engine_.reset();
    }
    log::Warn("snapshots", "cannot start from snapshot {} ({}); trying an older one", it->path,
              copied);
    RemoveQuietly(db_dir);
  }
  if (!past->engine_) {
    CAIRN_ASSIGN_OR_RETURN(past->engine_, ProjectionEngine::Open(db_dir, log, options));
  }
  CAIRN_RETURN_IF_ERROR(past->engine_->CatchUp(last_offset, until_time));
  return past;
}

PastProjections::~PastProjections() {
  engine_.reset();
  if (!scratch_dir_.empty()) RemoveQuietly(scratch_dir_);
}

uint64_t PastProjections::next_offset() const { return engine_->AppliedOffset(); }

Result<std::string> PastProjections::Digest(const std::string& projection) {
  CAIRN_ASSIGN_OR_RETURN(auto summary, engine_->Summarize(projection));
  return summary.digest;
}

Status PastProjections::ReadViews(const std::string& projector,
                                  const std::function<Status(ViewReader&)>& read) {
  return engine_->Read(projector, read);
}

}  // namespace cairn::projections
