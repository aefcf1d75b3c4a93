// Placement orders from Kafka (PROTOCOL.md §3, Kafka mode): the "<prefix>.placements" topic,
// keyed by agent id, through PlacementConsumer. The consumer group keeps the position, so a
// restarted agent resumes where the last one committed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "agent/placement_source.h"
#include "events/kafka/placement_topic.h"

namespace cairn::agent {

// Run() on one thread; Stop() from any.
class KafkaPlacementSource : public PlacementSource {
 public:
  static Result<std::unique_ptr<KafkaPlacementSource>> Open(const std::string& brokers,
                                                            const std::string& topic_prefix,
                                                            const std::string& agent_id);
  KafkaPlacementSource(std::unique_ptr<PlacementConsumer> consumer, std::string description);

  void Run(const OrderHandler& handler) override;
  void Stop() override;
  // The consumer reconnects by itself; nothing to do.
  void Reconnect() override {}
  std::string Describe() const override { return description_; }

 private:
  std::unique_ptr<PlacementConsumer> consumer_;
  const std::string description_;
  std::atomic<bool> stopped_{false};
  std::mutex mutex_;
  std::condition_variable stop_signal_;
};

}  // namespace cairn::agent
