#include "events/embedded/log_core.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/files.h"
#include "base/log.h"

namespace cairn::embedded {

Status LogCore::Open() {
  std::error_code error;
  if (options_.read_only) {
    if (!std::filesystem::is_directory(dir_, error)) {
      return Status::NotFound("embedded log: no log directory " + dir_);
    }
  } else {
    bool existed = std::filesystem::is_directory(dir_, error);
    if (!existed) {
      // The levels that do not exist yet, deepest first: each new entry must reach its parent.
      std::vector<std::filesystem::path> created;
      std::filesystem::path level = std::filesystem::path(dir_).lexically_normal();
      if (!level.has_filename()) level = level.parent_path();  // a trailing '/'
      while (!level.empty() && level.has_filename() && !std::filesystem::exists(level, error)) {
        created.push_back(level);
        level = level.parent_path();
      }
      std::filesystem::create_directories(dir_, error);
      if (error) {
        return Status::IOError("embedded log: cannot create " + dir_ + ": " + error.message());
      }
      for (const std::filesystem::path& made : created) {
        std::filesystem::path parent = made.parent_path();
        CAIRN_RETURN_IF_ERROR(SyncDirectory(parent.empty() ? "." : parent.string()));
      }
    }
    CAIRN_RETURN_IF_ERROR(AcquireLock());
  }
  CAIRN_RETURN_IF_ERROR(LoadSegments());
  return Status::Ok();
}

Status LogCore::AcquireLock() {
  std::string path = dir_ + "/" + kLockFileName;
  CAIRN_ASSIGN_OR_RETURN(Fd fd, OpenFile(path, O_RDWR | O_CREAT, 0644));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return ErrnoStatus("flock", path);
    char holder[32] = {};
    ssize_t n = ::pread(fd.get(), holder, sizeof holder - 1, 0);
    std::string pid = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "unknown";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return Status::FailedPrecondition("embedded log " + dir_ +
                                      " is already open for writing (LOCK held by pid " + pid +
                                      "); open it read-only to read beside the writer");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) != 0 ||
      ::pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return ErrnoStatus("write", path);
  }
  lock_fd_ = std::move(fd);
  return Status::Ok();
}

