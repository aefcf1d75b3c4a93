#include "base/memory.h"

#include <malloc.h>

#include <cstddef>

// jemalloc's control interface, present when the binary links jemalloc (cairn_use_jemalloc):
// weak, so binaries on glibc's malloc resolve it to null.
extern "C" int mallctl(const char* name, void* old_value, size_t* old_length, void* new_value,
                       size_t new_length) __attribute__((weak));

namespace cairn {

void KeepLargeAllocationsReturnable() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
}

void ReturnFreedMemory() {
  if (mallctl != nullptr) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge": every arena's unused dirty pages, now rather than
    // after jemalloc's decay time. malloc_trim would only walk glibc's (empty) heap.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
  malloc_trim(0);
}

}  // namespace cairn
