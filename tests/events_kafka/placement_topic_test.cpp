// The placement topic: the relay copies placement events from the Kafka event log to
// "<prefix>.placements" keyed by agent, survives a restart through its offset file, and each
// agent's group consumer reads its own orders and resumes after its last commit.
#include "events/kafka/placement_topic.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>

#include "events/kafka/kafka_log.h"
#include "tests/events_kafka/kafka_test_util.h"
#include "tests/events_kafka/mock_cluster.h"
#include "tests/support/test_support.h"

namespace cairn {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::IdsOf;
using testing::MakeEvent;
using testing::MakeOrder;
using testing::MockKafkaCluster;

// Joining a consumer group on the mock takes about 3 s.
constexpr milliseconds kConsumeTimeout{25'000};
constexpr milliseconds kRelayTimeout{20'000};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Polls until `count` orders came or the deadline passed.
Result<std::vector<Envelope>> PollOrders(PlacementConsumer& consumer, size_t count,
                                         milliseconds timeout) {
  std::vector<Envelope> orders;
  const auto deadline = steady_clock::now() + timeout;
  while (orders.size() < count) {
    if (steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded("got " + std::to_string(orders.size()) + " of " +
                                      std::to_string(count) + " orders");
    }
    CAIRN_ASSIGN_OR_RETURN(std::vector<Envelope> more, consumer.Poll(milliseconds(500)));
    for (Envelope& order : more) orders.push_back(std::move(order));
  }
  return orders;
}

class PlacementTopicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = MockKafkaCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    ASSERT_TRUE(cluster_->CreateCairnTopics("cairn", 4).ok());
    auto log = OpenKafkaLog(cluster_->bootstraps(), "cairn", false);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
    offset_file_ = dir_.Sub("placement-relay.offset");
  }

  Result<std::unique_ptr<PlacementRelay>> StartRelay() {
    return PlacementRelay::Start(log_.get(), cluster_->bootstraps(), "cairn", offset_file_);
  }

  // Appends `batch` and returns the end offset after it.
  uint64_t Append(const std::vector<Envelope>& batch) {
    auto range = log_->Append(batch);
    EXPECT_TRUE(range.ok()) << range.status().ToString();
    return range.ok() ? range->last + 1 : 0;
  }

  testing::TempDir dir_;
  std::unique_ptr<MockKafkaCluster> cluster_;
  std::unique_ptr<EventLog> log_;
  std::string offset_file_;
};

TEST_F(PlacementTopicTest, RoutesEachAgentsOrdersByKey) {
  const uint64_t end = Append({
      MakeEvent("registered"),
      MakeOrder("a1", "agent-a"),
      MakeOrder("b1", "agent-b"),
      MakeEvent("unrelated"),
      MakeOrder("a2", "agent-a"),
      MakeOrder("b2", "agent-b", /*kill=*/true),
      MakeOrder("a3", "agent-a", /*kill=*/true),
  });
  auto relay = StartRelay();
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  ASSERT_TRUE((*relay)->WaitDelivered(end, kRelayTimeout)) << (*relay)->last_status().ToString();
  EXPECT_TRUE((*relay)->last_status().ok()) << (*relay)->last_status().ToString();
  EXPECT_EQ(ReadFile(offset_file_), std::to_string(end) + " 0\n");

  auto agent_a = PlacementConsumer::Open(cluster_->bootstraps(), "cairn", "agent-a");
  auto agent_b = PlacementConsumer::Open(cluster_->bootstraps(), "cairn", "agent-b");
  ASSERT_TRUE(agent_a.ok()) << agent_a.status().ToString();
  ASSERT_TRUE(agent_b.ok()) << agent_b.status().ToString();
  auto orders_a = PollOrders(**agent_a, 3, kConsumeTimeout);
  ASSERT_TRUE(orders_a.ok()) << orders_a.status().ToString();
  auto orders_b = PollOrders(**agent_b, 2, kConsumeTimeout);
  ASSERT_TRUE(orders_b.ok()) << orders_b.status().ToString();

  EXPECT_EQ(IdsOf(*orders_a), (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(IdsOf(*orders_b), (std::vector<std::string>{"b1", "b2"}));
  // Orders carry their event-log offsets.
  EXPECT_EQ((*orders_a)[0].offset(), 1u);
  EXPECT_EQ((*orders_a)[2].offset(), 6u);
  EXPECT_TRUE((*orders_a)[2].has_kill_requested());
  EXPECT_EQ((*orders_b)[1].offset(), 5u);

  // Nothing else is on the topic: the two non-placement events were not relayed.
  auto records =
      testing::ReadWholeTopic(cluster_->bootstraps(), "cairn.placements", kConsumeTimeout);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  EXPECT_EQ(records->size(), 5u);
  for (const auto& [key, order] : *records) {
    EXPECT_EQ(key, order.has_kill_requested() ? order.kill_requested().agent_id()
                                              : order.allocation_assigned().agent_id());
  }
  auto more = (*agent_a)->Poll(milliseconds(300));
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->empty());
}

Envelope WithEpoch(Envelope event, uint64_t epoch) {
  event.set_writer_epoch(epoch);
  return event;
}

Envelope EpochClaim(const std::string& event_id, uint64_t epoch) {
  Envelope event = WithEpoch(MakeEvent(event_id), epoch);
  event.mutable_writer_epoch_claimed()->set_epoch(epoch);
  event.mutable_writer_epoch_claimed()->set_master_id("master-" + std::to_string(epoch));
  return event;
}

std::set<std::string> RelayedIds(const std::string& brokers) {
  auto records = testing::ReadWholeTopic(brokers, "cairn.placements", kConsumeTimeout);
  EXPECT_TRUE(records.ok()) << records.status().ToString();
  std::set<std::string> ids;
  if (records.ok()) {
    for (const auto& [key, order] : *records) ids.insert(order.event_id());
  }
  return ids;
}

TEST_F(PlacementTopicTest, RelaySkipsOrdersOfAFencedOffWriter) {
  const uint64_t first_end = Append({
      EpochClaim("claim-1", 1),
      WithEpoch(MakeOrder("old-1", "agent-a"), 1),
      EpochClaim("claim-2", 2),
      WithEpoch(MakeOrder("stale", "agent-a"), 1),  // the fenced-off master, still appending
      WithEpoch(MakeOrder("new-1", "agent-a"), 2),
  });
  {
    auto relay = StartRelay();
    ASSERT_TRUE(relay.ok()) << relay.status().ToString();
    ASSERT_TRUE((*relay)->WaitDelivered(first_end, kRelayTimeout))
        << (*relay)->last_status().ToString();
  }
  // The epoch is stored beside the offset, so a restarted relay still fences.
  EXPECT_EQ(ReadFile(offset_file_), std::to_string(first_end) + " 2\n");
  const uint64_t second_end = Append({
      WithEpoch(MakeOrder("stale-2", "agent-a", /*kill=*/true), 1),
      WithEpoch(MakeOrder("new-2", "agent-a"), 2),
  });
  auto relay = StartRelay();
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  ASSERT_TRUE((*relay)->WaitDelivered(second_end, kRelayTimeout))
      << (*relay)->last_status().ToString();
  EXPECT_EQ(RelayedIds(cluster_->bootstraps()), (std::set<std::string>{"old-1", "new-1", "new-2"}));
}

TEST_F(PlacementTopicTest, RelayReadsAnOldOffsetFileAndRecoversTheEpoch) {
  const uint64_t first_end = Append({
      EpochClaim("claim-1", 1),
      WithEpoch(MakeOrder("old-1", "agent-a"), 1),
      EpochClaim("claim-2", 2),
  });
  std::ofstream(offset_file_) << first_end << "\n";  // written before epochs were stored
  const uint64_t end = Append({
      WithEpoch(MakeOrder("stale", "agent-a"), 1),
      WithEpoch(MakeOrder("new-1", "agent-a"), 2),
  });
  auto relay = StartRelay();
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  ASSERT_TRUE((*relay)->WaitDelivered(end, kRelayTimeout)) << (*relay)->last_status().ToString();
  EXPECT_EQ(ReadFile(offset_file_), std::to_string(end) + " 2\n");
  EXPECT_EQ(RelayedIds(cluster_->bootstraps()), (std::set<std::string>{"new-1"}));
}

TEST_F(PlacementTopicTest, RestartedRelayResumesFromItsOffsetFileAndLosesNothing) {
  std::vector<Envelope> first_batch;
  for (int i = 0; i < 30; ++i) {
    first_batch.push_back(
        MakeOrder("first-" + std::to_string(i), "agent-" + std::to_string(i % 3)));
  }
  const uint64_t first_end = Append(first_batch);
  {
    auto relay = StartRelay();
    ASSERT_TRUE(relay.ok()) << relay.status().ToString();
    ASSERT_TRUE((*relay)->WaitDelivered(first_end, kRelayTimeout))
        << (*relay)->last_status().ToString();
    (*relay)->Stop();
    EXPECT_EQ((*relay)->delivered_offset(), first_end);
  }
  EXPECT_EQ(ReadFile(offset_file_), std::to_string(first_end) + " 0\n");

  // Appended while no relay runs.
  std::vector<Envelope> second_batch;
  for (int i = 0; i < 20; ++i) {
    second_batch.push_back(MakeEvent("noise-" + std::to_string(i)));
    second_batch.push_back(
        MakeOrder("second-" + std::to_string(i), "agent-" + std::to_string(i % 3), i % 4 == 0));
  }
  const uint64_t second_end = Append(second_batch);

  auto relay = StartRelay();
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  EXPECT_GE((*relay)->delivered_offset(), first_end);
  ASSERT_TRUE((*relay)->WaitDelivered(second_end, kRelayTimeout))
      << (*relay)->last_status().ToString();

  // Every order is on the topic once (this restart was clean, so no re-send either), and each
  // agent's orders are in log order.
  auto records =
      testing::ReadWholeTopic(cluster_->bootstraps(), "cairn.placements", kConsumeTimeout);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  std::set<std::string> seen;
  std::map<std::string, uint64_t> last_offset_of_agent;
  for (const auto& [key, order] : *records) {
    EXPECT_TRUE(seen.insert(order.event_id()).second) << "sent twice: " << order.event_id();
    auto [it, inserted] = last_offset_of_agent.emplace(key, order.offset());
    if (!inserted) {
      EXPECT_GT(order.offset(), it->second) << "out of order for " << key;
      it->second = order.offset();
    }
  }
  for (const Envelope& event : first_batch) EXPECT_EQ(seen.count(event.event_id()), 1u);
  for (const Envelope& event : second_batch) {
    EXPECT_EQ(seen.count(event.event_id()), event.has_agent_enabled() ? 0u : 1u)
        << event.event_id();
  }
}

TEST_F(PlacementTopicTest, RelayStoppedAnywhereLosesNothing) {
  auto relay = StartRelay();
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  std::vector<std::string> ids;
  uint64_t end = 0;
  for (int round = 0; round < 6; ++round) {
    std::vector<Envelope> batch;
    for (int i = 0; i < 10; ++i) {
      ids.push_back("r" + std::to_string(round) + "-" + std::to_string(i));
      batch.push_back(MakeOrder(ids.back(), "agent-" + std::to_string(i % 4)));
    }
    end = Append(batch);
    if (round % 2 == 1) {
      // Stopped wherever it is: mid-batch, between batches, or idle.
      relay->reset();
      relay = StartRelay();
      ASSERT_TRUE(relay.ok()) << relay.status().ToString();
    }
  }
  ASSERT_TRUE((*relay)->WaitDelivered(end, kRelayTimeout)) << (*relay)->last_status().ToString();

  auto records =
      testing::ReadWholeTopic(cluster_->bootstraps(), "cairn.placements", kConsumeTimeout);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  std::set<std::string> seen;
  for (const auto& [key, order] : *records) seen.insert(order.event_id());
  for (const std::string& id : ids) EXPECT_EQ(seen.count(id), 1u) << id << " was lost";
  EXPECT_EQ(seen.size(), ids.size());
}

TEST_F(PlacementTopicTest, ConsumerResumesAfterItsLastCommit) {
  auto relay = StartRelay();
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  Append({MakeOrder("o1", "agent-a"), MakeOrder("o2", "agent-a"), MakeOrder("x1", "agent-x"),
          MakeOrder("o3", "agent-a")});
  {
    auto consumer = PlacementConsumer::Open(cluster_->bootstraps(), "cairn", "agent-a");
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    auto orders = PollOrders(**consumer, 3, kConsumeTimeout);
    ASSERT_TRUE(orders.ok()) << orders.status().ToString();
    EXPECT_EQ(IdsOf(*orders), (std::vector<std::string>{"o1", "o2", "o3"}));
    ASSERT_TRUE((*consumer)->Commit().ok());
  }

  Append({MakeOrder("o4", "agent-a"), MakeOrder("o5", "agent-a", /*kill=*/true)});
  {
    auto consumer = PlacementConsumer::Open(cluster_->bootstraps(), "cairn", "agent-a");
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    auto orders = PollOrders(**consumer, 2, kConsumeTimeout);
    ASSERT_TRUE(orders.ok()) << orders.status().ToString();
    EXPECT_EQ(IdsOf(*orders), (std::vector<std::string>{"o4", "o5"}));
    // Read but not committed.
  }
  {
    auto consumer = PlacementConsumer::Open(cluster_->bootstraps(), "cairn", "agent-a");
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    auto orders = PollOrders(**consumer, 2, kConsumeTimeout);
    ASSERT_TRUE(orders.ok()) << orders.status().ToString();
    EXPECT_EQ(IdsOf(*orders), (std::vector<std::string>{"o4", "o5"}))
        << "uncommitted orders must come again";
  }
}

TEST_F(PlacementTopicTest, RelayRefusesAnUnreadableOffsetFile) {
  std::ofstream(offset_file_) << "not a number\n";
  auto relay = StartRelay();
  ASSERT_FALSE(relay.ok());
  EXPECT_EQ(relay.status().code(), StatusCode::kCorruption) << relay.status().ToString();
}

TEST_F(PlacementTopicTest, RelayRefusesAnOffsetPastTheLog) {
  std::ofstream(offset_file_) << "42\n";
  auto relay = StartRelay();
  ASSERT_FALSE(relay.ok());
  EXPECT_EQ(relay.status().code(), StatusCode::kFailedPrecondition) << relay.status().ToString();
}

TEST_F(PlacementTopicTest, ConsumerNeedsTheTopic) {
  auto consumer = PlacementConsumer::Open(cluster_->bootstraps(), "absent", "agent-a");
  ASSERT_FALSE(consumer.ok());
  EXPECT_EQ(consumer.status().code(), StatusCode::kNotFound) << consumer.status().ToString();
}

}  // namespace
}  // namespace cairn
