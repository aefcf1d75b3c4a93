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

std::string EventIdAt(EventLog& log, uint64_t offset) {
  auto reader = log.OpenReader(offset);
  EXPECT_TRUE(reader.ok());
  auto events = (*reader)->Next(1, 0ms);
  EXPECT_TRUE(events.ok() && events->size() == 1);
  return events.ok() && !events->empty() ? events->front().event_id() : "";
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

// Folds `state` on to `offset`, in the log's order.
void FoldOn(EventLog& log, commands::DecisionState& state, uint64_t offset) {
  auto reader = log.OpenReader(state.next_offset);
  ASSERT_TRUE(reader.ok());
  auto events = (*reader)->Next(offset - state.next_offset, 0ms);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), offset - state.next_offset);
  for (const auto& event : *events) commands::Apply(state, event);
}

// Writes `state` as a delta on the chain (base, parent), as a forked child writes one.
void WriteDelta(DecisionSnapshotStore& store, EventLog& log, commands::DecisionState& state,
                uint64_t base, uint64_t parent) {
  Status written = store.WriteDelta(state, log, base, parent);
  ASSERT_TRUE(written.ok()) << written.ToString();
}

// A restore decodes the whole snapshot and every delta after it on the chain; a damaged delta
// ends the chain there (the longest good prefix serves), and a delta whose chain misses a link
// serves nothing.
TEST_F(DecisionSnapshotsTest, RestoresAChainAndFallsBackToItsLongestGoodPrefix) {
  commands::DecisionState state = FoldTo(*log_, 1000);
  ASSERT_TRUE(store_->Write(state, *log_).ok());
  commands::StartCountingChanges(state);  // counting starts with the whole snapshot
  for (uint64_t parent : {1000, 1500, 2000}) {
    FoldOn(*log_, state, parent + 500);
    WriteDelta(*store_, *log_, state, 1000, parent);
  }
  ASSERT_EQ(store_->Offsets(), (std::vector<uint64_t>{1000, 1500, 2000, 2500}));
  auto restored = store_->RestoreNewest(*log_, 3000);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.chain, (std::vector<uint64_t>{1000, 1500, 2000, 2500}));
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(state));
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(FoldTo(*log_, 2500)));
  // Below the newest: the chain to the newest snapshot at or below the end.
  restored = store_->RestoreNewest(*log_, 2200);
  EXPECT_EQ(restored.chain, (std::vector<uint64_t>{1000, 1500, 2000}));

  const std::string delta_2000 = store_->dir() + "/decision-00000000000000002000.delta";
  {
    std::fstream file(delta_2000, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-10, std::ios::end);
    file.put('\x7f');
  }
  restored = store_->RestoreNewest(*log_, 3000);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.chain, (std::vector<uint64_t>{1000, 1500}));
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(FoldTo(*log_, 1500)));

  std::filesystem::remove(store_->dir() + "/decision-00000000000000001500.delta");
  restored = store_->RestoreNewest(*log_, 3000);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.chain, std::vector<uint64_t>{1000});

  std::filesystem::remove(FileOf(1000));
  EXPECT_EQ(store_->RestoreNewest(*log_, 3000).state, nullptr);
}

// Rewrites the parent a delta's first line names (the line is not under its checksum; the body
// holds the same offsets, and decoding checks them).
void SetParentInFirstLine(const std::string& path, uint64_t parent) {
  const std::string before_parent = "cairn-decision-delta sha256=" + std::string(64, '0') +
                                    " base=" + std::string(20, '0') + " parent=";
  char digits[32];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(parent));
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(before_parent.size()));
  file.write(digits, 20);
}

// A delta whose first line names itself as its parent (a flipped digit) is no link of any chain
// (the walk back must end); one whose first line and body disagree fails to decode, and only it
// is passed over: the chain before it serves.
TEST_F(DecisionSnapshotsTest, ADeltaWhoseLinksAreWrongIsPassedOverAlone) {
  commands::DecisionState state = FoldTo(*log_, 1000);
  ASSERT_TRUE(store_->Write(state, *log_).ok());
  commands::StartCountingChanges(state);
  for (uint64_t parent : {1000, 1500}) {
    FoldOn(*log_, state, parent + 500);
    WriteDelta(*store_, *log_, state, 1000, parent);
  }
  const std::string delta_1500 = store_->dir() + "/decision-00000000000000001500.delta";
  const std::string delta_2000 = store_->dir() + "/decision-00000000000000002000.delta";
  SetParentInFirstLine(delta_2000, 1000);  // the body says 1500
  auto restored = store_->RestoreNewest(*log_, 3000);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.chain, (std::vector<uint64_t>{1000, 1500}));
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(FoldTo(*log_, 1500)));

  SetParentInFirstLine(delta_1500, 1500);  // itself
  auto entries = store_->Entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_FALSE(entries[1].readable);
  EXPECT_EQ(store_->Offsets(), (std::vector<uint64_t>{1000, 2000}));
  restored = store_->RestoreNewest(*log_, 3000);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.chain, std::vector<uint64_t>{1000});
}

