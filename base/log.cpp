#include "base/log.h"

#include <errno.h>
#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <memory>

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

}  // namespace

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

namespace internal {

bool Enabled(Level level) { return Logger().should_log(ToSpdlog(level)); }

void Write(Level level, std::string_view component, std::string_view message) {
  Logger().log(ToSpdlog(level), "{}: {}", component, message);
}

}  // namespace internal
}  // namespace cairn::log
