// The Kafka event log: the control-plane topic "<prefix>.events" with one partition (total
// order), written by an idempotent producer with acks=all.
#pragma once

#include <memory>
#include <string>

#include "events/event_log.h"

namespace cairn {

// "<prefix>.events".
std::string EventsTopicName(const std::string& topic_prefix);

// Opens the log on `brokers` (a bootstrap list). The topic must have exactly one partition; a
// missing topic is created through the Admin API unless `read_only` (brokers without that API,
// such as librdkafka's mock cluster, need it created beforehand). A read-only log has no
// producer and refuses Append with FailedPrecondition.
//
// Append waits for every delivery report of its batch; one undelivered event makes it fail with
// Unavailable (earlier events of the batch may have landed). After a fatal error of the
// idempotent producer (ordering or exactly-once could no longer be guaranteed), every further
// Append fails with Unavailable naming the cause: the process must reopen the log.
Result<std::unique_ptr<EventLog>> OpenKafkaLog(const std::string& brokers,
                                               const std::string& topic_prefix, bool read_only);

// Test hook: raises a fabricated fatal error on the producer of a log OpenKafkaLog returned
// (librdkafka's rd_kafka_test_fatal_error), since the real ones cannot be provoked on demand.
// InvalidArgument when `log` is not a writable Kafka log.
Status InjectKafkaFatalErrorForTesting(EventLog* log, const std::string& reason);

}  // namespace cairn
