#include "agent/agent_log.h"

#include <cstdio>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "events/envelope_util.h"

namespace cairn::agent {
namespace {

void Write(std::string_view level, std::string_view message) {
  static std::mutex mutex;
  std::string line = FormatRfc3339(NowUnixMicros());
  line += " cairn-agent ";
  line += level;
  line += ": ";
  line += message;
  line += '\n';
  std::lock_guard lock(mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void LogInfo(std::string_view message) { Write("info", message); }
void LogWarning(std::string_view message) { Write("warning", message); }
void LogError(std::string_view message) { Write("error", message); }

}  // namespace cairn::agent
