// Task logs on Kafka: the topic "<prefix>.tasklogs", one TaskLogRecord (events.proto) per line a
// task wrote, keyed by task id (murmur2, as Java clients hash), so one task's lines share a
// partition and stay in order there. The master publishes every line it accepts before it
// answers the agent, and keeps a local copy that it rebuilds from the topic
// (events/task_log_store.h).
// Not the event log: these records carry no envelope, offset or writer epoch (docs/events.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"

namespace cairn {

std::string TaskLogTopicName(const std::string& topic_prefix);

// The partition count the master gives the topic when it has to create it.
inline constexpr int kDefaultTaskLogPartitions = 8;

// Thread-safe: request threads publish at once.
class TaskLogPublisher {
 public:
  virtual ~TaskLogPublisher() = default;
  // A producer for the topic, which is created (kDefaultTaskLogPartitions, kept forever) when it
  // is missing and the cluster has an Admin API; otherwise it must exist (NotFound).
  static Result<std::unique_ptr<TaskLogPublisher>> Open(const std::string& brokers,
                                                        const std::string& topic_prefix);
  // Returns once every record is acknowledged by all in-sync replicas (acks=all). Unavailable
  // names the first that was not; others may have been written, and writing them again is
  // harmless (a line is named by its task, allocation and seq).
  virtual Status Publish(const std::vector<events::TaskLogRecord>& records) = 0;
};

// Per partition, the offset of the next record to read.
using TopicPositions = std::map<int32_t, int64_t>;

// Reads every partition of the topic from given positions: assign(), no group, no commits.
// One thread.
class TaskLogTopicReader {
 public:
  virtual ~TaskLogTopicReader() = default;
  // Partitions missing from `from` are read from their oldest retained record, and so are those
  // whose position retention has deleted (`skipped` tells which). NotFound when the topic does
  // not exist.
  static Result<std::unique_ptr<TaskLogTopicReader>> Open(const std::string& brokers,
                                                          const std::string& topic_prefix,
                                                          const TopicPositions& from);
  // The records that arrived, in order within each partition; waits up to `wait` for the first.
  // A record that is not a TaskLogRecord is skipped with a warning (its position still moves).
  virtual Result<std::vector<events::TaskLogRecord>> Next(size_t max_records,
                                                          std::chrono::milliseconds wait) = 0;
  // Where reading stands: past every record Next returned or skipped.
  virtual const TopicPositions& positions() const = 0;
  // True once every partition was read up to its end as of Open.
  virtual bool ReachedEndsAtOpen() const = 0;
  // Records a position in `from` pointed at that retention had deleted before they were read:
  // per partition, how many.
  virtual const std::map<int32_t, int64_t>& skipped() const = 0;
};

}  // namespace cairn
