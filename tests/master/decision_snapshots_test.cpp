// The write side's snapshots on disk (master/decision_snapshots.h): the newest usable one is
// restored, a damaged one or one of another log is passed over, only the newest are kept, and the
// writer's forked child (or a folding thread) takes one at each multiple of its interval, equal
// to the writer's state at the fork (or to a fold of the log).
#include "master/decision_snapshots.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "events/memory_log.h"
#include "ops/bench/history_generator.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<MemoryEventLog> GeneratedLog(uint64_t events, uint64_t seed) {
  auto log = std::make_unique<MemoryEventLog>();
  bench::HistoryOptions options;
  options.events = events;
  options.seed = seed;
  options.users = 20;
  options.workspaces = 2;
  options.agents_per_pool = 2;
  options.experiment_every = 3;
  auto generated = bench::GenerateHistory(*log, options);
  EXPECT_TRUE(generated.ok()) << generated.status().ToString();
  return log;
}

commands::DecisionState FoldTo(EventLog& log, uint64_t offset) {
  commands::DecisionState state;
  auto reader = log.OpenReader(0);
  EXPECT_TRUE(reader.ok());
  while ((*reader)->position() < offset) {
    auto events = (*reader)->Next(std::min<uint64_t>(1000, offset - (*reader)->position()), 0ms);
    EXPECT_TRUE(events.ok() && !events->empty());
    if (!events.ok() || events->empty()) break;
    for (const auto& event : *events) commands::Apply(state, event);
  }
  return state;
}

std::string Encoded(const commands::DecisionState& state) {
  return commands::EncodeDecisionState(state, {});
}

class DecisionSnapshotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = GeneratedLog(3000, 5);
    auto store = DecisionSnapshotStore::Open(dir_.Sub("snapshots"), 2);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  std::string FileOf(uint64_t offset) {
    char name[64];
    std::snprintf(name, sizeof name, "/decision-%020llu.snap",
                  static_cast<unsigned long long>(offset));
    return store_->dir() + name;
  }

  testing::TempDir dir_;
  std::unique_ptr<MemoryEventLog> log_;
  std::unique_ptr<DecisionSnapshotStore> store_;
};

TEST_F(DecisionSnapshotsTest, RestoresTheNewestAndKeepsOnlyTheNewestTwo) {
  for (uint64_t offset : {1000, 2000, 2500}) {
    ASSERT_TRUE(store_->Write(FoldTo(*log_, offset), *log_).ok());
  }
  EXPECT_EQ(store_->Offsets(), (std::vector<uint64_t>{2000, 2500}));
  struct stat info {};
  ASSERT_EQ(stat(FileOf(2500).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u) << "a snapshot holds password hashes";

  auto restored = store_->RestoreNewest(*log_, 3000);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.state->next_offset, 2500u);
  EXPECT_EQ(Encoded(*restored.state), Encoded(FoldTo(*log_, 2500)));
  // Not past the end it is asked for (a log that lost its tail).
  restored = store_->RestoreNewest(*log_, 2400);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.state->next_offset, 2000u);
}

TEST_F(DecisionSnapshotsTest, PassesOverADamagedSnapshotAndOneOfAnotherLog) {
  ASSERT_TRUE(store_->Write(FoldTo(*log_, 1000), *log_).ok());
  ASSERT_TRUE(store_->Write(FoldTo(*log_, 2000), *log_).ok());
  {
    // One byte of the newest one's body changed.
    std::fstream file(FileOf(2000), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-10, std::ios::end);
    file.put('\x7f');
  }
  auto restored = store_->RestoreNewest(*log_, 3000);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.state->next_offset, 1000u);

  // The same data directory pointed at another log (the same events under other ids, as
  // another cluster's log would have): nothing of this one is continued.
  MemoryEventLog other;
  auto reader = log_->OpenReader(0);
  ASSERT_TRUE(reader.ok());
  auto events = (*reader)->Next(3000, 0ms);
  ASSERT_TRUE(events.ok());
  for (auto& event : *events) event.set_event_id("other-" + event.event_id());
  ASSERT_TRUE(other.Append(*events).ok());
  EXPECT_EQ(store_->RestoreNewest(other, 3000).state, nullptr);
}

