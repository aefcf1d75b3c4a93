// The live projections over RocksDB: tailing, reads of one's own writes, restarts, rebuilds,
// the log identity check and digests that prove live == rebuilt == in-memory.
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "base/files.h"
#include "events/memory_log.h"
#include "projections/job_queue_projector.h"
#include "projections/projection_engine.h"
#include "projections/projections.h"
#include "projections/rocks_views.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;
using projections::ProjectorNames;
using testing::History;
using testing::TempDir;

using testing::FoldDigests;

std::map<std::string, std::string> LiveDigests(Projections& projections) {
  return testing::DigestsOf(projections);
}

std::map<std::string, std::string> RebuildDigests(const std::string& dir, EventLog& log,
                                                  std::optional<uint64_t> last_offset) {
  auto summaries = RebuildProjections(dir, &log, {}, last_offset, 64);
  EXPECT_TRUE(summaries.ok()) << summaries.status().ToString();
  std::map<std::string, std::string> digests;
  if (summaries.ok()) {
    for (const auto& summary : *summaries) digests[summary.name] = summary.digest;
  }
  return digests;
}

std::unique_ptr<Projections> MustOpen(const std::string& dir, EventLog& log, size_t batch = 1000) {
  projections::EngineOptions options;
  options.max_batch_events = batch;
  auto opened = Projections::Open(dir, &log, options);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(opened).value() : nullptr;
}

// `history` appended to `log`, and projections in `dir` that applied all of it (nullptr, with a
// failure recorded, when they did not).
std::unique_ptr<Projections> LiveOver(const std::string& dir, MemoryEventLog& log,
                                      const History& history) {
  EXPECT_TRUE(history.AppendTo(log).ok());
  auto live = MustOpen(dir, log);
  if (live == nullptr) return nullptr;
  Status applied = live->WaitForOffset(history.last_offset(), testing::kProjectionWait);
  EXPECT_TRUE(applied.ok()) << applied.ToString();
  return applied.ok() ? std::move(live) : nullptr;
}

// A RocksDB database with default options, nullptr when it does not open.
std::unique_ptr<rocksdb::DB> OpenPlainDb(const std::string& path) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status opened = rocksdb::DB::Open(options, path, &raw);
  EXPECT_TRUE(opened.ok()) << opened.ToString();
  return std::unique_ptr<rocksdb::DB>(opened.ok() ? raw : nullptr);
}

// Writes the store's changes as the table file `path` and ingests it into `db`: how many keys
// the file holds, or the first step that failed.
Result<size_t> IngestStore(projections::RocksBatchStore& store, rocksdb::DB& db,
                           const std::string& path) {
  rocksdb::SstFileWriter table(rocksdb::EnvOptions(), db.GetOptions());
  CAIRN_RETURN_IF_ERROR(projections::FromRocks(table.Open(path), "open " + path));
  CAIRN_ASSIGN_OR_RETURN(size_t written, store.WriteTo(table));
  if (written == 0) return written;  // a file with no keys cannot be finished
  CAIRN_RETURN_IF_ERROR(projections::FromRocks(table.Finish(), "finish " + path));
  CAIRN_RETURN_IF_ERROR(projections::FromRocks(
      db.IngestExternalFile({path}, rocksdb::IngestExternalFileOptions()), "ingest " + path));
  return written;
}

// The master's compactions yield to requests (LowerCompactionPriority): a compaction run after
// the call runs at nice 19. Process-wide, as in the master; ctest runs each test in a process of
// its own.
TEST(ProjectionsTest, CompactionsRunAtNice19OnceLowered) {
  projections::LowerCompactionPriority();
  TempDir dir;
  std::unique_ptr<rocksdb::DB> db = OpenPlainDb(dir.Sub("db"));
  ASSERT_NE(db, nullptr);
  for (int table = 0; table < 2; ++table) {  // two level-0 tables to compact
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "key", std::to_string(table)).ok());
    ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  }
  // A manual compaction runs on the low-priority pool, and returns once done.
  ASSERT_TRUE(db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  const std::vector<int> nices = testing::NiceOfThreadsNamed("rocksdb:low");
  EXPECT_GE(std::count(nices.begin(), nices.end(), 19), 1)
      << "no compaction thread at nice 19 among " << nices.size();
  ASSERT_TRUE(db->Close().ok());
}

