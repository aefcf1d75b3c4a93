// Placeholder until the Kafka log lands.
#include "events/kafka/kafka_log.h"
namespace cairn {
Result<std::unique_ptr<EventLog>> OpenKafkaLog(const std::string&, const std::string&, bool) {
  return Status::NotSupported("kafka log is not built yet");
}
}  // namespace cairn