TEST_F(DecisionSnapshotsTest, OpeningRemovesWhatACrashLeftHalfWritten) {
  const std::string leftover = FileOf(1000) + ".tmp";
  std::ofstream(leftover) << "half";
  auto reopened = DecisionSnapshotStore::Open(store_->dir(), 2);
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_TRUE((*reopened)->Offsets().empty());
}

std::string EventIdAt(EventLog& log, uint64_t offset) {
  auto reader = log.OpenReader(offset);
  EXPECT_TRUE(reader.ok());
  auto events = (*reader)->Next(1, 0ms);
  EXPECT_TRUE(events.ok() && events->size() == 1);
  return events.ok() && !events->empty() ? events->front().event_id() : "";
}

// snapshots.write_side_copy: fold. The thread folds a second state to each multiple the log
// passed, from the newest snapshot on.
TEST_F(DecisionSnapshotsTest, TheFoldingThreadTakesOneAtEachMultipleEqualToAFold) {
  DecisionSnapshotter snapshotter(log_.get(), store_.get(), 1000, DecisionSnapshotter::Copy::kFold);
  snapshotter.Start();
  snapshotter.StateAdvanced(FoldTo(*log_, 1500), "");
  ASSERT_TRUE(snapshotter.WaitForSnapshot(1000, 60s));
  auto end = log_->EndOffset();
  ASSERT_TRUE(end.ok());
  snapshotter.StateAdvanced(FoldTo(*log_, *end), "");  // from 1000 on, to the last multiple
  const uint64_t last = *end / 1000 * 1000;
  ASSERT_TRUE(snapshotter.WaitForSnapshot(last, 60s));
  snapshotter.Stop();
  EXPECT_EQ(store_->Offsets().back(), last);
  auto restored = store_->RestoreNewest(*log_, *end);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(FoldTo(*log_, last)));
}

// The writer forks at each multiple; the child writes the state as it was at the fork, whatever
// the writer does to its own copy meanwhile.
TEST_F(DecisionSnapshotsTest, AForkedChildWritesTheWritersStateAtEachMultiple) {
  DecisionSnapshotter snapshotter(log_.get(), store_.get(), 1000);
  // Before Start nothing is taken, multiple or not: the starting master writes its own.
  snapshotter.StateAdvanced(FoldTo(*log_, 1500), EventIdAt(*log_, 1499));
  EXPECT_TRUE(std::filesystem::is_empty(store_->dir()));  // not even a temporary: no child
  snapshotter.Start();
  commands::DecisionState state = FoldTo(*log_, 999);
  snapshotter.StateAdvanced(state, EventIdAt(*log_, 998));  // no multiple passed: nothing
  EXPECT_TRUE(store_->Offsets().empty());
  EXPECT_TRUE(std::filesystem::is_empty(store_->dir()));  // no temporary either: no child

  auto end = log_->EndOffset();
  ASSERT_TRUE(end.ok());
  ASSERT_GE(*end, 3000u);
  auto reader = log_->OpenReader(999);
  ASSERT_TRUE(reader.ok());
  auto fold_to = [&](uint64_t offset) {
    auto events = (*reader)->Next(offset - state.next_offset, 0ms);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), offset - state.next_offset);
    for (const auto& event : *events) commands::Apply(state, event);
  };
  fold_to(1500);
  snapshotter.StateAdvanced(state, EventIdAt(*log_, 1499));
  fold_to(*end);  // at once, while the child may still be encoding the state at 1500
  ASSERT_TRUE(snapshotter.WaitForSnapshot(1500, 60s));
  EXPECT_EQ(store_->Offsets(), std::vector<uint64_t>{1500});
  auto restored = store_->RestoreNewest(*log_, 1500);  // checks the anchor's event ids too
  ASSERT_NE(restored.state, nullptr);
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(FoldTo(*log_, 1500)));

  snapshotter.StateAdvanced(state, EventIdAt(*log_, *end - 1));
  ASSERT_TRUE(snapshotter.WaitForSnapshot(*end, 60s));
  snapshotter.Stop();
  EXPECT_EQ(store_->Offsets(), (std::vector<uint64_t>{1500, *end}));
  restored = store_->RestoreNewest(*log_, *end);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(state));
  for (const auto& entry : std::filesystem::directory_iterator(store_->dir())) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

}  // namespace
}  // namespace cairn
