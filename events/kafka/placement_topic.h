// Placement orders on Kafka: "<prefix>.placements", keyed by agent id. The master's relay copies
// every placement event (AllocationAssigned, KillRequested) from the event log to this topic;
// each agent consumes the orders keyed by its own id. Delivery is at least once: agents drop
// orders they have already acted on (by allocation id) and orders for other incarnations.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "events/event_log.h"

namespace cairn {

std::string PlacementTopicName(const std::string& topic_prefix);

// The partition count the relay gives the placements topic when it has to create it.
inline constexpr int kDefaultPlacementPartitions = 4;

// Agent side. Not thread-safe: one thread polls.
class PlacementConsumer {
 public:
  virtual ~PlacementConsumer() = default;
  // Opens a consumer (group "cairn-agent-<agent_id>", from the earliest retained order when
  // the group has no committed offset) that returns only orders keyed by `agent_id`. The topic
  // must exist (NotFound otherwise). Joining the group takes a few seconds, so the first Poll
  // calls may return nothing.
  static Result<std::unique_ptr<PlacementConsumer>> Open(const std::string& brokers,
                                                         const std::string& topic_prefix,
                                                         const std::string& agent_id);
  // Orders that arrived, in order (envelopes with their event-log offsets); waits up to `wait`.
  // Orders are in event-log order: all of one agent's orders share a key, hence a partition.
  virtual Result<std::vector<Envelope>> Poll(std::chrono::milliseconds wait) = 0;
  // Commits the position after everything Poll returned so far.
  virtual Status Commit() = 0;
};

// Master side: a background thread that tails `log` from the offset stored in `offset_file`
// and publishes placement events to the placements topic, storing its progress after each
// delivered batch (write to a temp file, fsync, rename). Placement events whose writer_epoch is
// older than the newest WriterEpochClaimed seen are skipped (read-side fencing, as projections
// do); the file holds "<offset> <newest epoch>" (a file holding only an offset is still read:
// the epoch is then recovered from the log).
class PlacementRelay {
 public:
  virtual ~PlacementRelay() = default;
  // Creates the topic (kDefaultPlacementPartitions) when it is missing and the cluster allows.
  // A missing offset file means "from offset 0"; an unreadable one is an error.
  static Result<std::unique_ptr<PlacementRelay>> Start(EventLog* log, const std::string& brokers,
                                                       const std::string& topic_prefix,
                                                       const std::string& offset_file);
  // The event-log offset below which every placement has been delivered to Kafka.
  virtual uint64_t delivered_offset() const = 0;
  // Waits until delivered_offset() >= `offset`; false when `timeout` passes first.
  virtual bool WaitDelivered(uint64_t offset, std::chrono::milliseconds timeout) = 0;
  // OK, or the last failure (reading the log, publishing, storing the offset) when the relay
  // has not made progress since; the relay retries on its own.
  virtual Status last_status() const = 0;
  virtual void Stop() = 0;
};

}  // namespace cairn
