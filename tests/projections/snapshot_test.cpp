// Snapshots of the projections (projections/snapshots.h): taken while the projections follow
// the log, each holding exactly a fold to its offset; time travel from them equals a fold from
// offset 0; a lost or corrupt projection DB starts from the newest snapshot that checks out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/thread_priority.h"
#include "events/memory_log.h"
#include "projections/projection_engine.h"
#include "projections/projections.h"
#include "projections/snapshots.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using projections::ProjectorNames;
using projections::SnapshotInfo;
using testing::History;
using testing::TempDir;

constexpr uint64_t kEvery = 400;

using testing::DigestsOf;
using testing::FoldDigests;

// A snapshot's digests, computed from its files (its metadata records positions, not digests).
std::map<std::string, std::string> DigestsOf(const SnapshotInfo& snapshot) {
  std::map<std::string, std::string> digests;
  auto summaries = projections::SummarizeProjectionDir(snapshot.path, {});
  EXPECT_TRUE(summaries.ok()) << summaries.status().ToString();
  if (!summaries.ok()) return digests;
  for (const auto& summary : *summaries) digests[summary.name] = summary.digest;
  return digests;
}

// Flips a byte in the middle of the snapshot's copy of the write-ahead log (a live snapshot holds
// one: ALiveSnapshotCarriesTheLogSinceItsFlushAheadAndOpensToTheFold), through a copy renamed
// over it. False when it holds none.
bool CorruptTheLogOf(const SnapshotInfo& snapshot) {
  for (const auto& entry : std::filesystem::directory_iterator(snapshot.path)) {
    if (entry.path().extension() != ".log") continue;
    auto bytes = ReadWholeFile(entry.path().string());
    if (!bytes.ok() || bytes->size() < 64) continue;
    (*bytes)[bytes->size() / 2] ^= 0x5a;
    const std::string copy = entry.path().string() + ".corrupt";
    if (!WriteFileAtomically(copy, *bytes).ok()) return false;
    std::filesystem::rename(copy, entry.path());
    return true;
  }
  return false;
}

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    history_.AddWorkload(4, 300);
    ASSERT_TRUE(history_.AppendTo(log_).ok());
    ASSERT_GT(history_.events().size(), 4 * kEvery)
        << "the workload should cross several snapshots";
  }

  // Live projections with snapshots every kEvery events, in small batches so that a snapshot is
  // taken close to each multiple.
  std::unique_ptr<Projections> OpenLive(size_t keep = 3) {
    projections::EngineOptions options;
    options.max_batch_events = 50;
    auto opened =
        Projections::Open(dir_.Sub("live"), &log_, dir_.Sub("snapshots"), {kEvery, keep}, options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  // Follows the whole log and waits for the snapshot past the last multiple of kEvery.
  std::unique_ptr<Projections> FollowToTheEnd(size_t keep = 3) {
    auto live = OpenLive(keep);
    if (!live) return nullptr;
    EXPECT_TRUE(live->WaitForOffset(history_.last_offset(), testing::kProjectionWait).ok());
    const uint64_t last_multiple = history_.events().size() / kEvery * kEvery;
    Status waited = live->WaitForSnapshot(last_multiple, testing::kProjectionWait);
    EXPECT_TRUE(waited.ok()) << waited.ToString();
    return live;
  }

  std::vector<SnapshotInfo> Snapshots() {
    return projections::SnapshotStore::OpenExisting(dir_.Sub("snapshots"))->List();
  }

  TempDir dir_;
  MemoryEventLog log_;
  History history_;
};

TEST_F(SnapshotTest, EachSnapshotHoldsExactlyAFoldToItsOffsetAndOnlyTheNewestAreKept) {
  auto live = FollowToTheEnd(/*keep=*/3);
  ASSERT_NE(live, nullptr);
  std::vector<SnapshotInfo> snapshots = Snapshots();
  ASSERT_EQ(snapshots.size(), 3u);
  uint64_t previous = 0;
  for (const auto& snapshot : snapshots) {
    EXPECT_GT(snapshot.next_offset, previous);
    previous = snapshot.next_offset;
    // Taken at the first batch boundary past a multiple.
    EXPECT_LT(snapshot.next_offset % kEvery, 50u) << snapshot.path;
    EXPECT_EQ(DigestsOf(snapshot), FoldDigests(history_, snapshot.next_offset - 1))
        << snapshot.path;
    // Its metadata records where each projection is, and no digest: publishing one costs a scan
    // of every view, and a restore checks the table files' checksums instead.
    EXPECT_FALSE(snapshot.projections.empty());
    for (const auto& projection : snapshot.projections) {
      EXPECT_EQ(projection.next_offset, snapshot.next_offset) << projection.name;
      EXPECT_TRUE(projection.digest.empty()) << projection.name;
    }
    EXPECT_EQ(snapshot.max_event_time_unix_micros,
              history_.events()[snapshot.next_offset - 1].time_unix_micros());
    EXPECT_GT(snapshot.bytes, 0u);
  }
  EXPECT_EQ(live->LatestSnapshot()->next_offset, snapshots.back().next_offset);
}

// A live snapshot's checkpoint copies the write-ahead log written since the flush ahead of it,
// rather than flush every memtable while the projections wait; opened, it replays that log to
// exactly the fold.
TEST_F(SnapshotTest, ALiveSnapshotCarriesTheLogSinceItsFlushAheadAndOpensToTheFold) {
  auto live = FollowToTheEnd();
  ASSERT_NE(live, nullptr);
  const SnapshotInfo newest = Snapshots().back();
  uint64_t log_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(newest.path)) {
    if (entry.path().extension() == ".log") log_bytes += entry.file_size();
  }
  EXPECT_GT(log_bytes, 0u) << newest.path << " holds no write-ahead log";
  EXPECT_EQ(DigestsOf(newest), FoldDigests(history_, newest.next_offset - 1));
}

