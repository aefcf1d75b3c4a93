#include "events/embedded/segment_file.h"

#include <fcntl.h>
#include <isa-l/crc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cairn::embedded {

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

// zlib's CRC-32 (the format's, LOG_FORMAT.md), computed by ISA-L's crc32_gzip_refl: the same
// polynomial, reflection and chaining, with carry-less multiplication. zlib's table-driven one
// cost a share of a rebuild's CPU and a good part of every start's scan of the log; on the log's
// small records ISA-L's is several times faster (docs/benchmarks.md, "Event log").
uint32_t PayloadCrc(const char* payload, size_t length) {
  return crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(payload), length);
}

// The record CRC covers the payload and then header bytes [8, 32), so a writer can checksum the
// payload before it knows the record's offset.
uint32_t RecordCrc(uint32_t payload_crc, const char* header) {
  return crc32_gzip_refl(payload_crc,
                         reinterpret_cast<const unsigned char*>(header + kCrcCoveredHeaderStart),
                         kHeaderBytes - kCrcCoveredHeaderStart);
}

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

Result<Fd> OpenFile(const std::string& path, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus("open", path);
  return Fd(fd);
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
  // No bigger than the bytes to search: a short log's tail is searched without zeroing a whole
  // chunk first.
  std::vector<char> chunk(static_cast<size_t>(
      std::min<uint64_t>(kScanChunkBytes, file_bytes - std::min(from, file_bytes))));
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
      // Only records within [from, file_bytes) count, and reading one that claims to run past it
      // would cost up to kEmbeddedLogMaxEventBytes for each stray magic in a damaged tail.
      if (candidate + kHeaderBytes + header.length > file_bytes) continue;
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

}  // namespace cairn::embedded