// A master upgraded to a build with more projections keeps its projection directory: the new
// projections start from offset 0 and catch up while the old ones continue where they were.
TEST(ProjectionsTest, AProjectionAddedLaterCatchesUpFromTheStart) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(4, 120);
  ASSERT_TRUE(history.AppendTo(log).ok());
  {
    projections::EngineOptions older;
    older.projectors = {"tasks", "agents", "job_queue", "experiments"};
    auto opened = Projections::Open(dir.Sub("live"), &log, older);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    ASSERT_TRUE((*opened)->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());
  }
  auto live = MustOpen(dir.Sub("live"), log);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());
  EXPECT_EQ(LiveDigests(*live), FoldDigests(history, history.last_offset()));
}

TEST(ProjectionsTest, LiveEqualsRebuiltEqualsInMemory) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(4, 300);
  ASSERT_TRUE(history.AppendTo(log).ok());

  auto live = MustOpen(dir.Sub("live"), log, 37);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());
  EXPECT_EQ(live->AppliedOffset(), history.events().size());

  auto live_digests = LiveDigests(*live);
  EXPECT_EQ(live_digests, RebuildDigests(dir.Sub("rebuilt"), log, std::nullopt));
  EXPECT_EQ(live_digests, FoldDigests(history, history.last_offset()));
}

// Reads batched through RocksDB's MultiGet (ViewReader::GetMany) answer what point reads and
// the in-memory fold answer: the same views in the asked order, a missing id skipped, a page of
// the queue the same jobs.
TEST(ProjectionsTest, BatchedReadsEqualPointReadsAndTheFold) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(4, 300);
  auto live = LiveOver(dir.path(), log, history);
  ASSERT_NE(live, nullptr);
  ProjectionState folded = Fold(history);

  auto all = folded.ListTasks();
  ASSERT_TRUE(all.ok());
  ASSERT_GT(all->size(), 100u);
  std::vector<std::string> ids;
  for (auto task = all->rbegin(); task != all->rend(); ++task) ids.push_back(task->task_id());
  ids.insert(ids.begin() + 7, "no-such-task");
  auto batched = live->GetTasks(ids);
  ASSERT_TRUE(batched.ok()) << batched.status().ToString();
  ASSERT_EQ(batched->size(), all->size());
  for (size_t i = 0; i < batched->size(); ++i) {
    const std::string& id = (*batched)[i].task_id();
    EXPECT_EQ(id, (*all)[all->size() - 1 - i].task_id()) << "in the asked order";
    auto one = live->GetTask(id);
    ASSERT_TRUE(one.ok() && one->has_value());
    EXPECT_EQ((*batched)[i].SerializeAsString(), (*one)->SerializeAsString());
  }

  auto page = live->JobQueuePage("", 5, 20, false);
  auto folded_page = folded.JobQueuePage("", 5, 20, false);
  ASSERT_TRUE(page.ok() && folded_page.ok());
  ASSERT_EQ(page->jobs.size(), folded_page->jobs.size());
  ASSERT_FALSE(page->jobs.empty());
  EXPECT_EQ(page->total, folded_page->total);
  for (size_t i = 0; i < page->jobs.size(); ++i) {
    EXPECT_EQ(page->jobs[i].SerializeAsString(), folded_page->jobs[i].SerializeAsString());
  }
}

TEST(ProjectionsTest, FollowsAppendsAndAnswersQueries) {
  TempDir dir;
  MemoryEventLog log;
  auto live = MustOpen(dir.path(), log);
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(live->AppliedOffset(), 0u);

  History history;
  history.ConfigurePools(History::Pools({{"default", events::SCHEDULER_TYPE_PRIORITY}}));
  history.Register("a1", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 2);
  history.Submit("t2", "j2", "default", 1, 1);
  ASSERT_TRUE(history.AppendTo(log).ok());
  ASSERT_TRUE(live->WaitForOffset(3, testing::kProjectionWait).ok());

  auto task = live->GetTask("t1");
  ASSERT_TRUE(task.ok());
  ASSERT_TRUE(task->has_value());
  EXPECT_EQ((*task)->state(), views::TASK_STATE_QUEUED);
  auto missing = live->GetTask("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  auto queue = live->JobQueue("default");
  ASSERT_TRUE(queue.ok());
  ASSERT_EQ(queue->size(), 2u);
  EXPECT_EQ((*queue)[0].job_id(), "j2");
  EXPECT_EQ((*queue)[1].jobs_ahead(), 1);

  // A write, then a read that waits for it: the reader sees its own write.
  std::vector<events::Envelope> more = {
      History().Assign("t1", "al1", "a1", "i1", {0, 1}),
  };
  auto range = log.Append(more);
  ASSERT_TRUE(range.ok());
  ASSERT_TRUE(live->WaitForOffset(range->last, testing::kProjectionWait).ok());
  auto agents = live->ListAgents();
  ASSERT_TRUE(agents.ok());
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].allocations_size(), 1);
  auto tasks = live->ListTasks();
  ASSERT_TRUE(tasks.ok());
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].state(), views::TASK_STATE_ASSIGNED);
}

