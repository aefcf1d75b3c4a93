#include "base/memory.h"

#include <malloc.h>

namespace cairn {

void KeepLargeAllocationsReturnable() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
}

void ReturnFreedMemory() { malloc_trim(0); }

}  // namespace cairn