TEST_F(SnapshotTest, SnapshotsArePublishedOnANamedThreadAtBackgroundPriority) {
  auto live = FollowToTheEnd();
  ASSERT_NE(live, nullptr);
  // Published, so the thread has been running: one thread, niced, whatever it does now.
  EXPECT_EQ(testing::NiceOfThreadsNamed(kSnapshotThreadName), std::vector<int>{kBackgroundNice});
  // And the projections follow the log on their own named thread, at the requests' priority.
  EXPECT_EQ(testing::NiceOfThreadsNamed(kProjectorThreadName), std::vector<int>{0});
}

TEST_F(SnapshotTest, TimeTravelFromTheNearestSnapshotEqualsAFoldFromTheStart) {
  auto live = FollowToTheEnd(/*keep=*/16);
  ASSERT_NE(live, nullptr);
  std::vector<SnapshotInfo> snapshots = Snapshots();
  ASSERT_GE(snapshots.size(), 3u);
  auto store = projections::SnapshotStore::OpenExisting(dir_.Sub("snapshots"));
  const uint64_t second = snapshots[1].next_offset;
  struct Case {
    uint64_t last_offset;
    std::optional<uint64_t> base;  // the snapshot it should start from
  };
  const std::vector<Case> cases = {
      {5, std::nullopt},                       // before every snapshot: a fold from 0
      {second - 2, snapshots[0].next_offset},  // just before the second snapshot
      {second - 1, second},                    // exactly the second snapshot
      {second + 17, second},                   // a tail after it
      {history_.last_offset(), snapshots.back().next_offset},
  };
  for (const auto& test : cases) {
    auto past = projections::PastProjections::Open(store.get(), &log_, test.last_offset, {});
    ASSERT_TRUE(past.ok()) << past.status().ToString();
    EXPECT_EQ((*past)->next_offset(), test.last_offset + 1);
    EXPECT_EQ((*past)->base() ? std::optional((*past)->base()->next_offset) : std::nullopt,
              test.base)
        << "at offset " << test.last_offset;
    EXPECT_EQ(DigestsOf(**past), FoldDigests(history_, test.last_offset))
        << "at offset " << test.last_offset;
  }
  // By time: the events up to the time of the one at `second + 5` (times rise one second apart).
  const int64_t time = history_.events()[second + 5].time_unix_micros();
  auto past = projections::PastProjections::Open(store.get(), &log_, history_.last_offset(), time);
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  EXPECT_EQ((*past)->next_offset(), second + 6);
  ASSERT_TRUE((*past)->base().has_value());
  EXPECT_EQ((*past)->base()->next_offset, second);
  EXPECT_EQ(DigestsOf(**past), FoldDigests(history_, second + 5));
  // The scratch copies are gone once read.
  past->reset();
  for (const auto& entry : std::filesystem::directory_iterator(dir_.Sub("snapshots"))) {
    EXPECT_EQ(entry.path().filename().string().rfind("snap-", 0), 0u) << entry.path();
  }
}

