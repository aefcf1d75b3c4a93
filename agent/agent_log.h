// The agent's own diagnostics: one line per message on stderr, with a UTC timestamp. stdout is
// kept for the single "registered" line that scripts wait for.
#pragma once

#include <string_view>

namespace cairn::agent {

// Thread-safe: lines from different threads never interleave.
void LogInfo(std::string_view message);
void LogWarning(std::string_view message);
void LogError(std::string_view message);

}  // namespace cairn::agent
