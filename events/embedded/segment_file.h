// The embedded log's files, below the log itself: the record format (header, CRC), segment file
// names, scanning a segment for its durable records, and the small POSIX helpers the log uses.
// Internal to events/embedded/; the format is LOG_FORMAT.md in this folder.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "events/embedded/embedded_log.h"

namespace cairn::embedded {

// Record header, little-endian (LOG_FORMAT.md):
//   0 magic u32 | 4 crc u32 | 8 offset u64 | 16 group_first u64 | 24 length u32 | 28 reserved u32
inline constexpr uint32_t kRecordMagic = 0x4C4E5243;  // the bytes "CRNL"
inline constexpr size_t kHeaderBytes = 32;
inline constexpr size_t kCrcCoveredHeaderStart = 8;
// One sparse index entry per this many bytes of a segment (plus one for its first record), so a
// reader opened at any offset scans at most this much to find its record.
inline constexpr uint64_t kIndexIntervalBytes = 64 << 10;
// At most this many batches per commit group: one iovec each, and Linux's IOV_MAX is 1024.
inline constexpr size_t kMaxBatchesPerGroup = 1024;
inline constexpr size_t kScanChunkBytes = 1 << 20;
inline constexpr size_t kReadAheadBytes = 256 << 10;
inline constexpr char kLockFileName[] = "LOCK";

// Little-endian fixed-width integers, as every field of a record header is stored.
void PutU32(char* out, uint32_t value);
void PutU64(char* out, uint64_t value);
uint32_t GetU32(const char* in);
uint64_t GetU64(const char* in);

uint32_t PayloadCrc(const char* payload, size_t length);

// The record CRC covers the payload and then header bytes [8, 32), so a writer can checksum the
// payload before it knows the record's offset.
uint32_t RecordCrc(uint32_t payload_crc, const char* header);

struct RecordHeader {
  uint32_t crc = 0;
  uint64_t offset = 0;
  uint64_t group_first = 0;
  uint32_t length = 0;
};

// Decodes the header at `data` (kHeaderBytes available); false when it cannot be a record header.
bool DecodeHeader(const char* data, RecordHeader* header);

// Whether the CRC of the record at `record` (header then payload, all present) matches.
bool CrcMatches(const char* record, const RecordHeader& header);

enum class RecordCheck { kValid, kIncomplete, kDamaged };

// Checks the record that starts at `data`, of which `available` bytes are at hand. kIncomplete
// means the bytes end inside the record; `header` is then decoded when the header itself is whole.
RecordCheck CheckRecord(const char* data, size_t available, RecordHeader* header);

std::string SegmentFileName(uint64_t base_offset);

std::optional<uint64_t> ParseSegmentFileName(const std::string& name);

Status ErrnoStatus(const std::string& what, const std::string& path);

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

Result<Fd> OpenFile(const std::string& path, int flags, mode_t mode = 0);

// Reads up to `length` bytes at `position`; fewer only at end of file.
Result<size_t> PreadFull(int fd, char* out, size_t length, uint64_t position,
                         const std::string& path);

Result<uint64_t> FileSize(int fd, const std::string& path);

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
Status ScanForward(int fd, Segment* segment);

// Whether the bytes in [from, file_bytes) hold an intact record written by a commit group that
// started after `expected_offset`. Such a group was only written after the group holding
// `expected_offset` had been fsync'd and acknowledged, so a damaged record at `from` is then
// lost acknowledged data, not a torn tail.
Result<bool> LaterCommitGroupFollows(int fd, const std::string& path, uint64_t from,
                                     uint64_t file_bytes, uint64_t expected_offset);

}  // namespace cairn::embedded