TEST(ProjectionsTest, WaitForOffsetTimesOutAndStopWakesWaiters) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.Submit("t1", "j1", "default", 42, 1);
  ASSERT_TRUE(history.AppendTo(log).ok());
  auto live = MustOpen(dir.path(), log);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(0, testing::kProjectionWait).ok());
  Status status = live->WaitForOffset(1, 30ms);
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();

  std::thread stopper([&] { live->Stop(); });
  status = live->WaitForOffset(5, testing::kProjectionWait);
  stopper.join();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  // Queries still answer after Stop.
  auto tasks = live->ListTasks();
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(tasks->size(), 1u);
}

// Callers waiting for different offsets (request threads after their writes) each return once
// their own offset is applied, and not before, as the events land one at a time.
TEST(ProjectionsTest, EachWaiterReturnsOnceItsOwnOffsetIsApplied) {
  TempDir dir;
  MemoryEventLog log;
  auto live = MustOpen(dir.path(), log);
  ASSERT_NE(live, nullptr);
  constexpr uint64_t kWaiters = 6;
  std::vector<Status> statuses(kWaiters);
  std::vector<uint64_t> applied_on_return(kWaiters);
  std::vector<std::thread> waiters;
  for (uint64_t offset = 0; offset < kWaiters; ++offset) {
    waiters.emplace_back([&, offset] {
      statuses[offset] = live->WaitForOffset(offset, testing::kProjectionWait);
      applied_on_return[offset] = live->AppliedOffset();
    });
  }
  History history;
  for (uint64_t offset = 0; offset < kWaiters; ++offset) {
    history.Submit("t" + std::to_string(offset), "j" + std::to_string(offset), "default", 1, 1);
  }
  ASSERT_EQ(history.events().size(), kWaiters);
  for (const auto& event : history.events()) ASSERT_TRUE(log.Append({event}).ok());
  for (auto& waiter : waiters) waiter.join();
  for (uint64_t offset = 0; offset < kWaiters; ++offset) {
    EXPECT_TRUE(statuses[offset].ok()) << offset << ": " << statuses[offset].ToString();
    EXPECT_GT(applied_on_return[offset], offset);
  }
}

TEST(ProjectionsTest, ReopenResumesFromTheCheckpoint) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(3, 60);
  const size_t first_part = history.events().size();
  history.AddWorkload(3, 30);
  std::vector<events::Envelope> head(history.events().begin(),
                                     history.events().begin() + first_part);
  ASSERT_TRUE(log.Append(head).ok());
  {
    auto live = MustOpen(dir.path(), log, 10);
    ASSERT_NE(live, nullptr);
    ASSERT_TRUE(live->WaitForOffset(first_part - 1, testing::kProjectionWait).ok());
  }
  std::vector<events::Envelope> tail(history.events().begin() + first_part, history.events().end());
  ASSERT_TRUE(log.Append(tail).ok());
  auto live = MustOpen(dir.path(), log, 10);
  ASSERT_NE(live, nullptr);
  EXPECT_GE(live->AppliedOffset(), first_part);
  ASSERT_TRUE(live->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());
  EXPECT_EQ(LiveDigests(*live), FoldDigests(history, history.last_offset()));
}

TEST(ProjectionsTest, FencingEpochSurvivesARestart) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.Claim(5);
  history.Submit("t1", "j1", "default", 42, 1);
  ASSERT_TRUE(history.AppendTo(log).ok());
  {
    auto live = MustOpen(dir.path(), log);
    ASSERT_NE(live, nullptr);
    ASSERT_TRUE(live->WaitForOffset(1, testing::kProjectionWait).ok());
    auto summary = live->Summary("tasks");
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(summary->newest_epoch, 5u);
  }
  History stale;
  stale.set_epoch(4);
  std::vector<events::Envelope> late = {stale.Submit("t-stale", "j-stale", "default", 42, 1)};
  ASSERT_TRUE(log.Append(late).ok());
  auto live = MustOpen(dir.path(), log);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(2, testing::kProjectionWait).ok());
  auto task = live->GetTask("t-stale");
  ASSERT_TRUE(task.ok());
  EXPECT_FALSE(task->has_value());
}

