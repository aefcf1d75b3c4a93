// The embedded log's engine: the segments, the group commit (the caller at the queue's front
// writes every queued batch with one pwritev + fdatasync), recovery of a torn tail at open, and
// what readers wait on. embedded_log.cpp puts the EventLog and LogReader interfaces over it.
// Internal to events/embedded/.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "events/embedded/segment_file.h"
#include "events/event_log.h"

namespace cairn::embedded {

// One caller's batch on its way into the log. The caller serializes the records (header
// placeholders + payloads) and queues it; the group's leader (the caller at the queue's front)
// fills in offsets and CRCs, writes and syncs.
struct AppendRequest {
  std::string bytes;
  std::vector<size_t> record_starts;
  std::vector<uint32_t> payload_crcs;
  bool done = false;
  Status status;
  OffsetRange range;
};

// The state the log and its readers share. Readers hold it by shared_ptr so they may outlive the
// EventLog object.
class LogCore {
 public:
  LogCore(std::string dir, EmbeddedLogOptions options) : dir_(std::move(dir)), options_(options) {}

  Status Open();
  // Refuses further appends, waits until the queued ones are committed, and releases the LOCK.
  void Close();

  Result<OffsetRange> Append(const std::vector<Envelope>& batch);
  Result<uint64_t> EndOffset();
  Result<uint64_t> CheckReaderStart(uint64_t from);

  // The offset one past the last event a reader may return, waiting until it exceeds `position`
  // or until `deadline`.
  Result<uint64_t> WaitBeyond(uint64_t position, std::chrono::steady_clock::time_point deadline);

  struct SegmentView {
    size_t index = 0;
    std::string path;
    uint64_t end_offset = 0;
    uint64_t bytes = 0;
    IndexEntry hint{0, 0};  // a record at or before the located offset
  };
  // The segment holding `offset` (which must be below the end), with a sparse-index hint.
  Result<SegmentView> Locate(uint64_t offset);
  // The durable end of segment `index` now.
  void Bounds(size_t index, uint64_t* end_offset, uint64_t* bytes);

  const std::string& dir() const { return dir_; }
  bool read_only() const { return options_.read_only; }

 private:
  Status AcquireLock();
  Status LoadSegments();
  Status RecoverTail(int fd, Segment* segment, bool is_last);
  Result<Segment> CreateSegment(uint64_t base_offset);
  Status RefreshLocked();
  // Called by the queue's front with the lock held; writes and syncs the group it leads, wakes
  // its callers and the next leader. Returns with the lock released.
  void CommitGroup(std::unique_lock<std::mutex>& lock);
  Status RollIfFull(const std::vector<AppendRequest*>& group);
  Status WriteGroup(const std::vector<AppendRequest*>& group, std::vector<IndexEntry>* new_index);

  const std::string dir_;
  const EmbeddedLogOptions options_;
  Fd lock_fd_;

  std::mutex mutex_;
  std::condition_variable committed_;  // appending callers wait: done, or at the queue's front
  std::condition_variable appended_;   // readers wait: the durable end moved
  std::vector<Segment> segments_;
  uint64_t end_offset_ = 0;            // durable end (read-only: the end seen in the files)
  std::vector<AppendRequest*> queue_;  // the front one leads the next commit group
  Status failure_;  // set once a write or sync failed; every later append gets it
  bool stopping_ = false;

  // Read-only: the last segment, kept open to follow the writer.
  Fd tail_fd_;

  // Owned by the commit group's leader (read-write only).
  Fd active_fd_;
  uint64_t active_bytes_ = 0;
  uint64_t next_offset_ = 0;
  uint64_t last_index_position_ = 0;
  bool active_has_index_ = false;
};

}  // namespace cairn::embedded
