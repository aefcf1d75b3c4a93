// Time at the edges: the wall clock and RFC 3339 text. Deciders and projectors never call
// NowUnixMicros(); they read time from events (the writer's clock, recorded once).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace cairn {

// Wall clock in microseconds since the epoch. Only edges (api/, agent/, master/) may call it.
int64_t NowUnixMicros();

// RFC 3339 with microseconds and a Z, e.g. "2025-03-20T12:00:00.000000Z".
std::string FormatRfc3339(int64_t unix_micros);

// The wall clock's second in UTC as strftime's `format` writes it (an HTTP date, AWS's
// "20130524T000000Z"); at most 63 bytes.
std::string NowUtcFormatted(const char* format);

// Parses a Go duration ("48h", "1h30m", "1.5s", "-2m", "0"; units ns, us, ms, s, m, h), as
// Determined's API takes lifespans and durations, into microseconds (nanoseconds rounded toward
// zero). InvalidArgument for anything else, or beyond about 290 years.
Result<int64_t> ParseGoDuration(const std::string& text);

// Parses RFC 3339 ("...Z" or "+00:00", optional fraction) or a plain integer of unix seconds.
Result<int64_t> ParseTimeToUnixMicros(const std::string& text);

}  // namespace cairn