TEST(ProjectionsTest, AnotherLogWipesAndRebuilds) {
  TempDir dir;
  History first("first");
  first.AddWorkload(2, 20);
  MemoryEventLog first_log;
  ASSERT_TRUE(first.AppendTo(first_log).ok());
  {
    auto live = MustOpen(dir.path(), first_log);
    ASSERT_NE(live, nullptr);
    ASSERT_TRUE(live->WaitForOffset(first.last_offset(), testing::kProjectionWait).ok());
  }
  History second("second");
  second.AddWorkload(2, 25);  // longer, different ids
  MemoryEventLog second_log;
  ASSERT_TRUE(second.AppendTo(second_log).ok());
  auto live = MustOpen(dir.path(), second_log);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(second.last_offset(), testing::kProjectionWait).ok());
  EXPECT_EQ(LiveDigests(*live), FoldDigests(second, second.last_offset()));
}

TEST(ProjectionsTest, AShorterLogWipesAndRebuilds) {
  TempDir dir;
  History long_history("same");
  long_history.AddWorkload(2, 20);
  MemoryEventLog long_log;
  ASSERT_TRUE(long_history.AppendTo(long_log).ok());
  {
    auto live = MustOpen(dir.path(), long_log);
    ASSERT_NE(live, nullptr);
    ASSERT_TRUE(live->WaitForOffset(long_history.last_offset(), testing::kProjectionWait).ok());
  }
  History short_history("same");  // same first event id, fewer events
  short_history.AddWorkload(2, 5);
  MemoryEventLog short_log;
  ASSERT_TRUE(short_history.AppendTo(short_log).ok());
  auto live = MustOpen(dir.path(), short_log);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(short_history.last_offset(), testing::kProjectionWait).ok());
  EXPECT_EQ(live->AppliedOffset(), short_history.events().size());
  EXPECT_EQ(LiveDigests(*live), FoldDigests(short_history, short_history.last_offset()));
}

TEST(ProjectionsTest, AnotherViewLayoutWipesAndRebuilds) {
  TempDir dir;
  History history;
  history.AddWorkload(2, 20);
  MemoryEventLog log;
  ASSERT_TRUE(history.AppendTo(log).ok());
  {
    auto live = MustOpen(dir.path(), log);
    ASSERT_NE(live, nullptr);
    ASSERT_TRUE(live->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());
  }
  {
    // What an older build would have left: its checkpoint layout, and a view this build never
    // writes.
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.path(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(
        rocksdb::DB::Open(rocksdb::DBOptions(), dir.path(), descriptors, &handles, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != projections::kJobQueueProjector) continue;
      std::string bytes;
      ASSERT_TRUE(db->Get({}, handles[i], projections::kCheckpointKey, &bytes).ok());
      views::ProjectorCheckpoint checkpoint;
      ASSERT_TRUE(checkpoint.ParseFromString(bytes));
      EXPECT_EQ(checkpoint.view_format(), projections::kViewFormat);
      checkpoint.set_view_format(projections::kViewFormat - 1);
      ASSERT_TRUE(
          db->Put({}, handles[i], projections::kCheckpointKey, checkpoint.SerializeAsString())
              .ok());
      ASSERT_TRUE(db->Put({}, handles[i], "job/left-by-an-older-build", "?").ok());
    }
    for (auto* handle : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto live = MustOpen(dir.path(), log);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());
  EXPECT_EQ(LiveDigests(*live), FoldDigests(history, history.last_offset()))
      << "the older layout's views must be gone";
}

TEST(RebuildTest, UpToAnOffsetEqualsTheStateThen) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(3, 80);
  ASSERT_TRUE(history.AppendTo(log).ok());
  const uint64_t middle = history.last_offset() / 2;
  auto summaries = RebuildProjections(dir.Sub("mid"), &log, {"agents"}, middle);
  ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
  ASSERT_EQ(summaries->size(), 1u);
  EXPECT_EQ((*summaries)[0].name, "agents");
  EXPECT_EQ((*summaries)[0].next_offset, middle + 1);
  EXPECT_EQ((*summaries)[0].digest, FoldDigests(history, middle)["agents"]);
  EXPECT_NE((*summaries)[0].digest, FoldDigests(history, history.last_offset())["agents"]);
}

TEST(RebuildTest, RefusesADirectoryInUseAndUnknownProjections) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.Submit("t1", "j1", "default", 42, 1);
  ASSERT_TRUE(history.AppendTo(log).ok());
  ASSERT_TRUE(RebuildProjections(dir.Sub("out"), &log, {}, std::nullopt).ok());
  auto again = RebuildProjections(dir.Sub("out"), &log, {}, std::nullopt);
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  auto unknown = RebuildProjections(dir.Sub("other"), &log, {"nope"}, std::nullopt);
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
}