// The newest two whole snapshots are kept, with the deltas after the older of them; a delta
// refuses to follow nothing.
TEST_F(DecisionSnapshotsTest, KeepsTheNewestTwoChains) {
  commands::DecisionState state = FoldTo(*log_, 1000);
  ASSERT_TRUE(store_->Write(state, *log_).ok());
  commands::StartCountingChanges(state);
  FoldOn(*log_, state, 1500);
  WriteDelta(*store_, *log_, state, 1000, 1000);
  FoldOn(*log_, state, 2000);
  ASSERT_TRUE(store_->Write(state, *log_).ok());
  commands::StartCountingChanges(state);
  FoldOn(*log_, state, 2500);
  WriteDelta(*store_, *log_, state, 2000, 2000);
  EXPECT_EQ(store_->Offsets(), (std::vector<uint64_t>{1000, 1500, 2000, 2500}));
  FoldOn(*log_, state, 2700);
  ASSERT_TRUE(store_->Write(state, *log_).ok());
  EXPECT_EQ(store_->Offsets(), (std::vector<uint64_t>{2000, 2500, 2700}));
  auto entries = store_->Entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_TRUE(entries[1].delta);
  EXPECT_EQ(entries[1].base, 2000u);
  EXPECT_EQ(entries[1].parent, 2000u);
  EXPECT_FALSE(entries[2].delta);
  EXPECT_EQ(store_->BeginDelta(2800, 0, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->BeginDelta(2800, 2700, 2900).status().code(), StatusCode::kInvalidArgument);
}

// snapshots.write_side_copy: fold. The thread folds a second state to each multiple the log
// passed, from the newest snapshot on.
TEST_F(DecisionSnapshotsTest, TheFoldingThreadTakesOneAtEachMultipleEqualToAFold) {
  DecisionSnapshotter snapshotter(log_.get(), store_.get(), 1000, DecisionSnapshotter::Copy::kFold);
  snapshotter.Start();
  commands::DecisionState at_1500 = FoldTo(*log_, 1500);
  snapshotter.StateAdvanced(at_1500, "");
  ASSERT_TRUE(snapshotter.WaitForSnapshot(1000, 60s));
  auto end = log_->EndOffset();
  ASSERT_TRUE(end.ok());
  commands::DecisionState at_end = FoldTo(*log_, *end);
  snapshotter.StateAdvanced(at_end, "");  // from 1000 on, to the last multiple
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
  commands::DecisionState before_start = FoldTo(*log_, 1500);
  snapshotter.StateAdvanced(before_start, EventIdAt(*log_, 1499));
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
  // The second is a delta on the first: what changed since, not the whole state.
  auto entries = store_->Entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_FALSE(entries[0].delta);
  EXPECT_TRUE(entries[1].delta);
  EXPECT_EQ(entries[1].base, 1500u);
  EXPECT_EQ(entries[1].parent, 1500u);
  restored = store_->RestoreNewest(*log_, *end);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_EQ(restored.chain, (std::vector<uint64_t>{1500, *end}));
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(state));
  for (const auto& entry : std::filesystem::directory_iterator(store_->dir())) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

// A delta holds what the state counted since the snapshot before it. A state that did not count
// (the writer's, replaced by a fresh fold after a failed append) gets a whole snapshot: a delta
// of it would leave out every change the fresh fold made.
TEST_F(DecisionSnapshotsTest, AStateThatDidNotCountItsChangesGetsAWholeSnapshot) {
  DecisionSnapshotter snapshotter(log_.get(), store_.get(), 500);
  snapshotter.Start();
  commands::DecisionState state = FoldTo(*log_, 600);
  snapshotter.StateAdvanced(state, EventIdAt(*log_, 599));
  ASSERT_TRUE(snapshotter.WaitForSnapshot(600, 60s));
  FoldOn(*log_, state, 1100);
  snapshotter.StateAdvanced(state, EventIdAt(*log_, 1099));
  ASSERT_TRUE(snapshotter.WaitForSnapshot(1100, 60s));
  commands::DecisionState refolded = FoldTo(*log_, 1600);
  snapshotter.StateAdvanced(refolded, EventIdAt(*log_, 1599));
  ASSERT_TRUE(snapshotter.WaitForSnapshot(1600, 60s));
  snapshotter.Stop();
  auto entries = store_->Entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_FALSE(entries[0].delta);
  EXPECT_TRUE(entries[1].delta);
  EXPECT_FALSE(entries[2].delta) << "a delta of a state that counted nothing";
  auto restored = store_->RestoreNewest(*log_, 1600);
  ASSERT_NE(restored.state, nullptr);
  EXPECT_TRUE(Encoded(*restored.state) == Encoded(FoldTo(*log_, 1600)));
}

}  // namespace
}  // namespace cairn
