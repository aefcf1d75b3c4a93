// The Kafka EventLog against an in-process mock cluster: append, read, tail, reopen, concurrent
// appenders, topic checks, read-only mode and the fatal-producer path.
#include "events/kafka/kafka_log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "tests/events_kafka/kafka_test_util.h"
#include "tests/events_kafka/mock_cluster.h"

namespace cairn {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::IdsOf;
using testing::MakeEvent;
using testing::MockKafkaCluster;
using testing::ReadRange;

constexpr milliseconds kReadTimeout{20'000};

std::vector<Envelope> MakeBatch(const std::string& prefix, size_t size) {
  std::vector<Envelope> batch;
  for (size_t i = 0; i < size; ++i) batch.push_back(MakeEvent(prefix + "-" + std::to_string(i)));
  return batch;
}

class KafkaLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = MockKafkaCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    ASSERT_TRUE(cluster_->CreateCairnTopics("cairn").ok());
    auto log = OpenKafkaLog(cluster_->bootstraps(), "cairn", false);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
  }

  std::unique_ptr<MockKafkaCluster> cluster_;
  std::unique_ptr<EventLog> log_;
};

// The mock keeps 5 MiB per partition and drops older batches silently, as a real topic with a
// retention would: a log that lost its beginning is refused, naming what is missing.
TEST_F(KafkaLogTest, ALogWhoseOldestEventsTheBrokersDroppedIsRefused) {
  const std::string filler(200'000, 'x');
  for (int i = 0; i < 40; ++i) {
    auto range = log_->Append({MakeEvent("big-" + std::to_string(i) + filler)});
    ASSERT_TRUE(range.ok()) << range.status().ToString();
  }
  log_.reset();
  for (bool read_only : {true, false}) {
    auto reopened = OpenKafkaLog(cluster_->bootstraps(), "cairn", read_only);
    ASSERT_FALSE(reopened.ok()) << "read_only=" << read_only;
    EXPECT_EQ(reopened.status().code(), StatusCode::kFailedPrecondition);
    const std::string& message = reopened.status().message();
    EXPECT_NE(message.find("the first available offset is"), std::string::npos) << message;
    EXPECT_NE(message.find("retention.ms=-1"), std::string::npos) << message;
  }
}

TEST_F(KafkaLogTest, AppendsBatchesAndReadsThemBackInOrder) {
  EXPECT_EQ(*log_->EndOffset(), 0u);
  const std::vector<size_t> sizes = {1, 5, 10};
  uint64_t expected_first = 0;
  std::vector<Envelope> appended;
  for (size_t b = 0; b < sizes.size(); ++b) {
    std::vector<Envelope> batch = MakeBatch("batch" + std::to_string(b), sizes[b]);
    auto range = log_->Append(batch);
    ASSERT_TRUE(range.ok()) << range.status().ToString();
    EXPECT_EQ(range->first, expected_first);
    EXPECT_EQ(range->last, expected_first + sizes[b] - 1);
    expected_first += sizes[b];
    appended.insert(appended.end(), batch.begin(), batch.end());
  }
  EXPECT_EQ(*log_->EndOffset(), 16u);

  auto events = ReadRange(*log_, 0, 16, kReadTimeout);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 16u);
  for (size_t i = 0; i < events->size(); ++i) {
    Envelope expected = appended[i];
    expected.set_offset(i);
    EXPECT_EQ((*events)[i].SerializeAsString(), expected.SerializeAsString()) << "offset " << i;
  }

  // A reader may start anywhere.
  auto tail = ReadRange(*log_, 6, 16, kReadTimeout);
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  ASSERT_EQ(tail->size(), 10u);
  EXPECT_EQ(tail->front().offset(), 6u);
  EXPECT_EQ(tail->front().event_id(), "batch2-0");
}

TEST_F(KafkaLogTest, AssignsOffsetsIgnoringTheInput) {
  Envelope event = MakeEvent("with-offset");
  event.set_offset(999);
  auto range = log_->Append({event});
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(range->first, 0u);
  auto events = ReadRange(*log_, 0, 1, kReadTimeout);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(events->at(0).offset(), 0u);
}