std::unique_ptr<projections::ProjectionEngine> MustOpenBulk(const std::string& dir, EventLog& log,
                                                            size_t bulk_load_bytes, size_t batch) {
  projections::EngineOptions options;
  options.max_batch_events = batch;
  options.write_ahead_log = false;
  options.bulk_load_bytes = bulk_load_bytes;
  options.bulk_load_min_events = 0;
  options.bulk_batch_events = batch;
  auto opened = projections::ProjectionEngine::Open(dir, &log, options);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(opened).value() : nullptr;
}

std::map<std::string, std::string> EngineDigests(projections::ProjectionEngine& engine) {
  std::map<std::string, std::string> digests;
  for (const auto& name : ProjectorNames()) {
    auto summary = engine.Summarize(name);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    if (summary.ok()) digests[name] = summary->digest;
  }
  return digests;
}

// A budget this small ingests a file after almost every batch: later batches read views back
// from the DB, and delete views earlier files hold (tombstones in a table file).
TEST(BulkLoadTest, ManySmallFilesEqualTheFold) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(4, 300);
  ASSERT_TRUE(history.AppendTo(log).ok());
  auto engine = MustOpenBulk(dir.Sub("bulk"), log, /*bulk_load_bytes=*/2048, /*batch=*/300);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->CatchUp(std::nullopt).ok());
  EXPECT_EQ(engine->AppliedOffset(), history.events().size());
  EXPECT_GT(engine->BulkFilesIngested(), 2 * ProjectorNames().size());
  EXPECT_EQ(EngineDigests(*engine), FoldDigests(history, history.last_offset()));
  for (const auto& entry : std::filesystem::directory_iterator(dir.Sub("bulk"))) {
    EXPECT_EQ(entry.path().filename().string().rfind("bulk-", 0), std::string::npos)
        << "a table file was left beside the DB: " << entry.path();
  }
}

// A restored snapshot is checked by its table files' block checksums (projections.cpp,
// CheckRestored): a flipped byte in a table file is Corruption, not a silently wrong view.
TEST(BulkLoadTest, AFlippedByteInATableFileFailsItsChecksums) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(4, 300);
  ASSERT_TRUE(history.AppendTo(log).ok());
  {
    auto engine = MustOpenBulk(dir.Sub("bulk"), log, /*bulk_load_bytes=*/1 << 20, /*batch=*/300);
    ASSERT_NE(engine, nullptr);
    ASSERT_TRUE(engine->CatchUp(std::nullopt).ok());
    ASSERT_GT(engine->BulkFilesIngested(), 0u);
    EXPECT_TRUE(engine->VerifyChecksums().ok());
  }
  std::string largest;
  uintmax_t largest_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.Sub("bulk"))) {
    if (entry.path().extension() == ".sst" && entry.file_size() > largest_bytes) {
      largest = entry.path().string();
      largest_bytes = entry.file_size();
    }
  }
  ASSERT_FALSE(largest.empty()) << "the bulk load left no table file";
  auto bytes = ReadWholeFile(largest);
  ASSERT_TRUE(bytes.ok());
  (*bytes)[bytes->size() / 3] ^= 0x5a;  // inside a data block: the footer and index are at the end
  ASSERT_TRUE(WriteFileAtomically(largest, *bytes).ok());
  auto engine = MustOpenBulk(dir.Sub("bulk"), log, /*bulk_load_bytes=*/1 << 20, /*batch=*/300);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->VerifyChecksums().code(), StatusCode::kCorruption);
}

// With a budget never reached, nothing is in the DB until CatchUp returns; a second CatchUp
// continues from the first one's files.
TEST(BulkLoadTest, EachCatchUpIngestsWhatItApplied) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(3, 200);
  ASSERT_TRUE(history.AppendTo(log).ok());
  const uint64_t middle = history.last_offset() / 2;
  auto engine = MustOpenBulk(dir.Sub("bulk"), log, size_t{1} << 30, /*batch=*/1000);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->CatchUp(middle).ok());
  EXPECT_EQ(engine->AppliedOffset(), middle + 1);
  EXPECT_EQ(engine->BulkFilesIngested(), ProjectorNames().size());
  EXPECT_EQ(EngineDigests(*engine), FoldDigests(history, middle));
  ASSERT_TRUE(engine->CatchUp(std::nullopt).ok());
  EXPECT_EQ(engine->AppliedOffset(), history.events().size());
  EXPECT_EQ(EngineDigests(*engine), FoldDigests(history, history.last_offset()));
}

