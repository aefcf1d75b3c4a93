// The master's heap after a large request: glibc keeps freed memory in its arenas, so one 100 MB
// upload or a burst of load would leave the process at its peak for good. These calls make large
// buffers their own mappings (freed at once) and give the rest back when a large request is done.
#pragma once

#include <cstddef>
#include <cstdint>

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

// Ends transparent huge pages for the rest of the process's life (prctl PR_SET_THP_DISABLE);
// pages already huge stay until they are freed. A master calls it first thing: a server's heap is
// mostly long-lived small objects, and a 2 MiB page held for a few of them costs more memory than
// the TLB misses cost time. It once kept them through its startup fold; they no longer made that
// faster, and zeroing each on first touch slowed restarts (docs/benchmarks.md, "Memory allocator
// and huge pages"). Returns false where the kernel refuses.
bool EndHugePages();

// Transparent huge pages off for the object's lifetime, then as they were: process-wide, so only
// for work that has the process to itself. For a bulk rebuild of the projections (`cairn replay
// rebuild`): its tables and batches are touched once and freed, and zeroing each 2 MiB page on
// first touch cost more than the TLB misses saved (docs/benchmarks.md, "Memory allocator and
// huge pages").
class ScopedHugePagesOff {
 public:
  ScopedHugePagesOff();
  ~ScopedHugePagesOff();
  ScopedHugePagesOff(const ScopedHugePagesOff&) = delete;
  ScopedHugePagesOff& operator=(const ScopedHugePagesOff&) = delete;

 private:
  bool restore_ = false;  // they were on, and this turned them off
};

// Where the process's memory is, for GET /metrics and the benchmarks. Zero where unknown.
struct ProcessMemory {
  uint64_t resident_bytes = 0;  // the kernel's count: /proc/self/statm
  // jemalloc's own counts when the process runs on it: bytes handed out to the program, and the
  // pages it holds (handed out, cached for reuse, its metadata). Zero on glibc's malloc.
  uint64_t heap_allocated_bytes = 0;
  uint64_t heap_resident_bytes = 0;
};
ProcessMemory MeasureProcessMemory();

}  // namespace cairn
