// The one interface to Cairn's totally ordered event log, with two backends: embedded (a durable
// segmented file log on local disk, the default) and Kafka. Everything else in Cairn reads and
// writes the log only through this header.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"

namespace cairn {

using events::Envelope;

// Offsets [first, last] of an appended batch (inclusive).
struct OffsetRange {
  uint64_t first = 0;
  uint64_t last = 0;
};

// Reads the log in order from a starting offset. One reader belongs to one thread.
class LogReader {
 public:
  virtual ~LogReader() = default;

  // Returns the next events in offset order (each with `offset` set), at most `max_events`.
  // When none is available it waits up to `wait` for an append; an empty vector means nothing
  // arrived in time (not an error). Never returns a torn or unacknowledged event.
  virtual Result<std::vector<Envelope>> Next(size_t max_events, std::chrono::milliseconds wait) = 0;

  // The offset of the next event Next() will return.
  virtual uint64_t position() const = 0;
};

// Thread-safe. One master process appends; any number of readers read.
class EventLog {
 public:
  virtual ~EventLog() = default;

  // Appends `batch` in order and returns once every event is durable (embedded: fsync'd;
  // Kafka: acknowledged by all in-sync replicas). The log assigns offsets; the `offset` field of
  // the input is ignored. Concurrent appends are group-committed. On error, a prefix of the batch
  // may have been written: callers re-read from EndOffset() to learn what landed.
  virtual Result<OffsetRange> Append(const std::vector<Envelope>& batch) = 0;

  // The offset the next appended event will get (= the number of events, offsets start at 0).
  virtual Result<uint64_t> EndOffset() = 0;

  // A reader positioned at `from` (may equal EndOffset(), to tail new events).
  virtual Result<std::unique_ptr<LogReader>> OpenReader(uint64_t from) = 0;

  // Human-readable description, e.g. "embedded:/var/cairn/log".
  virtual std::string Describe() const = 0;
};

struct LogConfig {
  std::string backend = "embedded";  // "embedded" | "kafka"
  std::string data_dir;              // embedded: the log lives in <data_dir>/log
  std::string brokers;               // kafka: bootstrap servers
  std::string topic_prefix = "cairn";
  bool read_only = false;  // open for reading only (replay tools beside a live master)
};

// Opens (creating when needed and not read-only) the log the config names.
Result<std::unique_ptr<EventLog>> OpenEventLog(const LogConfig& config);

}  // namespace cairn