Status LogCore::LoadSegments() {
  std::vector<uint64_t> bases;
  {
    DIR* listing = ::opendir(dir_.c_str());
    if (listing == nullptr) return ErrnoStatus("list", dir_);
    while (dirent* entry = ::readdir(listing)) {
      if (auto base = ParseSegmentFileName(entry->d_name)) bases.push_back(*base);
    }
    ::closedir(listing);
  }
  std::sort(bases.begin(), bases.end());

  if (bases.empty()) {
    if (options_.read_only) return Status::Ok();  // the writer has not created segment 0 yet
    CAIRN_ASSIGN_OR_RETURN(Segment first, CreateSegment(0));
    segments_.push_back(std::move(first));
  }
  // Every segment is scanned (each record's CRC checked) before the log opens. The scans do not
  // depend on each other until their offsets are chained below, so they run side by side, one
  // thread a core: a long log's scan was a large part of a master's restart beyond its fold
  // (docs/benchmarks.md, "Event log").
  struct Scanned {
    Segment segment;
    Fd fd;
    Status status;
  };
  std::vector<Scanned> scanned(bases.size());
  std::atomic<size_t> next_scan{0};
  auto scan = [&] {
    for (size_t i = next_scan++; i < bases.size(); i = next_scan++) {
      Scanned& out = scanned[i];
      out.segment.base_offset = bases[i];
      out.segment.path = dir_ + "/" + SegmentFileName(bases[i]);
      out.segment.end_offset = bases[i];
      const bool is_last = i + 1 == bases.size();
      auto fd = OpenFile(out.segment.path, is_last && !options_.read_only ? O_RDWR : O_RDONLY);
      if (!fd.ok()) {
        out.status = fd.status();
        continue;
      }
      out.fd = std::move(fd).value();
      out.status = ScanForward(out.fd.get(), &out.segment);
      // The last segment's torn tail is cut below, once every segment before it checked out.
      if (is_last) continue;
      if (out.status.ok()) out.status = RecoverTail(out.fd.get(), &out.segment, false);
      out.fd.Reset();  // a sealed segment is reopened by its readers: a long log holds no fds
    }
  };
  const size_t threads =
      std::min<size_t>(bases.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> scanners;
  for (size_t t = 1; t < threads; ++t) scanners.emplace_back(scan);
  scan();
  for (auto& scanner : scanners) scanner.join();

  for (size_t i = 0; i < bases.size(); ++i) {
    Scanned& result = scanned[i];
    uint64_t expected = segments_.empty() ? 0 : segments_.back().end_offset;
    if (bases[i] != expected) {
      return Status::Corruption("embedded log " + dir_ + ": segment " + result.segment.path +
                                " starts at offset " + std::to_string(bases[i]) +
                                " but the log before it ends at " + std::to_string(expected) +
                                " (a segment is missing or damaged)");
    }
    CAIRN_RETURN_IF_ERROR(result.status);
    const bool is_last = i + 1 == bases.size();
    if (is_last) CAIRN_RETURN_IF_ERROR(RecoverTail(result.fd.get(), &result.segment, true));
    segments_.push_back(std::move(result.segment));
    if (is_last) {
      if (options_.read_only) {
        tail_fd_ = std::move(result.fd);
      } else {
        active_fd_ = std::move(result.fd);
      }
    }
  }
  if (segments_.empty()) return Status::Ok();  // read-only, before the writer's first segment
  const Segment& last = segments_.back();
  end_offset_ = last.end_offset;
  next_offset_ = last.end_offset;
  active_bytes_ = last.bytes;
  active_has_index_ = !last.index.empty();
  if (active_has_index_) last_index_position_ = last.index.back().position;
  return Status::Ok();
}

Status LogCore::RecoverTail(int fd, Segment* segment, bool is_last) {
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(uint64_t file_bytes, FileSize(fd, segment->path));
    if (file_bytes <= segment->bytes) return Status::Ok();
    std::string where = segment->path + " at byte " + std::to_string(segment->bytes) + " (offset " +
                        std::to_string(segment->end_offset) + ")";
    if (!is_last) {
      return Status::Corruption("embedded log: damaged record in sealed segment " + where);
    }
    CAIRN_ASSIGN_OR_RETURN(bool later, LaterCommitGroupFollows(fd, segment->path, segment->bytes,
                                                               file_bytes, segment->end_offset));
    if (later) {
      if (options_.read_only) {
        // A live writer may have completed the record since the first scan; look again.
        uint64_t before = segment->bytes;
        CAIRN_RETURN_IF_ERROR(ScanForward(fd, segment));
        if (segment->bytes > before) continue;
      }
      return Status::Corruption("embedded log: damaged record " + where +
                                " is followed by later commit groups (acknowledged data lost)");
    }
    uint64_t cut = file_bytes - segment->bytes;
    if (options_.read_only) {
      log::Warn("embedded_log", "read-only: ignoring {} bytes of incomplete or torn tail in {}",
                cut, where);
      return Status::Ok();
    }
    if (::ftruncate(fd, static_cast<off_t>(segment->bytes)) != 0) {
      return ErrnoStatus("truncate", segment->path);
    }
    if (::fsync(fd) != 0) return ErrnoStatus("fsync", segment->path);
    log::Warn("embedded_log", "cut {} bytes of torn tail in {}", cut, where);
    return Status::Ok();
  }
}

Result<Segment> LogCore::CreateSegment(uint64_t base_offset) {
  Segment segment;
  segment.base_offset = base_offset;
  segment.end_offset = base_offset;
  segment.path = dir_ + "/" + SegmentFileName(base_offset);
  CAIRN_ASSIGN_OR_RETURN(Fd fd, OpenFile(segment.path, O_RDWR | O_CREAT | O_EXCL, 0644));
  CAIRN_RETURN_IF_ERROR(SyncDirectory(dir_));
  active_fd_ = std::move(fd);
  active_bytes_ = 0;
  active_has_index_ = false;
  return segment;
}

