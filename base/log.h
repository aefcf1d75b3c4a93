// Diagnostics of every Cairn process, in one line format on stderr (spdlog underneath):
//
//   2026-11-24T10:00:00.123456Z I cairn-master decision_loop: append failed (...)
//
// UTC time with microseconds, the level's letter (T D I W E), the process, the component that
// speaks, and the message. stdout is left to each program's output (protocol lines that scripts
// and tests wait for, tables, replay output). Never log a secret (a token, a password, a key).
//
//   log::Warn("decision_loop", "append failed ({}); reloading state from the log", reason);
//
// The format string is checked at compile time (fmt). Thread-safe: lines from different threads
// never interleave. Before Init(), lines carry the executable's name and the level is info.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace cairn::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// The names --log-level takes, lowest level first: trace debug info warn error off.
const std::vector<std::string>& LevelNames();
// One of LevelNames(), or InvalidArgument.
Result<Level> ParseLevel(std::string_view name);

// Names the process in every line and sets the lowest level written. Call it once at startup,
// before other threads log.
void Init(std::string_view process_name, Level level);
// Changes the lowest level written, from now on (safe while other threads log).
void SetLevel(Level level);

// The process's most recent lines, kept in memory (the last kRecentLines), for the master's
// `GET /api/v1/master/logs` (det master logs). Ids count every line written since the process
// started, from 1.
struct RecentLine {
  int64_t id = 0;
  int64_t time_unix_micros = 0;
  Level level = Level::kInfo;
  std::string text;  // "component: message"
};
inline constexpr size_t kRecentLines = 10000;
// Up to `limit` kept lines with ids above `after_id`, oldest first.
std::vector<RecentLine> RecentLines(int64_t after_id, size_t limit);
// The id of the newest line written (0 before any).
int64_t LastLineId();
// Waits until a line newer than `after_id` is written or `timeout` passes; whether one was.
bool WaitForLineAfter(int64_t after_id, std::chrono::milliseconds timeout);

namespace internal {
bool Enabled(Level level);
void Write(Level level, std::string_view component, std::string_view message);
}  // namespace internal

template <typename... Args>
void Trace(std::string_view component, fmt::format_string<Args...> format, Args&&... args) {
  if (!internal::Enabled(Level::kTrace)) return;
  internal::Write(Level::kTrace, component, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void Debug(std::string_view component, fmt::format_string<Args...> format, Args&&... args) {
  if (!internal::Enabled(Level::kDebug)) return;
  internal::Write(Level::kDebug, component, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void Info(std::string_view component, fmt::format_string<Args...> format, Args&&... args) {
  if (!internal::Enabled(Level::kInfo)) return;
  internal::Write(Level::kInfo, component, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void Warn(std::string_view component, fmt::format_string<Args...> format, Args&&... args) {
  if (!internal::Enabled(Level::kWarn)) return;
  internal::Write(Level::kWarn, component, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void Error(std::string_view component, fmt::format_string<Args...> format, Args&&... args) {
  if (!internal::Enabled(Level::kError)) return;
  internal::Write(Level::kError, component, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cairn::log

// "{}" of a Status is its ToString(): "Unavailable: broker down".
template <>
struct fmt::formatter<cairn::Status> : fmt::formatter<std::string_view> {
  auto format(const cairn::Status& status, fmt::format_context& context) const {
    return fmt::formatter<std::string_view>::format(status.ToString(), context);
  }
};
