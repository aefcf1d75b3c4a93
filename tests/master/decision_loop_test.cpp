// The single-writer loop over a real (in-memory) log: durability before answers, batching,
// epochs, and recovery from a failed append.
#include "master/decision_loop.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/ids.h"
#include "base/thread_priority.h"
#include "events/envelope_util.h"
#include "events/memory_log.h"
#include "tests/commands/command_builders.h"
#include "tests/support/test_support.h"

namespace cairn::commands {
namespace {

// A system actor: these tests are about the loop, not about who may do what (tenancy_test).
CommandMeta Meta(const std::string& key = "") { return {"system:test", NewUuid(), key, 42}; }

std::vector<Envelope> ReadAll(EventLog& log) {
  auto reader = log.OpenReader(0);
  auto events = (*reader)->Next(100000, std::chrono::milliseconds(0));
  return *events;
}

TEST(DecisionLoopTest, StartClaimsANewEpochEachTime) {
  MemoryEventLog log;
  {
    DecisionLoop loop(&log, {"m1"});
    ASSERT_TRUE(loop.Start().ok());
    EXPECT_EQ(loop.writer_epoch(), 1u);
  }
  DecisionLoop loop(&log, {"m2"});
  ASSERT_TRUE(loop.Start().ok());
  EXPECT_EQ(loop.writer_epoch(), 2u);
  auto events = ReadAll(log);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].writer_epoch_claimed().master_id(), "m2");
}

// The writer's thread is named, for top -H, perf and bench_scheduling's CPU split by thread.
TEST(DecisionLoopTest, TheWriterRunsOnAThreadNamedCairnDecider) {
  MemoryEventLog log;
  EXPECT_TRUE(cairn::testing::NiceOfThreadsNamed(kDeciderThreadName).empty());
  {
    DecisionLoop loop(&log, {"m1"});
    ASSERT_TRUE(loop.Start().ok());
    ASSERT_TRUE(loop.Execute(testing::OneSlotSubmit("t1"), Meta()).ok());  // the writer ran
    EXPECT_EQ(cairn::testing::NiceOfThreadsNamed(kDeciderThreadName).size(), 1u);
  }
  EXPECT_TRUE(cairn::testing::NiceOfThreadsNamed(kDeciderThreadName).empty());
}

TEST(DecisionLoopTest, AnswersCarryTheDurableOffsetAndEnvelopeMetadata) {
  MemoryEventLog log;
  DecisionLoop loop(&log, {"m1"});
  ASSERT_TRUE(loop.Start().ok());
  auto outcome = loop.Execute(testing::OneSlotSubmit("t1"), Meta("k1"));
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->entity_id, "t1");
  EXPECT_EQ(outcome->offset, 1u);
  auto events = ReadAll(log);
  ASSERT_EQ(events.size(), 2u);
  const auto& submitted = events[1];
  EXPECT_TRUE(submitted.has_task_submitted());
  EXPECT_EQ(submitted.actor(), "system:test");
  EXPECT_EQ(submitted.idempotency_key(), "k1");
  EXPECT_EQ(submitted.writer_epoch(), 1u);
  EXPECT_EQ(submitted.schema_version(), kSchemaVersion);
  EXPECT_EQ(submitted.time_unix_micros(), 42);
  EXPECT_FALSE(submitted.event_id().empty());
}

TEST(DecisionLoopTest, ConcurrentCommandsAreAllDecidedOnce) {
  MemoryEventLog log;
  DecisionLoop loop(&log, {"m1"});
  ASSERT_TRUE(loop.Start().ok());
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < 50; ++i) {
        auto id = "t" + std::to_string(c) + "-" + std::to_string(i);
        ASSERT_TRUE(loop.Execute(testing::OneSlotSubmit(id), Meta()).ok());
      }
    });
  }
  for (auto& t : clients) t.join();
  size_t submitted = 0;
  loop.Read([&](const DecisionState& state) { submitted = state.tasks.size(); });
  EXPECT_EQ(submitted, 400u);
  EXPECT_EQ(ReadAll(log).size(), 401u);
}

TEST(DecisionLoopTest, RefusedCommandsAppendNothing) {
  MemoryEventLog log;
  DecisionLoop loop(&log, {"m1"});
  ASSERT_TRUE(loop.Start().ok());
  auto refused = loop.Execute(KillTask{"missing", ""}, Meta());
  EXPECT_EQ(refused.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadAll(log).size(), 1u);
}

TEST(DecisionLoopTest, AFailedAppendReloadsStateAndARetryWithTheKeySucceedsOnce) {
  MemoryEventLog log;
  DecisionLoop loop(&log, {"m1"});
  ASSERT_TRUE(loop.Start().ok());
  log.FailNextAppends(1);
  auto failed = loop.Execute(testing::OneSlotSubmit("t1"), Meta("submit-1"));
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  size_t tasks = 99;
  loop.Read([&](const DecisionState& state) { tasks = state.tasks.size(); });
  EXPECT_EQ(tasks, 0u) << "speculative state must be dropped";
  auto retried = loop.Execute(testing::OneSlotSubmit("t1"), Meta("submit-1"));
  ASSERT_TRUE(retried.ok());
  auto again = loop.Execute(testing::OneSlotSubmit("t1"), Meta("submit-1"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->events_written, 0);
  EXPECT_EQ(ReadAll(log).size(), 2u);
}

TEST(DecisionLoopTest, WhenTheReloadAlsoFailsNothingIsDecidedOnStaleState) {
  MemoryEventLog log;
  DecisionLoop loop(&log, {"m1"});
  ASSERT_TRUE(loop.Start().ok());
  log.FailNextAppends(1);
  log.FailNextOpens(1);
  EXPECT_FALSE(loop.Execute(testing::OneSlotSubmit("t1"), Meta()).ok());
  // The next command reloads first: t1 never reached the log, so it can be submitted now.
  auto again = loop.Execute(testing::OneSlotSubmit("t1"), Meta());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(ReadAll(log).size(), 2u);
}

TEST(DecisionLoopTest, AMasterFencedByANewerEpochStopsWriting) {
  MemoryEventLog log;
  DecisionLoop old_master(&log, {"old"});
  ASSERT_TRUE(old_master.Start().ok());
  DecisionLoop new_master(&log, {"new"});
  ASSERT_TRUE(new_master.Start().ok());
  auto refused = old_master.Execute(testing::OneSlotSubmit("t1"), Meta());
  ASSERT_FALSE(refused.ok());
  auto after = old_master.Execute(testing::OneSlotSubmit("t2"), Meta());
  EXPECT_EQ(after.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(after.status().message().find("newer master"), std::string::npos);
  // The old master's stray events moved the log under the new one: it reloads and carries on.
  auto moved = new_master.Execute(testing::OneSlotSubmit("t3"), Meta());
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->offset, 3u);
  new_master.Read([](const DecisionState& state) {
    EXPECT_EQ(state.tasks.count("t1"), 0u) << "events of the fenced epoch are ignored";
    EXPECT_EQ(state.tasks.count("t3"), 1u);
  });
}

}  // namespace
}  // namespace cairn::commands
