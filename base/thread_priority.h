// Background threads take the cores' idle time: niced, so that the threads a request waits for
// (connections, the writer, the projections) run first, and named, so top -H and perf show them.
#pragma once

namespace cairn {

// The nice value of work nobody waits for: publishing snapshots, compactions (RocksDB's own pool).
inline constexpr int kBackgroundNice = 19;

// Sets the calling thread's nice value; on Linux it is the thread's own, not the process's. Best
// effort: a refusal (raising priority without the right) leaves it as it was.
void SetThisThreadNice(int nice);

// Names the calling thread; the kernel keeps the first 15 bytes.
void NameThisThread(const char* name);

// The names of the master's threads (top -H, perf, and bench_scheduling's CPU split by thread).
// The threads a request waits for:
inline constexpr char kHttpThreadName[] = "cairn-http";            // one per connection
inline constexpr char kDeciderThreadName[] = "cairn-decider";      // the single writer
inline constexpr char kProjectorThreadName[] = "cairn-projector";  // the projections' follower
// Background work, niced:
inline constexpr char kSnapshotThreadName[] = "cairn-snapshots";  // publishes projection snapshots
inline constexpr char kWriteSideSnapshotThreadName[] = "cairn-ws-snaps";

}  // namespace cairn
