#include "base/memory.h"

#include <malloc.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>

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

bool EndHugePages() { return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0; }

ScopedHugePagesOff::ScopedHugePagesOff() {
  // PR_GET_THP_DISABLE: 1 when they are already off (EndHugePages, or an outer scope).
  restore_ = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 0 && EndHugePages();
}

ScopedHugePagesOff::~ScopedHugePagesOff() {
  if (restore_) prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
}

ProcessMemory MeasureProcessMemory() {
  ProcessMemory memory;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    unsigned long long size = 0, resident = 0;
    if (std::fscanf(statm, "%llu %llu", &size, &resident) == 2) {
      memory.resident_bytes = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    }
    std::fclose(statm);
  }
  if (mallctl != nullptr) {
    // jemalloc's statistics are refreshed when "epoch" is written.
    uint64_t epoch = 1;
    size_t length = sizeof(epoch);
    mallctl("epoch", &epoch, &length, &epoch, length);
    size_t value = 0;
    length = sizeof(value);
    if (mallctl("stats.allocated", &value, &length, nullptr, 0) == 0) {
      memory.heap_allocated_bytes = value;
    }
    length = sizeof(value);
    if (mallctl("stats.resident", &value, &length, nullptr, 0) == 0) {
      memory.heap_resident_bytes = value;
    }
  }
  return memory;
}

}  // namespace cairn
