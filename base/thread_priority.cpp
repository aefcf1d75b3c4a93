#include "base/thread_priority.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

namespace cairn {

void SetThisThreadNice(int nice) {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice);
}

void NameThisThread(const char* name) { ::pthread_setname_np(::pthread_self(), name); }

}  // namespace cairn
