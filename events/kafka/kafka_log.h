// The Kafka event log: the control-plane topic "<prefix>.events" with one partition (total
// order), written by an idempotent producer with acks=all.
#pragma once

#include <memory>
#include <string>

#include "events/event_log.h"

namespace cairn {

Result<std::unique_ptr<EventLog>> OpenKafkaLog(const std::string& brokers,
                                               const std::string& topic_prefix, bool read_only);

}  // namespace cairn