// A rebuild's summaries are taken as each projection's last file is ingested; with bulk loading
// off (no files) they are taken after the catch-up. Either way: every projector, in order, at
// the log's end, with the fold's digests.
TEST(BulkLoadTest, CatchUpAndSummarizeEqualsTheFoldWithAndWithoutFiles) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(3, 200);
  ASSERT_TRUE(history.AppendTo(log).ok());
  const auto fold = FoldDigests(history, history.last_offset());
  for (size_t bulk_load_bytes : {size_t{1} << 30, size_t{0}}) {
    SCOPED_TRACE("bulk_load_bytes " + std::to_string(bulk_load_bytes));
    auto engine = MustOpenBulk(dir.Sub("engine-" + std::to_string(bulk_load_bytes)), log,
                               bulk_load_bytes, 500);
    ASSERT_NE(engine, nullptr);
    auto summaries = engine->CatchUpAndSummarize(std::nullopt);
    ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
    EXPECT_EQ(engine->BulkFilesIngested() > 0, bulk_load_bytes > 0);
    std::vector<std::string> names;
    std::map<std::string, std::string> digests;
    for (const auto& summary : *summaries) {
      names.push_back(summary.name);
      digests[summary.name] = summary.digest;
      EXPECT_EQ(summary.next_offset, history.events().size()) << summary.name;
    }
    EXPECT_EQ(names, ProjectorNames());
    EXPECT_EQ(digests, fold);
  }
}

// Each projector applies a bulk load's batches in a lane of its own: one that fails (here on a
// view it cannot parse) stops the reader and every other lane, and the catch-up returns its
// error instead of waiting for it; the failed projector stays where it was.
TEST(BulkLoadTest, ALaneThatFailsEndsTheCatchUpWithItsError) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.Submit("early", "early", "default", 0, 1);
  history.AddWorkload(3, 200);
  const uint64_t middle = history.last_offset() / 2;
  history.Kill("early", "", "");  // read back from the DB past the middle
  ASSERT_TRUE(history.AppendTo(log).ok());
  {
    auto engine = MustOpenBulk(dir.Sub("bulk"), log, size_t{1} << 30, /*batch=*/100);
    ASSERT_NE(engine, nullptr);
    ASSERT_TRUE(engine->CatchUp(middle).ok());
  }
  {
    // Every task view unparsable, behind the engine's back.
    std::vector<std::string> families;
    ASSERT_TRUE(
        rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.Sub("bulk"), &families).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& family : families) {
      descriptors.emplace_back(family, rocksdb::ColumnFamilyOptions());
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(
        rocksdb::DB::Open(rocksdb::DBOptions(), dir.Sub("bulk"), descriptors, &handles, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    auto tasks = std::find(families.begin(), families.end(), "tasks");
    ASSERT_NE(tasks, families.end());
    rocksdb::ColumnFamilyHandle* family = handles[tasks - families.begin()];
    std::vector<std::string> keys;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), family));
    for (it->Seek("task/"); it->Valid() && it->key().starts_with("task/"); it->Next()) {
      keys.push_back(it->key().ToString());
    }
    it.reset();
    ASSERT_FALSE(keys.empty());
    for (const auto& key : keys) {
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), family, key, "\xff\xff\xff").ok());
    }
    for (auto* handle : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto engine = MustOpenBulk(dir.Sub("bulk"), log, size_t{1} << 30, /*batch=*/100);
  ASSERT_NE(engine, nullptr);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same again: nothing was left waiting
    Status status = engine->CatchUp(std::nullopt);
    EXPECT_EQ(status.code(), StatusCode::kCorruption) << status.ToString();
    EXPECT_EQ(engine->AppliedOffset(), middle + 1);
  }
  for (const auto& [name, offset] : engine->ProjectorOffsets()) {
    EXPECT_EQ(offset, name == "tasks" ? middle + 1 : history.events().size()) << name;
  }
}