void LogCore::Close() {
  {
    std::unique_lock lock(mutex_);
    stopping_ = true;
    // Batches already queued are still committed, by their own callers.
    committed_.wait(lock, [&] { return queue_.empty(); });
  }
  active_fd_.Reset();
  lock_fd_.Reset();
}

Result<OffsetRange> LogCore::Append(const std::vector<Envelope>& batch) {
  if (options_.read_only) {
    return Status::FailedPrecondition("embedded log " + dir_ + " is open read-only");
  }
  if (batch.empty()) return Status::InvalidArgument("append: empty batch");

  // The payload is the envelope with its offset cleared; copy only the events that carry one.
  std::vector<Envelope> cleared;  // reserved up front: `events` points into it
  cleared.reserve(static_cast<size_t>(std::count_if(
      batch.begin(), batch.end(), [](const Envelope& event) { return event.offset() != 0; })));
  std::vector<const Envelope*> events;
  events.reserve(batch.size());
  std::vector<size_t> sizes;
  sizes.reserve(batch.size());
  size_t total = 0;
  for (const Envelope& event : batch) {
    const Envelope* payload = &event;
    if (event.offset() != 0) {
      payload = &cleared.emplace_back(event);
      cleared.back().clear_offset();
    }
    size_t size = payload->ByteSizeLong();
    if (size > kEmbeddedLogMaxEventBytes) {
      return Status::ResourceExhausted("append: an event of " + std::to_string(size) +
                                       " bytes exceeds the limit of " +
                                       std::to_string(kEmbeddedLogMaxEventBytes));
    }
    events.push_back(payload);
    sizes.push_back(size);
    total += kHeaderBytes + size;
  }

  AppendRequest request;
  request.bytes.resize(total);
  request.record_starts.reserve(batch.size());
  request.payload_crcs.reserve(batch.size());
  size_t position = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    char* header = request.bytes.data() + position;
    char* payload = header + kHeaderBytes;
    events[i]->SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(payload));
    PutU32(header + 24, static_cast<uint32_t>(sizes[i]));
    PutU32(header + 28, 0);
    request.record_starts.push_back(position);
    request.payload_crcs.push_back(PayloadCrc(payload, sizes[i]));
    position += kHeaderBytes + sizes[i];
  }

  std::unique_lock lock(mutex_);
  if (!failure_.ok()) return failure_;
  if (stopping_) return Status::Unavailable("embedded log " + dir_ + " is closing");
  queue_.push_back(&request);
  // The caller at the queue's front commits its batch and every batch queued behind it; the
  // others wait for it. The master's one writer so commits on its own thread, with no hand-off
  // to an appender thread and back for each batch.
  committed_.wait(lock, [&] { return request.done || queue_.front() == &request; });
  if (!request.done) CommitGroup(lock);
  if (!request.status.ok()) return request.status;
  return request.range;
}

void LogCore::CommitGroup(std::unique_lock<std::mutex>& lock) {
  const auto take = static_cast<std::ptrdiff_t>(std::min(queue_.size(), kMaxBatchesPerGroup));
  // The group stays at the queue's front while it is written: no one else leads meanwhile.
  std::vector<AppendRequest*> group(queue_.begin(), queue_.begin() + take);
  Status status = failure_;
  lock.unlock();
  std::vector<IndexEntry> new_index;
  if (status.ok()) status = RollIfFull(group);
  if (status.ok()) status = WriteGroup(group, &new_index);
  lock.lock();
  if (status.ok()) {
    Segment& active = segments_.back();
    active.bytes = active_bytes_;
    active.end_offset = next_offset_;
    active.index.insert(active.index.end(), new_index.begin(), new_index.end());
    end_offset_ = next_offset_;
  } else if (failure_.ok()) {
    failure_ = status;
    log::Error("embedded_log", "{} refuses further appends: {}", dir_, status);
  }
  for (AppendRequest* request : group) {
    request->status = status;
    request->done = true;
  }
  queue_.erase(queue_.begin(), queue_.begin() + take);
  lock.unlock();
  // The group's callers, and the next front (the next group's leader).
  committed_.notify_all();
  if (status.ok()) appended_.notify_all();
}

