// jemalloc's settings for the binaries linked with it (CMakeLists.txt, cairn_use_jemalloc): read
// by jemalloc at its first allocation, before main. MALLOC_CONF in the environment still applies
// over them.
//
// thp / metadata_thp: back its extents with transparent huge pages where the kernel offers them
// on request (Debian's default, "madvise"). A master folds and decodes hundreds of thousands of
// records at startup; on a VM each 4 KiB page fault is dear, and huge pages cut them 512-fold:
// ops/bench/bench_history.cpp measured the 1,000,000-event fold 30% faster with them. A master
// ends them once its fold is done (EndHugePages, base/memory.h): serving, they cost memory.
// background_thread: returns freed memory to the system off the request path.
extern "C" {
// NOLINTNEXTLINE: the name and type jemalloc looks up
const char* malloc_conf = "thp:always,metadata_thp:always,background_thread:true";
}
