#include "base/crash_points.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cairn {

void CrashPoint(const char* name) {
  const char* wanted = std::getenv("CAIRN_CRASH_AT");
  if (wanted == nullptr || std::strcmp(wanted, name) != 0) return;
  std::fprintf(stderr, "crash point %s reached: killing this process (SIGKILL)\n", name);
  std::fflush(stderr);
  kill(getpid(), SIGKILL);
}

}  // namespace cairn