// Starts a new segment when `group` would push the active one past the size limit; a group is
// never split across segments.
Status LogCore::RollIfFull(const std::vector<AppendRequest*>& group) {
  uint64_t group_bytes = 0;
  for (const AppendRequest* request : group) group_bytes += request->bytes.size();
  if (active_bytes_ == 0 || active_bytes_ + group_bytes <= options_.segment_bytes) {
    return Status::Ok();
  }
  CAIRN_ASSIGN_OR_RETURN(Segment segment, CreateSegment(next_offset_));
  std::lock_guard lock(mutex_);
  segments_.push_back(std::move(segment));
  return Status::Ok();
}

Status LogCore::WriteGroup(const std::vector<AppendRequest*>& group,
                           std::vector<IndexEntry>* new_index) {
  const uint64_t group_first = next_offset_;
  uint64_t offset = group_first;
  uint64_t position = active_bytes_;
  std::vector<iovec> iov;
  iov.reserve(group.size());
  for (AppendRequest* request : group) {
    request->range.first = offset;
    char* bytes = request->bytes.data();
    for (size_t i = 0; i < request->record_starts.size(); ++i) {
      char* header = bytes + request->record_starts[i];
      PutU32(header, kRecordMagic);
      PutU64(header + 8, offset);
      PutU64(header + 16, group_first);
      PutU32(header + 4, RecordCrc(request->payload_crcs[i], header));
      uint64_t record_position = position + request->record_starts[i];
      if (!active_has_index_ || record_position - last_index_position_ >= kIndexIntervalBytes) {
        new_index->push_back({offset, record_position});
        last_index_position_ = record_position;
        active_has_index_ = true;
      }
      ++offset;
    }
    request->range.last = offset - 1;
    position += request->bytes.size();
    iov.push_back({bytes, request->bytes.size()});
  }

  const std::string& path = segments_.back().path;  // only this thread changes segments_
  size_t next_iov = 0;
  uint64_t write_position = active_bytes_;
  while (next_iov < iov.size()) {
    int count = static_cast<int>(iov.size() - next_iov);
    ssize_t n = ::pwritev(active_fd_.get(), iov.data() + next_iov, count,
                          static_cast<off_t>(write_position));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("append: write", path);
    }
    if (n == 0) return Status::IOError("append: write " + path + " made no progress");
    write_position += static_cast<uint64_t>(n);
    size_t left = static_cast<size_t>(n);
    while (left > 0 && left >= iov[next_iov].iov_len) {
      left -= iov[next_iov].iov_len;
      ++next_iov;
    }
    if (left > 0) {
      iov[next_iov].iov_base = static_cast<char*>(iov[next_iov].iov_base) + left;
      iov[next_iov].iov_len -= left;
    }
  }
  int synced;
  do {
    synced = ::fdatasync(active_fd_.get());
  } while (synced != 0 && errno == EINTR);
  if (synced != 0) return ErrnoStatus("append: fdatasync", path);
  active_bytes_ = position;
  next_offset_ = offset;
  return Status::Ok();
}

Result<uint64_t> LogCore::EndOffset() {
  std::lock_guard lock(mutex_);
  if (options_.read_only) CAIRN_RETURN_IF_ERROR(RefreshLocked());
  return end_offset_;
}

Result<uint64_t> LogCore::CheckReaderStart(uint64_t from) {
  std::lock_guard lock(mutex_);
  if (options_.read_only && from > end_offset_) CAIRN_RETURN_IF_ERROR(RefreshLocked());
  if (from > end_offset_) {
    return Status::InvalidArgument("embedded log " + dir_ + ": cannot read from offset " +
                                   std::to_string(from) + ", the log ends at " +
                                   std::to_string(end_offset_));
  }
  return from;
}

