// `cairn replay`: operator tools over the event log — dump events, rebuild projections, digest
// the live projections, and show the cluster state as of an offset or a time.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cairn::replay {

// Runs `cairn replay ARGS...` (args start with the subcommand). Returns the exit code:
// 0 done, 1 the work failed (message on `err`), 2 bad usage (message and usage on `err`).
int RunReplay(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The help text of `cairn replay`.
const std::string& ReplayUsage();

}  // namespace cairn::replay
