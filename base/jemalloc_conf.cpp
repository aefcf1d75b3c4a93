// jemalloc's settings for the binaries linked with it (CMakeLists.txt, cairn_use_jemalloc): read
// by jemalloc at its first allocation, before main. MALLOC_CONF in the environment still applies
// over them.
//
// thp / metadata_thp: back its extents with transparent huge pages where the kernel offers them
// on request (Debian's default, "madvise"), for the tools' folds and decodes of long logs, which
// they once made faster (docs/benchmarks.md, "Memory allocator and huge pages"). A master ends
// them before it allocates (EndHugePages, base/memory.h), and a bulk rebuild while it runs
// (ScopedHugePagesOff): for both, zeroing each 2 MiB page on first touch cost more than the TLB
// misses it saved.
// background_thread: returns freed memory to the system off the request path.
extern "C" {
// NOLINTNEXTLINE: the name and type jemalloc looks up
const char* malloc_conf = "thp:always,metadata_thp:always,background_thread:true";
}