TEST_F(KafkaLogTest, RejectsAnEmptyBatch) {
  EXPECT_EQ(log_->Append({}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(KafkaLogTest, NextReturnsNothingWhenNothingArrives) {
  auto reader = log_->OpenReader(0);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto events = (*reader)->Next(10, milliseconds(200));
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_TRUE(events->empty());
  EXPECT_EQ((*reader)->position(), 0u);
}

TEST_F(KafkaLogTest, NextReturnsAtMostMaxEvents) {
  ASSERT_TRUE(log_->Append(MakeBatch("e", 10)).ok());
  auto reader = log_->OpenReader(0);
  ASSERT_TRUE(reader.ok());
  std::vector<Envelope> first;
  const auto deadline = steady_clock::now() + kReadTimeout;
  while (first.empty() && steady_clock::now() < deadline) {
    auto events = (*reader)->Next(3, milliseconds(500));
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    first = std::move(events).value();
  }
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ((*reader)->position(), 3u);
  auto rest = (*reader)->Next(100, milliseconds(2000));
  ASSERT_TRUE(rest.ok());
  ASSERT_FALSE(rest->empty());
  EXPECT_EQ(rest->front().offset(), 3u);
}

TEST_F(KafkaLogTest, TailingReaderWakesOnAppend) {
  auto reader = log_->OpenReader(0);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();

  std::mutex mutex;
  std::condition_variable changed;
  bool reader_waiting = false;
  Result<std::vector<Envelope>> seen = Status::Unavailable("not read yet");
  milliseconds waited{0};
  std::thread tail([&] {
    {
      std::lock_guard lock(mutex);
      reader_waiting = true;
    }
    changed.notify_all();
    const auto start = steady_clock::now();
    // Much longer than the test tolerates: only a wake-up on append ends it in time.
    auto events = (*reader)->Next(10, milliseconds(30'000));
    std::lock_guard lock(mutex);
    waited = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
    seen = std::move(events);
  });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return reader_waiting; });
  }
  ASSERT_TRUE(log_->Append({MakeEvent("wake-up")}).ok());
  tail.join();

  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ(seen->at(0).event_id(), "wake-up");
  EXPECT_LT(waited.count(), 10'000) << "the reader did not wake on the append";
  std::printf("tail wake-up after %lld ms (append included)\n",
              static_cast<long long>(waited.count()));
}

TEST_F(KafkaLogTest, ReopenedLogSeesOldEventsAndContinuesOffsets) {
  ASSERT_TRUE(log_->Append(MakeBatch("first", 4)).ok());
  log_.reset();

  auto reopened = OpenKafkaLog(cluster_->bootstraps(), "cairn", false);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(*(*reopened)->EndOffset(), 4u);
  auto range = (*reopened)->Append(MakeBatch("second", 3));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(range->first, 4u);
  EXPECT_EQ(range->last, 6u);

  auto events = ReadRange(**reopened, 0, 7, kReadTimeout);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(IdsOf(*events), (std::vector<std::string>{"first-0", "first-1", "first-2", "first-3",
                                                      "second-0", "second-1", "second-2"}));
}

TEST_F(KafkaLogTest, ConcurrentAppendersKeepEachBatchContiguous) {
  constexpr int kThreads = 4;
  constexpr int kBatchesPerThread = 20;
  constexpr size_t kBatchSize = 7;
  std::mutex mutex;
  std::vector<std::pair<OffsetRange, std::vector<std::string>>> appended;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatchesPerThread; ++b) {
        std::vector<Envelope> batch =
            MakeBatch("t" + std::to_string(t) + "b" + std::to_string(b), kBatchSize);
        auto range = log_->Append(batch);
        std::lock_guard lock(mutex);
        if (range.ok()) {
          appended.emplace_back(*range, IdsOf(batch));
        } else {
          failures.push_back(range.status().ToString());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(failures.empty()) << failures.front();

  const uint64_t total = kThreads * kBatchesPerThread * kBatchSize;
  EXPECT_EQ(*log_->EndOffset(), total);
  auto events = ReadRange(*log_, 0, total, kReadTimeout);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::set<uint64_t> firsts;
  for (const auto& [range, ids] : appended) {
    ASSERT_EQ(range.last - range.first + 1, kBatchSize);
    EXPECT_TRUE(firsts.insert(range.first).second) << "two batches at " << range.first;
    for (size_t i = 0; i < kBatchSize; ++i) {
      EXPECT_EQ((*events)[range.first + i].event_id(), ids[i]) << "offset " << range.first + i;
    }
  }
}

TEST_F(KafkaLogTest, RefusesAnEventsTopicWithSeveralPartitions) {
  ASSERT_TRUE(cluster_->CreateTopic("wide.events", 3).ok());
  auto log = OpenKafkaLog(cluster_->bootstraps(), "wide", false);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(log.status().message().find("3 partitions"), std::string::npos)
      << log.status().ToString();
  EXPECT_EQ(OpenKafkaLog(cluster_->bootstraps(), "wide", true).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(KafkaLogTest, MissingTopicIsNotFoundWhenReadOnly) {
  auto log = OpenKafkaLog(cluster_->bootstraps(), "absent", true);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kNotFound);
  EXPECT_NE(log.status().message().find("absent.events"), std::string::npos)
      << log.status().ToString();
}

TEST_F(KafkaLogTest, MissingTopicThatCannotBeCreatedIsAnError) {
  // The mock has no CreateTopics; a real cluster would create the topic here.
  auto log = OpenKafkaLog(cluster_->bootstraps(), "absent", false);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("absent.events"), std::string::npos)
      << log.status().ToString();
  // Looking the topic up must not have auto-created it with the broker's partition count.
  auto still_missing = OpenKafkaLog(cluster_->bootstraps(), "absent", true);
  EXPECT_EQ(still_missing.status().code(), StatusCode::kNotFound);
}

TEST_F(KafkaLogTest, ReadOnlyLogReadsButRefusesAppends) {
  ASSERT_TRUE(log_->Append(MakeBatch("ro", 2)).ok());
  auto reader_log = OpenKafkaLog(cluster_->bootstraps(), "cairn", true);
  ASSERT_TRUE(reader_log.ok()) << reader_log.status().ToString();
  EXPECT_EQ(*(*reader_log)->EndOffset(), 2u);
  EXPECT_EQ((*reader_log)->Append({MakeEvent("refused")}).status().code(),
            StatusCode::kFailedPrecondition);
  auto events = ReadRange(**reader_log, 0, 2, kReadTimeout);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(IdsOf(*events), (std::vector<std::string>{"ro-0", "ro-1"}));
}

TEST_F(KafkaLogTest, ReaderPastTheEndFails) {
  ASSERT_TRUE(log_->Append(MakeBatch("short", 2)).ok());
  auto reader = log_->OpenReader(50);
  ASSERT_TRUE(reader.ok());
  Result<std::vector<Envelope>> events = std::vector<Envelope>{};
  const auto deadline = steady_clock::now() + kReadTimeout;
  while (events.ok() && events->empty() && steady_clock::now() < deadline) {
    events = (*reader)->Next(10, milliseconds(500));
  }
  ASSERT_FALSE(events.ok()) << "a reader past the end read " << events->size() << " events";
  EXPECT_EQ(events.status().code(), StatusCode::kNotFound) << events.status().ToString();
}

TEST_F(KafkaLogTest, FatalProducerErrorRefusesFurtherAppends) {
  ASSERT_TRUE(log_->Append(MakeBatch("before", 2)).ok());
  ASSERT_TRUE(InjectKafkaFatalErrorForTesting(log_.get(), "injected by the test").ok());

  for (int attempt = 0; attempt < 2; ++attempt) {
    auto range = log_->Append({MakeEvent("after-" + std::to_string(attempt))});
    ASSERT_FALSE(range.ok());
    EXPECT_EQ(range.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(range.status().message().find("fatal"), std::string::npos)
        << range.status().ToString();
    EXPECT_NE(range.status().message().find("injected by the test"), std::string::npos)
        << range.status().ToString();
  }
  EXPECT_EQ(*log_->EndOffset(), 2u);

  // A reopened log (a new producer id) writes again.
  log_.reset();
  auto reopened = OpenKafkaLog(cluster_->bootstraps(), "cairn", false);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto range = (*reopened)->Append({MakeEvent("reopened")});
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(range->first, 2u);
}

TEST_F(KafkaLogTest, DescribeNamesBrokersAndTopic) {
  EXPECT_EQ(log_->Describe(), "kafka:" + cluster_->bootstraps() + "/cairn.events");
}

}  // namespace
}  // namespace cairn
