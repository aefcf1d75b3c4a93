#include "agent/kafka_placement_source.h"

#include <chrono>

#include "base/log.h"

namespace cairn::agent {
namespace {

// How long one poll waits; it bounds how late Run() notices Stop().
constexpr std::chrono::milliseconds kPollWait(200);
// The pause after a failed poll, so a consumer that fails at once does not spin.
constexpr std::chrono::milliseconds kFailurePause(500);

}  // namespace

Result<std::unique_ptr<KafkaPlacementSource>> KafkaPlacementSource::Open(
    const std::string& brokers, const std::string& topic_prefix, const std::string& agent_id) {
  if (brokers.empty()) {
    return Status::InvalidArgument("the master named the kafka transport without brokers");
  }
  CAIRN_ASSIGN_OR_RETURN(auto consumer, PlacementConsumer::Open(brokers, topic_prefix, agent_id));
  return std::make_unique<KafkaPlacementSource>(
      std::move(consumer), "kafka topic " + PlacementTopicName(topic_prefix) + " at " + brokers);
}

KafkaPlacementSource::KafkaPlacementSource(std::unique_ptr<PlacementConsumer> consumer,
                                           std::string description)
    : consumer_(std::move(consumer)), description_(std::move(description)) {}

void KafkaPlacementSource::Run(const OrderHandler& handler) {
  int failures = 0;
  while (!stopped_) {
    Result<std::vector<Envelope>> orders = consumer_->Poll(kPollWait);
    if (!orders.ok()) {
      // The consumer retries by itself; a failed poll is logged and polled again.
      if (failures++ % 50 == 0) log::Warn("placements", "poll failed: {}", orders.status());
      std::unique_lock lock(mutex_);
      stop_signal_.wait_for(lock, kFailurePause, [&] { return stopped_.load(); });
      continue;
    }
    failures = 0;
    if (orders->empty()) continue;
    for (const auto& order : *orders) {
      if (stopped_) return;
      handler(order);
    }
    Status committed = consumer_->Commit();
    if (!committed.ok()) log::Warn("placements", "commit failed: {}", committed);
  }
}

void KafkaPlacementSource::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  stop_signal_.notify_all();
}

}  // namespace cairn::agent
