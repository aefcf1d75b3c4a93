// Placeholder until the Kafka placement topic lands.
#include "events/kafka/placement_topic.h"
namespace cairn {
std::string PlacementTopicName(const std::string& topic_prefix) { return topic_prefix + ".placements"; }
Result<std::unique_ptr<PlacementConsumer>> PlacementConsumer::Open(const std::string&, const std::string&, const std::string&) {
  return Status::NotSupported("kafka placements are not built yet");
}
Result<std::unique_ptr<PlacementRelay>> PlacementRelay::Start(EventLog*, const std::string&, const std::string&, const std::string&) {
  return Status::NotSupported("kafka placements are not built yet");
}
}  // namespace cairn
