// The embedded event log: a durable, segmented, append-only file log on local disk. The on-disk
// format and its crash guarantees are written down in events/embedded/LOG_FORMAT.md.
#pragma once

#include <memory>
#include <string>

#include "events/event_log.h"

namespace cairn {

// Opens the log in `dir` (created when missing unless read_only). On open, a torn or corrupt tail
// is detected and cut (read-write) or ignored (read-only); it is never served. A read-only log
// sees events appended later by the writing process as they become durable.
Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string& dir, bool read_only);

}  // namespace cairn
