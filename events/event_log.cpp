#include "events/event_log.h"

#include "events/embedded/embedded_log.h"
#include "events/kafka/kafka_log.h"

namespace cairn {

Result<std::unique_ptr<EventLog>> OpenEventLog(const LogConfig& config) {
  if (config.backend == "embedded") {
    if (config.data_dir.empty()) return Status::InvalidArgument("log: data_dir is required");
    return OpenEmbeddedLog(config.data_dir + "/log", config.read_only);
  }
  if (config.backend == "kafka") {
    if (config.brokers.empty()) {
      return Status::InvalidArgument("log: backend kafka needs log.brokers");
    }
    return OpenKafkaLog(config.brokers, config.topic_prefix, config.read_only);
  }
  return Status::InvalidArgument("log.backend must be 'embedded' or 'kafka', not '" +
                                 config.backend + "'");
}

}  // namespace cairn
