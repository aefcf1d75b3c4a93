// Named places where a test may have the process killed (SIGKILL, as kill -9 would) to prove
// that a crash there loses nothing: the process dies at the point only when the environment
// variable CAIRN_CRASH_AT names it. Costs one getenv when reached; never set in production.
#pragma once

namespace cairn {

// Kills the process with SIGKILL when CAIRN_CRASH_AT equals `name`, after a line on stderr
// naming the point (tests wait for the process to end, then look).
void CrashPoint(const char* name);

}  // namespace cairn
