// The embedded EventLog: segment files of CRC-checked records, one appender thread that group-
// commits every queued batch with one pwritev + fdatasync, and readers that only ever see records
// the log has made durable. Format and recovery rules: LOG_FORMAT.md in this folder.
#include "events/embedded/embedded_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
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

#include "base/log.h"

namespace cairn {
namespace {

// Record header, little-endian (LOG_FORMAT.md):
//   0 magic u32 | 4 crc u32 | 8 offset u64 | 16 group_first u64 | 24 length u32 | 28 reserved u32
constexpr uint32_t kRecordMagic = 0x4C4E5243;  // the bytes "CRNL"
constexpr size_t kHeaderBytes = 32;
constexpr size_t kCrcCoveredHeaderStart = 8;
// One sparse index entry per this many bytes of a segment (plus one for its first record), so a
// reader opened at any offset scans at most this much to find its record.
constexpr uint64_t kIndexIntervalBytes = 64 << 10;
// At most this many batches per commit group: one iovec each, and Linux's IOV_MAX is 1024.
constexpr size_t kMaxBatchesPerGroup = 1024;
constexpr size_t kScanChunkBytes = 1 << 20;
constexpr size_t kReadAheadBytes = 256 << 10;
constexpr char kLockFileName[] = "LOCK";

void PutU32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
void PutU64(char* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
uint32_t GetU32(const char* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}
uint64_t GetU64(const char* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}

uint32_t PayloadCrc(const char* payload, size_t length) {
  return static_cast<uint32_t>(
      crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(payload), length));
}
// The record CRC covers the payload and then header bytes [8, 32), so a writer can checksum the
// payload before it knows the record's offset.
uint32_t RecordCrc(uint32_t payload_crc, const char* header) {
  return static_cast<uint32_t>(
      crc32_z(payload_crc, reinterpret_cast<const Bytef*>(header + kCrcCoveredHeaderStart),
              kHeaderBytes - kCrcCoveredHeaderStart));
}

struct RecordHeader {
  uint32_t crc = 0;
  uint64_t offset = 0;
  uint64_t group_first = 0;
  uint32_t length = 0;
};

// Decodes the header at `data` (kHeaderBytes available); false when it cannot be a record header.
bool DecodeHeader(const char* data, RecordHeader* header) {
  if (GetU32(data) != kRecordMagic || GetU32(data + 28) != 0) return false;
  header->crc = GetU32(data + 4);
  header->offset = GetU64(data + 8);
  header->group_first = GetU64(data + 16);
  header->length = GetU32(data + 24);
  return header->length <= kEmbeddedLogMaxEventBytes && header->group_first <= header->offset;
}

// Whether the CRC of the record at `record` (header then payload, all present) matches.
bool CrcMatches(const char* record, const RecordHeader& header) {
  return RecordCrc(PayloadCrc(record + kHeaderBytes, header.length), record) == header.crc;
}

enum class RecordCheck { kValid, kIncomplete, kDamaged };

// Checks the record that starts at `data`, of which `available` bytes are at hand. kIncomplete
// means the bytes end inside the record; `header` is then decoded when the header itself is whole.
RecordCheck CheckRecord(const char* data, size_t available, RecordHeader* header) {
  if (available < kHeaderBytes) return RecordCheck::kIncomplete;
  if (!DecodeHeader(data, header)) return RecordCheck::kDamaged;
  if (available - kHeaderBytes < header->length) return RecordCheck::kIncomplete;
  return CrcMatches(data, *header) ? RecordCheck::kValid : RecordCheck::kDamaged;
}

std::string SegmentFileName(uint64_t base_offset) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.log", static_cast<unsigned long long>(base_offset));
  return name;
}

std::optional<uint64_t> ParseSegmentFileName(const std::string& name) {
  if (name.size() != 24 || name.compare(20, 4, ".log") != 0) return std::nullopt;
  uint64_t value = 0;
  for (int i = 0; i < 20; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(name[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

Status ErrnoStatus(const std::string& what, const std::string& path) {
  return Status::IOError(what + " " + path + ": " + std::strerror(errno));
}

// A file descriptor that closes itself.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Result<Fd> OpenFile(const std::string& path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus("open", path);
  return Fd(fd);
}

Status SyncDirectory(const std::string& dir) {
  CAIRN_ASSIGN_OR_RETURN(Fd fd, OpenFile(dir, O_RDONLY | O_DIRECTORY));
  if (::fsync(fd.get()) != 0) return ErrnoStatus("fsync directory", dir);
  return Status::Ok();
}

// Reads up to `length` bytes at `position`; fewer only at end of file.
Result<size_t> PreadFull(int fd, char* out, size_t length, uint64_t position,
                         const std::string& path) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, out + done, length - done, static_cast<off_t>(position + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

Result<uint64_t> FileSize(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus("stat", path);
  return static_cast<uint64_t>(st.st_size);
}

struct IndexEntry {
  uint64_t offset;
  uint64_t position;
};

// One segment file and what is known to be durable in it. Guarded by LogCore::mutex_ once the
// log is open.
struct Segment {
  uint64_t base_offset = 0;
  std::string path;
  uint64_t end_offset = 0;  // one past the last durable record
  uint64_t bytes = 0;       // end of the last durable record
  std::vector<IndexEntry> index;

  void NoteRecord(uint64_t offset, uint64_t position) {
    if (index.empty() || position - index.back().position >= kIndexIntervalBytes) {
      index.push_back({offset, position});
    }
  }
};

// Extends `segment` over every valid record that follows its known end in the file, in order and
// with the expected offsets. Stops silently at the first record that is incomplete or damaged:
// the caller decides what the bytes after segment->bytes mean.
Status ScanForward(int fd, Segment* segment) {
  CAIRN_ASSIGN_OR_RETURN(uint64_t file_bytes, FileSize(fd, segment->path));
  std::vector<char> buffer;
  size_t want = kScanChunkBytes;
  while (segment->bytes < file_bytes) {
    uint64_t chunk_start = segment->bytes;
    want = static_cast<size_t>(std::min<uint64_t>(want, file_bytes - chunk_start));
    buffer.resize(want);
    CAIRN_ASSIGN_OR_RETURN(size_t got,
                           PreadFull(fd, buffer.data(), want, chunk_start, segment->path));
    size_t used = 0;
    RecordCheck check = RecordCheck::kIncomplete;
    RecordHeader header;
    while (true) {
      check = CheckRecord(buffer.data() + used, got - used, &header);
      if (check != RecordCheck::kValid || header.offset != segment->end_offset) break;
      segment->NoteRecord(header.offset, chunk_start + used);
      used += kHeaderBytes + header.length;
      segment->end_offset += 1;
      segment->bytes = chunk_start + used;
    }
    if (used > 0) {
      want = kScanChunkBytes;
      continue;
    }
    // No whole record in the chunk: either one record is bigger than the chunk, or the bytes here
    // are incomplete or damaged.
    if (check == RecordCheck::kIncomplete && got == want && got >= kHeaderBytes &&
        chunk_start + kHeaderBytes + header.length <= file_bytes) {
      want = kHeaderBytes + header.length;
      continue;
    }
    break;
  }
  return Status::Ok();
}

// Whether the bytes in [from, file_bytes) hold an intact record written by a commit group that
// started after `expected_offset`. Such a group was only written after the group holding
// `expected_offset` had been fsync'd and acknowledged, so a damaged record at `from` is then
// lost acknowledged data, not a torn tail.
Result<bool> LaterCommitGroupFollows(int fd, const std::string& path, uint64_t from,
                                     uint64_t file_bytes, uint64_t expected_offset) {
  const char magic[4] = {'C', 'R', 'N', 'L'};
  std::vector<char> chunk(kScanChunkBytes);
  std::vector<char> record;
  uint64_t position = from + 1;
  while (position + kHeaderBytes <= file_bytes) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(chunk.size(), file_bytes - position));
    CAIRN_ASSIGN_OR_RETURN(size_t got, PreadFull(fd, chunk.data(), want, position, path));
    if (got < sizeof magic) break;
    size_t search = 0;
    while (true) {
      auto* hit = static_cast<const char*>(
          ::memmem(chunk.data() + search, got - search, magic, sizeof magic));
      if (hit == nullptr) break;
      uint64_t candidate = position + static_cast<uint64_t>(hit - chunk.data());
      search = static_cast<size_t>(hit - chunk.data()) + 1;
      char header_bytes[kHeaderBytes];
      CAIRN_ASSIGN_OR_RETURN(size_t header_got,
                             PreadFull(fd, header_bytes, kHeaderBytes, candidate, path));
      RecordHeader header;
      if (header_got < kHeaderBytes || !DecodeHeader(header_bytes, &header)) continue;
      record.resize(kHeaderBytes + header.length);
      CAIRN_ASSIGN_OR_RETURN(size_t record_got,
                             PreadFull(fd, record.data(), record.size(), candidate, path));
      if (CheckRecord(record.data(), record_got, &header) == RecordCheck::kValid &&
          header.group_first > expected_offset) {
        return true;
      }
    }
    // Step on, keeping the last bytes in case a magic straddles the chunk boundary.
    if (got <= sizeof magic) break;
    position += got - (sizeof magic - 1);
  }
  return false;
}

// One caller's batch on its way through the appender. The caller serializes the records (header
// placeholders + payloads) and waits; the appender fills in offsets and CRCs, writes and syncs.
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
  // Stops the appender after it has drained the queue, and releases the LOCK.
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
  void AppenderLoop();
  Status RollIfFull(const std::vector<AppendRequest*>& group);
  Status WriteGroup(const std::vector<AppendRequest*>& group, std::vector<IndexEntry>* new_index);

  const std::string dir_;
  const EmbeddedLogOptions options_;
  Fd lock_fd_;

  std::mutex mutex_;
  std::condition_variable queue_changed_;  // appender waits: new requests or stop
  std::condition_variable committed_;      // appending callers wait: their request is done
  std::condition_variable appended_;       // readers wait: the durable end moved
  std::vector<Segment> segments_;
  uint64_t end_offset_ = 0;  // durable end (read-only: the end seen in the files)
  std::vector<AppendRequest*> queue_;
  Status failure_;  // set once a write or sync failed; every later append gets it
  bool stopping_ = false;
  std::thread appender_;

  // Read-only: the last segment, kept open to follow the writer.
  Fd tail_fd_;

  // Owned by the appender thread (read-write only).
  Fd active_fd_;
  uint64_t active_bytes_ = 0;
  uint64_t next_offset_ = 0;
  uint64_t last_index_position_ = 0;
  bool active_has_index_ = false;
};

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
  if (!options_.read_only) appender_ = std::thread([this] { AppenderLoop(); });
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
  for (size_t i = 0; i < bases.size(); ++i) {
    Segment segment;
    segment.base_offset = bases[i];
    segment.path = dir_ + "/" + SegmentFileName(bases[i]);
    segment.end_offset = bases[i];
    uint64_t expected = segments_.empty() ? 0 : segments_.back().end_offset;
    if (bases[i] != expected) {
      return Status::Corruption("embedded log " + dir_ + ": segment " + segment.path +
                                " starts at offset " + std::to_string(bases[i]) +
                                " but the log before it ends at " + std::to_string(expected) +
                                " (a segment is missing or damaged)");
    }
    bool is_last = i + 1 == bases.size();
    int flags = is_last && !options_.read_only ? O_RDWR : O_RDONLY;
    CAIRN_ASSIGN_OR_RETURN(Fd fd, OpenFile(segment.path, flags));
    CAIRN_RETURN_IF_ERROR(ScanForward(fd.get(), &segment));
    CAIRN_RETURN_IF_ERROR(RecoverTail(fd.get(), &segment, is_last));
    segments_.push_back(std::move(segment));
    if (is_last) {
      if (options_.read_only) {
        tail_fd_ = std::move(fd);
      } else {
        active_fd_ = std::move(fd);
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
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  if (appender_.joinable()) appender_.join();
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
  queue_changed_.notify_one();
  committed_.wait(lock, [&] { return request.done; });
  if (!request.status.ok()) return request.status;
  return request.range;
}

void LogCore::AppenderLoop() {
  std::vector<AppendRequest*> group;
  std::vector<IndexEntry> new_index;
  while (true) {
    Status failure;
    {
      std::unique_lock lock(mutex_);
      queue_changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      size_t take = std::min(queue_.size(), kMaxBatchesPerGroup);
      group.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
      failure = failure_;
    }
    new_index.clear();
    Status status = failure;
    if (status.ok()) status = RollIfFull(group);
    if (status.ok()) status = WriteGroup(group, &new_index);
    {
      std::lock_guard lock(mutex_);
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
    }
    committed_.notify_all();
    if (status.ok()) appended_.notify_all();
  }
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

class EmbeddedLogReader : public LogReader {
 public:
  EmbeddedLogReader(std::shared_ptr<LogCore> core, uint64_t from)
      : core_(std::move(core)), position_(from) {}

  Result<std::vector<Envelope>> Next(size_t max_events, std::chrono::milliseconds wait) override {
    std::vector<Envelope> out;
    if (max_events == 0) return out;
    // Clamped so that a huge `wait` cannot overflow the clock.
    auto deadline = std::chrono::steady_clock::now() +
                    std::min<std::chrono::milliseconds>(wait, std::chrono::hours(24 * 365));
    CAIRN_ASSIGN_OR_RETURN(uint64_t end, core_->WaitBeyond(position_, deadline));
    if (end <= position_) return out;
    uint64_t target = position_ + std::min<uint64_t>(max_events, end - position_);
    out.reserve(static_cast<size_t>(std::min<uint64_t>(target - position_, 4096)));
    while (position_ < target) {
      CAIRN_RETURN_IF_ERROR(PlaceCursor());
      CAIRN_RETURN_IF_ERROR(ReadRecordAtCursor(&out));
    }
    return out;
  }

  uint64_t position() const override { return position_; }

 private:
  // Makes the cursor point at a durable record at or before position_, in the right segment.
  Status PlaceCursor() {
    if (positioned_ && cursor_offset_ < segment_end_offset_) return Status::Ok();
    if (positioned_) {
      core_->Bounds(segment_index_, &segment_end_offset_, &segment_bytes_);
      if (cursor_offset_ < segment_end_offset_) return Status::Ok();
    }
    CAIRN_ASSIGN_OR_RETURN(LogCore::SegmentView view, core_->Locate(position_));
    if (!positioned_ || view.index != segment_index_) {
      CAIRN_ASSIGN_OR_RETURN(fd_, OpenFile(view.path, O_RDONLY));
      path_ = view.path;
      segment_index_ = view.index;
      buffer_length_ = 0;
      cursor_offset_ = view.hint.offset;
      cursor_position_ = view.hint.position;
    }
    segment_end_offset_ = view.end_offset;
    segment_bytes_ = view.bytes;
    positioned_ = true;
    return Status::Ok();
  }

  // Makes [position, position + length) of the segment available in buffer_.
  Result<const char*> Buffered(uint64_t position, size_t length) {
    if (position + length > segment_bytes_) {
      return Status::Corruption("embedded log: record at " + path_ + " byte " +
                                std::to_string(position) + " runs past the durable end");
    }
    if (position >= buffer_position_ && position + length <= buffer_position_ + buffer_length_) {
      return buffer_.data() + (position - buffer_position_);
    }
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(std::max(length, kReadAheadBytes), segment_bytes_ - position));
    if (buffer_.size() < want) buffer_.resize(want);
    CAIRN_ASSIGN_OR_RETURN(size_t got, PreadFull(fd_.get(), buffer_.data(), want, position, path_));
    buffer_position_ = position;
    buffer_length_ = got;
    if (got < length) {
      return Status::Corruption("embedded log: " + path_ + " is shorter than its durable end");
    }
    return buffer_.data();
  }

  Status ReadRecordAtCursor(std::vector<Envelope>* out) {
    auto damaged = [&](const std::string& what) {
      return Status::Corruption("embedded log: record at " + path_ + " byte " +
                                std::to_string(cursor_position_) + " (offset " +
                                std::to_string(cursor_offset_) + "): " + what);
    };
    CAIRN_ASSIGN_OR_RETURN(const char* header_bytes, Buffered(cursor_position_, kHeaderBytes));
    RecordHeader header;
    if (!DecodeHeader(header_bytes, &header)) return damaged("bad header");
    CAIRN_ASSIGN_OR_RETURN(const char* record,
                           Buffered(cursor_position_, kHeaderBytes + header.length));
    if (!CrcMatches(record, header)) return damaged("checksum mismatch");
    if (header.offset != cursor_offset_) return damaged("unexpected offset");
    if (cursor_offset_ == position_) {
      Envelope& event = out->emplace_back();
      if (!event.ParseFromArray(record + kHeaderBytes, static_cast<int>(header.length))) {
        out->pop_back();
        return damaged("payload is not an Envelope");
      }
      event.set_offset(cursor_offset_);
      ++position_;
    }
    cursor_position_ += kHeaderBytes + header.length;
    ++cursor_offset_;
    return Status::Ok();
  }

  std::shared_ptr<LogCore> core_;
  uint64_t position_;

  bool positioned_ = false;
  size_t segment_index_ = 0;
  std::string path_;
  Fd fd_;
  uint64_t segment_end_offset_ = 0;
  uint64_t segment_bytes_ = 0;
  uint64_t cursor_offset_ = 0;
  uint64_t cursor_position_ = 0;

  std::vector<char> buffer_;
  uint64_t buffer_position_ = 0;
  size_t buffer_length_ = 0;
};

class EmbeddedEventLog : public EventLog {
 public:
  explicit EmbeddedEventLog(std::shared_ptr<LogCore> core) : core_(std::move(core)) {}
  ~EmbeddedEventLog() override { core_->Close(); }

  Result<OffsetRange> Append(const std::vector<Envelope>& batch) override {
    return core_->Append(batch);
  }
  Result<uint64_t> EndOffset() override { return core_->EndOffset(); }
  Result<std::unique_ptr<LogReader>> OpenReader(uint64_t from) override {
    CAIRN_RETURN_IF_ERROR(core_->CheckReaderStart(from).status());
    return std::unique_ptr<LogReader>(std::make_unique<EmbeddedLogReader>(core_, from));
  }
  std::string Describe() const override {
    return "embedded:" + core_->dir() + (core_->read_only() ? " (read-only)" : "");
  }

 private:
  std::shared_ptr<LogCore> core_;
};

}  // namespace

Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string& dir,
                                                  const EmbeddedLogOptions& options) {
  if (dir.empty()) return Status::InvalidArgument("embedded log: empty directory");
  if (options.segment_bytes == 0) {
    return Status::InvalidArgument("embedded log: segment_bytes must be positive");
  }
  auto core = std::make_shared<LogCore>(dir, options);
  Status status = core->Open();
  if (!status.ok()) {
    core->Close();
    return status;
  }
  return std::unique_ptr<EventLog>(std::make_unique<EmbeddedEventLog>(std::move(core)));
}

Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string& dir, bool read_only) {
  EmbeddedLogOptions options;
  options.read_only = read_only;
  return OpenEmbeddedLog(dir, options);
}

}  // namespace cairn