// A table file needs its keys in byte order; the sort compares the first 24 bytes inline, so
// keys equal there, shorter than it, or holding zero bytes must still come out in byte order.
TEST(BulkLoadTest, TableFilesHoldKeysInByteOrder) {
  TempDir dir;
  std::unique_ptr<rocksdb::DB> db = OpenPlainDb(dir.Sub("db"));
  ASSERT_NE(db, nullptr);
  const std::string shared(30, 'k');
  std::vector<std::string> keys = {"b",
                                   "a",
                                   std::string("a\0", 2),
                                   std::string("a\0\0", 3),
                                   std::string(1, '\0') + "checkpoint",
                                   shared + "2",
                                   shared + "10",
                                   shared,
                                   std::string(24, 'z') + "a",
                                   std::string(24, 'z'),
                                   "\xff\xfe"};
  projections::RocksBatchStore store(db.get(), db->DefaultColumnFamily(),
                                     /*family_is_empty=*/true);
  for (const auto& key : keys) ASSERT_TRUE(store.Put(key, "v:" + key).ok());
  ASSERT_TRUE(store.Put("gone", "x").ok());
  ASSERT_TRUE(store.Delete("gone").ok());  // never in the DB: no tombstone

  const std::string path = dir.Sub("keys.sst");
  auto written = IngestStore(store, *db, path);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, keys.size());

  std::sort(keys.begin(), keys.end());
  std::vector<std::string> read;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    read.push_back(it->key().ToString());
    EXPECT_EQ(it->value().ToString(), "v:" + read.back());
  }
  EXPECT_EQ(read, keys);
}

// In a family with no keys yet (a rebuild's bulk load), a key created and deleted again holds no
// entry: the bulk store's memory and its table stay those of the live keys, however many keys
// came and went (a queued job's index keys, a task's index).
TEST(BulkLoadTest, AKeyTheFamilyNeverHadLeavesNoEntryOnceDeleted) {
  TempDir dir;
  std::unique_ptr<rocksdb::DB> db = OpenPlainDb(dir.Sub("db"));
  ASSERT_NE(db, nullptr);
  projections::RocksBatchStore store(db.get(), db->DefaultColumnFamily(),
                                     /*family_is_empty=*/true);
  ASSERT_TRUE(store.Put("kept", "v").ok());
  const size_t live_bytes = store.ApproximateBytes();
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "index/" + std::to_string(i);
    ASSERT_TRUE(store.Put(key, std::string(100, 'x')).ok());
    auto read = store.Get(key);  // the entry read last, then gone
    ASSERT_TRUE(read.ok() && read->has_value());
    ASSERT_TRUE(store.Delete(key).ok());
  }
  EXPECT_EQ(store.ApproximateBytes(), live_bytes);
  // Written again after its delete, a key reads back as written, and a deleted one as absent.
  ASSERT_TRUE(store.Put("index/7", "back").ok());
  EXPECT_EQ(store.Get("index/7").value(), std::optional<std::string>("back"));
  EXPECT_EQ(store.Get("index/8").value(), std::nullopt);

  const std::string path = dir.Sub("live.sst");
  auto written = IngestStore(store, *db, path);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, 2u) << "only kept and index/7";
}

