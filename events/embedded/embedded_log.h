// The embedded event log: a durable, segmented, append-only file log on local disk. The on-disk
// format and its crash guarantees are written down in events/embedded/LOG_FORMAT.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "events/event_log.h"

namespace cairn {

// The largest serialized envelope the embedded log accepts; a bigger one fails the append with
// ResourceExhausted (and a record header claiming more is treated as damage).
inline constexpr uint32_t kEmbeddedLogMaxEventBytes = 16u << 20;

struct EmbeddedLogOptions {
  // Open for reading only: no LOCK is taken, nothing is created or cut, and readers follow the
  // files as another process appends to them.
  bool read_only = false;
  // A new segment starts when the next commit group would push the current one past this size.
  // One commit group never spans two segments, so a segment can exceed it by one group.
  uint64_t segment_bytes = 64ull << 20;
  // How often a read-only log re-reads the files while a reader waits for new events.
  std::chrono::milliseconds poll_interval{20};
};

// Opens the log in `dir` (created when missing unless read_only). On open, a torn or corrupt tail
// is detected and cut (read-write) or ignored (read-only); it is never served. A read-only log
// sees events appended later by the writing process as they become durable.
//
// Errors: FailedPrecondition when another read-write open holds the directory; NotFound when a
// read-only open finds no directory; Corruption when a record other than the tail of the last
// segment is damaged or a segment is missing; IOError when the OS refuses.
//
// The returned log is thread-safe. Its readers may outlive it (they keep reading what is durable).
Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string& dir,
                                                  const EmbeddedLogOptions& options);
Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string& dir, bool read_only);

}  // namespace cairn
