#include "base/log.h"

#include <errno.h>
#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "base/clock.h"

namespace cairn::log {
namespace {

spdlog::level::level_enum ToSpdlog(Level level) {
  switch (level) {
    case Level::kTrace:
      return spdlog::level::trace;
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

// %L is spdlog's one-letter level; the time is UTC whatever the machine's zone.
std::unique_ptr<spdlog::formatter> LineFormatter(std::string_view process_name) {
  std::string pattern = "%Y-%m-%dT%H:%M:%S.%fZ %L ";
  for (char c : process_name) pattern += c == '%' ? std::string("%%") : std::string(1, c);
  pattern += " %v";
  return std::make_unique<spdlog::pattern_formatter>(pattern, spdlog::pattern_time_type::utc);
}

spdlog::logger& Logger() {
  // Never destroyed: threads that outlive main() (a detached reader, a static's destructor) may
  // still log while the process exits.
  static spdlog::logger* const logger = [] {
    auto* created = new spdlog::logger("cairn", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_formatter(LineFormatter(program_invocation_short_name));
    created->set_level(spdlog::level::info);
    return created;
  }();
  return *logger;
}

struct RecentLog {
  std::mutex mutex;
  std::condition_variable added;
  std::deque<RecentLine> lines;
  int64_t last_id = 0;
};

RecentLog& Recent() {
  static RecentLog* const recent = new RecentLog;  // never destroyed, as the logger
  return *recent;
}

void Remember(Level level, std::string text) {
  RecentLog& recent = Recent();
  {
    std::lock_guard lock(recent.mutex);
    recent.lines.push_back({++recent.last_id, NowUnixMicros(), level, std::move(text)});
    if (recent.lines.size() > kRecentLines) recent.lines.pop_front();
  }
  recent.added.notify_all();
}

}  // namespace

std::vector<RecentLine> RecentLines(int64_t after_id, size_t limit) {
  RecentLog& recent = Recent();
  std::lock_guard lock(recent.mutex);
  std::vector<RecentLine> out;
  if (recent.lines.empty()) return out;
  // Ids are consecutive, so the first line after `after_id` is found by arithmetic.
  const int64_t first = recent.lines.front().id;
  size_t start = after_id < first ? 0 : static_cast<size_t>(after_id - first + 1);
  for (size_t i = start; i < recent.lines.size() && out.size() < limit; ++i) {
    out.push_back(recent.lines[i]);
  }
  return out;
}

int64_t LastLineId() {
  RecentLog& recent = Recent();
  std::lock_guard lock(recent.mutex);
  return recent.last_id;
}

bool WaitForLineAfter(int64_t after_id, std::chrono::milliseconds timeout) {
  RecentLog& recent = Recent();
  std::unique_lock lock(recent.mutex);
  return recent.added.wait_for(lock, timeout, [&] { return recent.last_id > after_id; });
}

const std::vector<std::string>& LevelNames() {
  static const std::vector<std::string> kNames = {"trace", "debug", "info", "warn", "error", "off"};
  return kNames;
}

Result<Level> ParseLevel(std::string_view name) {
  const auto& names = LevelNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Level>(i);
  }
  return Status::InvalidArgument("log level '" + std::string(name) +
                                 "' is not one of trace, debug, info, warn, error, off");
}

void Init(std::string_view process_name, Level level) {
  Logger().set_formatter(LineFormatter(process_name));
  Logger().set_level(ToSpdlog(level));
}

void SetLevel(Level level) { Logger().set_level(ToSpdlog(level)); }

namespace internal {

bool Enabled(Level level) { return Logger().should_log(ToSpdlog(level)); }

void Write(Level level, std::string_view component, std::string_view message) {
  std::string text = fmt::format("{}: {}", component, message);
  Logger().log(ToSpdlog(level), "{}", text);
  Remember(level, std::move(text));
}

}  // namespace internal
}  // namespace cairn::log