TEST_F(SnapshotTest, ALostDatabaseStartsFromTheNewestSnapshotAndACorruptOneIsPassedOver) {
  std::vector<SnapshotInfo> snapshots;
  {
    auto live = FollowToTheEnd(/*keep=*/4);
    ASSERT_NE(live, nullptr);
    snapshots = Snapshots();
    ASSERT_GE(snapshots.size(), 3u);
  }
  const auto expected = FoldDigests(history_, history_.last_offset());
  const uint64_t newest_offset = snapshots.back().next_offset;

  // Loses the projection DB and opens it again; returns the offset of the snapshot it started
  // from (0: none), once it has followed the log to its end, equals the fold, and has published
  // the newest snapshot's offset again (so that the next step sees the snapshots this one left).
  auto restore = [&] {
    std::filesystem::remove_all(dir_.Sub("live"));
    auto live = OpenLive(4);
    if (live == nullptr) return uint64_t{0};
    EXPECT_TRUE(live->WaitForOffset(history_.last_offset(), testing::kProjectionWait).ok());
    EXPECT_EQ(DigestsOf(*live), expected);
    const uint64_t started = live->StartedFrom() ? live->StartedFrom()->next_offset : 0;
    if (started < newest_offset) {
      EXPECT_TRUE(live->WaitForSnapshot(newest_offset, testing::kProjectionWait).ok());
    }
    return started;
  };

  // The newest snapshot plus the tail.
  EXPECT_EQ(restore(), newest_offset);

  // The newest snapshot's copy of the write-ahead log has a flipped byte: its replay stops at the
  // damaged record, the projectors are behind the offset it records, and the snapshot before it
  // is used instead. (A flipped byte in a table file fails its block checksum:
  // BulkLoadTest.AFlippedByteInATableFileFailsItsChecksums.)
  ASSERT_TRUE(CorruptTheLogOf(Snapshots().back())) << Snapshots().back().path;
  EXPECT_EQ(restore(), snapshots[snapshots.size() - 2].next_offset);
  // That restore published the newest offset again, whole.
  ASSERT_EQ(Snapshots().back().next_offset, newest_offset);
  EXPECT_GT(Snapshots().back().published_unix_micros, snapshots.back().published_unix_micros);

  // Snapshots published by earlier builds carry each projection's digest, checked too: with the
  // right digests the newest is used, with a wrong one it is passed over.
  auto write_digests = [&](const SnapshotInfo& snapshot, bool right) {
    auto metadata = ReadWholeFile(snapshot.path + "/SNAPSHOT");
    ASSERT_TRUE(metadata.ok());
    nlohmann::json json = nlohmann::json::parse(*metadata);
    const auto digests = DigestsOf(snapshot);
    for (auto& projection : json["projections"]) {
      projection["digest"] = digests.at(projection["name"].get<std::string>());
    }
    if (!right) json["projections"][0]["digest"] = std::string(64, '0');
    ASSERT_TRUE(WriteFileAtomically(snapshot.path + "/SNAPSHOT", json.dump()).ok());
  };
  write_digests(Snapshots().back(), /*right=*/true);
  ASSERT_FALSE(Snapshots().back().projections[0].digest.empty());
  EXPECT_EQ(restore(), newest_offset);
  write_digests(Snapshots().back(), /*right=*/false);
  EXPECT_EQ(restore(), Snapshots()[Snapshots().size() - 2].next_offset);

  // A DB that does not open (its files garbage) is restored the same way.
  for (const auto& entry : std::filesystem::directory_iterator(dir_.Sub("live"))) {
    if (entry.path().filename().string().rfind("MANIFEST", 0) == 0) {
      std::ofstream(entry.path(), std::ios::trunc) << "not a manifest";
    }
  }
  auto live = OpenLive(4);
  ASSERT_NE(live, nullptr);
  EXPECT_TRUE(live->StartedFrom().has_value());
  ASSERT_TRUE(live->WaitForOffset(history_.last_offset(), testing::kProjectionWait).ok());
  EXPECT_EQ(DigestsOf(*live), expected);
}

}  // namespace
}  // namespace cairn
