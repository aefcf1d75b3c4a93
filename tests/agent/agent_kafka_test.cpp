// The Agent in Kafka mode: orders reach it through the placements topic (the master's relay over
// librdkafka's mock cluster) while reports still go to the master over HTTP.
#include <gtest/gtest.h>

#include "agent/agent.h"
#include "events/kafka/placement_topic.h"
#include "events/memory_log.h"
#include "tests/agent/fake_master.h"
#include "tests/events_kafka/mock_cluster.h"
#include "tests/support/test_support.h"

namespace cairn::agent {
namespace {

using namespace std::chrono_literals;
using testing::CountCalls;
using Calls = std::vector<testing::FakeMaster::Call>;

// Joining a consumer group on the mock cluster takes about 3 s.
constexpr auto kKafkaTimeout = 30s;

TEST(AgentKafkaTest, RunsOrdersFromThePlacementsTopicOnce) {
  auto cluster = cairn::testing::MockKafkaCluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  ASSERT_TRUE((*cluster)->CreateCairnTopics("cairn", 2).ok());

  testing::FakeMaster master;
  master.SetPlacements(
      {{"transport", "kafka"}, {"brokers", (*cluster)->bootstraps()}, {"topicPrefix", "cairn"}});
  cairn::testing::TempDir dir;
  AgentOptions options;
  options.agent_id = "agent-k";
  options.master_url = master.url();
  options.devices = ArtificialCpuSlots(1);
  options.work_root = dir.Sub("work");
  options.heartbeat_interval = 100ms;
  options.retry.initial_backoff = 10ms;
  auto agent = Agent::Create(options);
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  auto registration = (*agent)->Start();
  ASSERT_TRUE(registration.ok()) << registration.status().ToString();
  EXPECT_EQ(registration->transport, "kafka");

  MemoryEventLog log;
  events::Envelope order;
  auto* assigned = order.mutable_allocation_assigned();
  assigned->set_task_id("task-k");
  assigned->set_allocation_id("alloc-k");
  assigned->set_agent_id("agent-k");
  assigned->set_agent_incarnation((*agent)->incarnation());
  assigned->add_slot_ids(0);
  assigned->mutable_spec()->add_entrypoint("echo");
  assigned->mutable_spec()->add_entrypoint("from kafka");
  events::Envelope other_agent = order;
  other_agent.mutable_allocation_assigned()->set_agent_id("agent-other");
  other_agent.mutable_allocation_assigned()->set_allocation_id("alloc-other");
  // The same order twice (as an at-least-once relay may deliver it), and one for another agent.
  ASSERT_TRUE(log.Append({order, other_agent, order}).ok());
  auto relay = PlacementRelay::Start(&log, (*cluster)->bootstraps(), "cairn", dir.Sub("relay"));
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();

  ASSERT_TRUE(master.WaitFor(
      [](const Calls& calls) {
        return CountCalls(calls, "/api/v1/allocations/alloc-k/exited", "", 200) == 1;
      },
      kKafkaTimeout));
  // Orders after the duplicate are handled, so the duplicate was seen and dropped.
  events::Envelope sentinel = order;
  sentinel.mutable_allocation_assigned()->set_allocation_id("alloc-sentinel");
  ASSERT_TRUE(log.Append({sentinel}).ok());
  ASSERT_TRUE(master.WaitFor(
      [](const Calls& calls) {
        return CountCalls(calls, "/api/v1/allocations/alloc-sentinel/exited", "", 200) == 1;
      },
      kKafkaTimeout));
  EXPECT_EQ(master.CallsTo("/api/v1/allocations/alloc-k/started").size(), 1u);
  EXPECT_EQ(master.CallsTo("", "alloc-other").size(), 0u);
  bool logged = false;
  for (const auto& call : master.CallsTo("/api/v1/task/logs")) {
    for (const auto& line : call.body["logs"]) logged |= line["log"] == "from kafka\n";
  }
  EXPECT_TRUE(logged);
  (*agent)->Shutdown();
  (*relay)->Stop();
}

}  // namespace
}  // namespace cairn::agent