// A bulk load's store keeps the views it is given as messages: OpenView hands out the store's
// own copy to change in place (no parse, no copy), and the bytes written are the serialization
// of the view as last put, the same as a store that serializes at every put.
TEST(BulkLoadTest, AViewKeptParsedIsChangedInPlaceAndSerializedWhenWritten) {
  TempDir dir;
  std::unique_ptr<rocksdb::DB> db = OpenPlainDb(dir.Sub("db"));
  ASSERT_NE(db, nullptr);
  projections::RocksBatchStore store(db.get(), db->DefaultColumnFamily(),
                                     /*family_is_empty=*/true, /*keep_parsed_views=*/true);
  const size_t empty_bytes = store.ApproximateBytes();
  views::TaskView scratch;
  auto absent = projections::OpenView(store, "task/t1", &scratch);
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(*absent, nullptr);
  scratch.set_task_id("t1");
  ASSERT_TRUE(store.PutMessage("task/t1", scratch).ok());

  auto kept = projections::OpenView(store, "task/t1", &scratch);
  ASSERT_TRUE(kept.ok() && *kept != nullptr);
  views::TaskView* view = *kept;
  EXPECT_NE(view, &scratch) << "the store's own copy, not the scratch message";
  EXPECT_EQ(view->task_id(), "t1");
  view->set_slots(4);
  ASSERT_TRUE(store.PutMessage("task/t1", *view).ok());
  auto again = projections::OpenView(store, "task/t1", &scratch);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, view) << "opened again without a copy";
  EXPECT_EQ(view->slots(), 4);
  // A view that grows in place is charged for it (the budget bounds a bulk load's memory).
  const size_t before_growing = store.ApproximateBytes();
  view->set_description(std::string(1000, 'd'));
  ASSERT_TRUE(store.PutMessage("task/t1", *view).ok());
  EXPECT_GE(store.ApproximateBytes(), before_growing + 1000);
  view->clear_description();
  ASSERT_TRUE(store.PutMessage("task/t1", *view).ok());
  EXPECT_EQ(store.ApproximateBytes(), before_growing);

  views::TaskView expected;
  expected.set_task_id("t1");
  expected.set_slots(4);
  std::string expected_bytes;
  projections::SerializeDeterministic(expected, &expected_bytes);
  EXPECT_EQ(store.Get("task/t1").value(), std::optional<std::string>(expected_bytes));
  views::TaskView copy;
  ASSERT_TRUE(store.GetMessage("task/t1", &copy).value());
  EXPECT_EQ(copy.slots(), 4);

  // A view put and deleted again leaves no cost behind.
  const size_t one_view_bytes = store.ApproximateBytes();
  scratch.set_task_id("t2");
  ASSERT_TRUE(store.PutMessage("task/t2", scratch).ok());
  auto second = projections::OpenView(store, "task/t2", &scratch);
  ASSERT_TRUE(second.ok() && *second != nullptr);
  (*second)->set_slots(2);
  ASSERT_TRUE(store.PutMessage("task/t2", **second).ok());
  ASSERT_TRUE(store.Delete("task/t2").ok());
  EXPECT_EQ(store.ApproximateBytes(), one_view_bytes);
  EXPECT_GT(one_view_bytes, empty_bytes);
  EXPECT_EQ(store.Get("task/t2").value(), std::nullopt);

  const std::string path = dir.Sub("views.sst");
  auto written = IngestStore(store, *db, path);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, 1u);
  std::string stored;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "task/t1", &stored).ok());
  EXPECT_EQ(stored, expected_bytes);

  // A view the DB holds is parsed once, changed in place, and written as changed.
  projections::RocksBatchStore next(db.get(), db->DefaultColumnFamily(),
                                    /*family_is_empty=*/false, /*keep_parsed_views=*/true);
  auto read = projections::OpenView(next, "task/t1", &scratch);
  ASSERT_TRUE(read.ok() && *read != nullptr);
  EXPECT_EQ((*read)->slots(), 4);
  (*read)->set_slots(8);
  ASSERT_TRUE(next.PutMessage("task/t1", **read).ok());
  rocksdb::WriteBatch batch;
  ASSERT_TRUE(next.WriteTo(&batch).ok());
  ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &batch).ok());
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "task/t1", &stored).ok());
  views::TaskView reread;
  ASSERT_TRUE(reread.ParseFromString(stored));
  EXPECT_EQ(reread.slots(), 8);
}

TEST(SummarizeDirTest, ReadsALiveDatabaseAsASecondary) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(3, 50);
  auto live = LiveOver(dir.path(), log, history);
  ASSERT_NE(live, nullptr);

  auto summaries = projections::SummarizeProjectionDir(dir.path(), {});
  ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
  ASSERT_EQ(summaries->size(), ProjectorNames().size());
  auto live_digests = LiveDigests(*live);
  for (const auto& summary : *summaries) {
    EXPECT_EQ(summary.next_offset, history.events().size()) << summary.name;
    EXPECT_EQ(summary.digest, live_digests[summary.name]) << summary.name;
  }
  auto missing = projections::SummarizeProjectionDir(dir.Sub("nothing-here"), {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(SummarizeDirTest, AMissingTmpdirFallsBackInsteadOfThrowing) {
  TempDir dir;
  MemoryEventLog log;
  History history;
  history.AddWorkload(1, 5);
  ASSERT_TRUE(history.AppendTo(log).ok());
  auto live = MustOpen(dir.path(), log);
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->WaitForOffset(history.last_offset(), testing::kProjectionWait).ok());

  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::optional<std::string> saved =
      old_tmpdir ? std::optional<std::string>(old_tmpdir) : std::nullopt;
  ASSERT_EQ(setenv("TMPDIR", dir.Sub("no-such-dir").c_str(), 1), 0);
  Result<std::vector<projections::ProjectionSummary>> summaries = Status::Internal("not run");
  try {
    summaries = projections::SummarizeProjectionDir(dir.path(), {});
  } catch (const std::exception& error) {
    ADD_FAILURE() << "threw: " << error.what();
  }
  if (saved) {
    setenv("TMPDIR", saved->c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  EXPECT_TRUE(summaries.ok()) << summaries.status().ToString();
}

}  // namespace
}  // namespace cairn