Result<uint64_t> LogCore::WaitBeyond(uint64_t position,
                                     std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (!options_.read_only) {
    appended_.wait_until(lock, deadline, [&] { return end_offset_ > position; });
    return end_offset_;
  }
  while (true) {
    if (end_offset_ > position) return end_offset_;
    CAIRN_RETURN_IF_ERROR(RefreshLocked());
    if (end_offset_ > position) return end_offset_;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return end_offset_;
    // Another reader's refresh wakes this one early.
    appended_.wait_until(lock, std::min(deadline, now + options_.poll_interval));
  }
}

// Read-only: picks up what the writing process has appended since the last look. A record that is
// incomplete or does not check out yet is treated as not yet written.
Status LogCore::RefreshLocked() {
  uint64_t before = end_offset_;
  if (segments_.empty()) {
    std::string path = dir_ + "/" + SegmentFileName(0);
    if (::access(path.c_str(), F_OK) != 0) return Status::Ok();
    CAIRN_ASSIGN_OR_RETURN(tail_fd_, OpenFile(path, O_RDONLY));  // segments are never removed
    Segment first;
    first.path = path;
    segments_.push_back(std::move(first));
  }
  while (true) {
    Segment& last = segments_.back();
    CAIRN_RETURN_IF_ERROR(ScanForward(tail_fd_.get(), &last));
    if (last.end_offset == last.base_offset) break;  // the next segment cannot exist yet
    std::string next_path = dir_ + "/" + SegmentFileName(last.end_offset);
    if (::access(next_path.c_str(), F_OK) != 0) break;
    // The writer seals a segment before it creates the next one: read the rest of this one.
    CAIRN_RETURN_IF_ERROR(ScanForward(tail_fd_.get(), &last));
    CAIRN_ASSIGN_OR_RETURN(uint64_t file_bytes, FileSize(tail_fd_.get(), last.path));
    if (file_bytes != last.bytes) {
      return Status::Corruption("embedded log: damaged record in sealed segment " + last.path +
                                " at byte " + std::to_string(last.bytes));
    }
    CAIRN_ASSIGN_OR_RETURN(Fd fd, OpenFile(next_path, O_RDONLY));
    Segment next;
    next.base_offset = last.end_offset;
    next.end_offset = last.end_offset;
    next.path = next_path;
    segments_.push_back(std::move(next));
    tail_fd_ = std::move(fd);
  }
  end_offset_ = segments_.back().end_offset;
  if (end_offset_ != before) appended_.notify_all();
  return Status::Ok();
}

Result<LogCore::SegmentView> LogCore::Locate(uint64_t offset) {
  std::lock_guard lock(mutex_);
  auto after = std::upper_bound(
      segments_.begin(), segments_.end(), offset,
      [](uint64_t value, const Segment& segment) { return value < segment.base_offset; });
  if (after == segments_.begin() || offset >= end_offset_) {
    return Status::Internal("embedded log: offset " + std::to_string(offset) +
                            " is not in the log");
  }
  const Segment& segment = *(after - 1);
  SegmentView view;
  view.index = static_cast<size_t>(after - 1 - segments_.begin());
  view.path = segment.path;
  view.end_offset = segment.end_offset;
  view.bytes = segment.bytes;
  view.hint = {segment.base_offset, 0};
  auto entry = std::upper_bound(
      segment.index.begin(), segment.index.end(), offset,
      [](uint64_t value, const IndexEntry& index_entry) { return value < index_entry.offset; });
  if (entry != segment.index.begin()) view.hint = *(entry - 1);
  return view;
}

void LogCore::Bounds(size_t index, uint64_t* end_offset, uint64_t* bytes) {
  std::lock_guard lock(mutex_);
  *end_offset = segments_[index].end_offset;
  *bytes = segments_[index].bytes;
}

}  // namespace cairn::embedded
