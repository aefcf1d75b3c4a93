// The master's heap after a large request: glibc keeps freed memory in its arenas, so one 100 MB
// upload or a burst of load would leave the process at its peak for good. These calls make large
// buffers their own mappings (freed at once) and give the rest back when a large request is done.
#pragma once

#include <cstddef>

namespace cairn {

// A request body at least this large is followed by ReturnFreedMemory().
inline constexpr size_t kLargeRequestBytes = size_t{1} << 20;

// Called once at process start: allocations of 1 MiB and more are mmap'd (so freeing them unmaps
// them) and free heap tops above 8 MiB are trimmed. Without it glibc raises its mmap threshold
// after the first large free, and later large buffers stay in the heap.
void KeepLargeAllocationsReturnable();

// Returns free heap pages to the kernel: jemalloc's arenas purged when the process runs on
// jemalloc, else malloc_trim. Costs a walk of the arenas: call it after rare large work, not per
// request.
void ReturnFreedMemory();

}  // namespace cairn
