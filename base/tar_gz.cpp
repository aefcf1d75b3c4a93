#include "base/tar_gz.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace cairn {

namespace {

constexpr size_t kBlock = 512;
constexpr size_t kChunk = 1 << 20;
// An object-store read: big enough that request overhead vanishes, small enough to hold.
constexpr uint64_t kPieceBytes = 8 << 20;
// ustar's size field holds 11 octal digits; a larger file's size goes in a PAX record.
constexpr uint64_t kMaxUstarSize = (uint64_t{1} << 33) - 1;

Status CheckArchivePath(std::string_view path) {
  if (path.empty() || path.front() == '/') {
    return Status::InvalidArgument("archive path '" + std::string(path) + "' must be relative");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    // A trailing '/' (a directory's path) leaves one empty last part, which is fine.
    if ((part.empty() && end != path.size()) || part == "." || part == "..") {
      return Status::InvalidArgument("archive path '" + std::string(path) +
                                     "' has an empty, '.' or '..' component");
    }
    start = end + 1;
  }
  return Status::Ok();
}

// Writes `value` as zero-padded octal in a field of `width` bytes ending in NUL.
void Octal(char* field, size_t width, uint64_t value) {
  for (size_t i = width - 1; i-- > 0;) {
    field[i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  field[width - 1] = '\0';
}

// One PAX record: "<length> <key>=<value>\n", where the length counts itself.
std::string PaxRecord(std::string_view key, std::string_view value) {
  size_t body = 1 + key.size() + 1 + value.size() + 1;  // " key=value\n"
  size_t length = body + 1;
  while (std::to_string(length).size() + body != length) {
    length = std::to_string(length).size() + body;
  }
  return std::to_string(length) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

}  // namespace

struct TarGzWriter::Deflater {
  z_stream stream{};
  std::vector<unsigned char> out = std::vector<unsigned char>(kChunk);
  bool ready = false;
  ~Deflater() {
    if (ready) deflateEnd(&stream);
  }
};

TarGzWriter::TarGzWriter(Sink sink, Compression compression)
    : sink_(std::move(sink)), deflater_(new Deflater) {
  // windowBits 15 + 16: a gzip wrapper.
  const int level = compression == Compression::kStore ? Z_NO_COMPRESSION : Z_BEST_SPEED;
  deflater_->ready =
      deflateInit2(&deflater_->stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

TarGzWriter::~TarGzWriter() = default;

Status TarGzWriter::Write(std::string_view bytes, bool finish) {
  if (failed_) return Status::Unavailable("the archive's reader went away");
  if (!deflater_->ready) return Status::Internal("zlib: deflateInit2 failed");
  z_stream& stream = deflater_->stream;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  int result = Z_OK;
  do {
    stream.next_out = deflater_->out.data();
    stream.avail_out = static_cast<uInt>(deflater_->out.size());
    result = deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH);
    if (result == Z_STREAM_ERROR) return Status::Internal("zlib: deflate failed");
    size_t produced = deflater_->out.size() - stream.avail_out;
    if (produced > 0 &&
        !sink_(std::string_view(reinterpret_cast<const char*>(deflater_->out.data()), produced))) {
      failed_ = true;
      return Status::Unavailable("the archive's reader went away");
    }
  } while (stream.avail_out == 0 || (finish && result != Z_STREAM_END));
  return Status::Ok();
}

Status TarGzWriter::PadTo512(uint64_t size) {
  static const std::array<char, kBlock> kZeros{};
  size_t rest = size % kBlock;
  if (rest == 0) return Status::Ok();
  return Write(std::string_view(kZeros.data(), kBlock - rest));
}

Status TarGzWriter::WriteHeader(std::string_view path, char type, uint32_t mode, uint64_t size,
                                int64_t mtime) {
  if (finished_) return Status::FailedPrecondition("the archive is already finished");
  CAIRN_RETURN_IF_ERROR(CheckArchivePath(path));
  std::array<char, kBlock> header{};
  // A path ustar cannot hold (or a size it cannot) goes first in a PAX extended header, which
  // every modern tar reader (Python's tarfile included) applies to the entry after it.
  std::string pax;
  if (path.size() > 100) pax += PaxRecord("path", path);
  if (size > kMaxUstarSize) pax += PaxRecord("size", std::to_string(size));
  if (!pax.empty()) {
    CAIRN_RETURN_IF_ERROR(WriteHeader("PaxHeader", 'x', 0644, pax.size(), mtime));
    CAIRN_RETURN_IF_ERROR(Write(pax));
    CAIRN_RETURN_IF_ERROR(PadTo512(pax.size()));
  }
  std::memcpy(header.data(), path.data(), std::min<size_t>(path.size(), 100));
  Octal(&header[100], 8, mode & 0777);
  Octal(&header[108], 8, 0);  // uid
  Octal(&header[116], 8, 0);  // gid
  Octal(&header[124], 12, size > kMaxUstarSize ? 0 : size);
  Octal(&header[136], 12, static_cast<uint64_t>(mtime < 0 ? 0 : mtime));
  header[156] = type;
  std::memcpy(&header[257], "ustar", 6);
  std::memcpy(&header[263], "00", 2);
  std::memset(&header[148], ' ', 8);
  unsigned checksum = 0;
  for (char c : header) checksum += static_cast<unsigned char>(c);
  Octal(&header[148], 7, checksum);  // six digits and a NUL; the eighth byte stays ' '
  return Write(std::string_view(header.data(), header.size()));
}

Status TarGzWriter::AddFile(std::string_view path, uint32_t mode, std::string_view content,
                            int64_t mtime) {
  CAIRN_RETURN_IF_ERROR(WriteHeader(path, '0', mode, content.size(), mtime));
  CAIRN_RETURN_IF_ERROR(Write(content));
  return PadTo512(content.size());
}

Status TarGzWriter::AddFileFromDisk(std::string_view path, const std::string& source,
                                    const std::string& within) {
  const int fd = ::open(source.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + source + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return Status::IOError("cannot stat " + source);
  if (!S_ISREG(info.st_mode)) {
    return Status::PermissionDenied(source + " is not a regular file");
  }
  if (!within.empty()) {
    // Where the descriptor really points, after every link and rename on the way.
    std::error_code error;
    const std::string opened =
        std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), error).string();
    if (error || opened.rfind(within + "/", 0) != 0) {
      return Status::PermissionDenied(source + " is not inside " + within);
    }
  }
  const auto size = static_cast<uint64_t>(info.st_size);
  CAIRN_RETURN_IF_ERROR(WriteHeader(path, '0', info.st_mode & 0777, size, info.st_mtime));
  std::vector<char> buffer(kChunk);
  uint64_t copied = 0;
  while (copied < size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), size - copied));
    ssize_t got = ::read(fd, buffer.data(), want);
    if (got <= 0) return Status::IOError(source + " shrank or failed while it was archived");
    CAIRN_RETURN_IF_ERROR(Write(std::string_view(buffer.data(), static_cast<size_t>(got))));
    copied += static_cast<uint64_t>(got);
  }
  return PadTo512(size);
}

Status TarGzWriter::AddFileFromPieces(std::string_view path, uint32_t mode, uint64_t size,
                                      const PieceReader& read) {
  CAIRN_RETURN_IF_ERROR(WriteHeader(path, '0', mode & 0777, size, 0));
  uint64_t copied = 0;
  while (copied < size) {
    const uint64_t want = std::min<uint64_t>(kPieceBytes, size - copied);
    CAIRN_ASSIGN_OR_RETURN(std::string piece, read(copied, want));
    if (piece.empty() || piece.size() > want) {
      return Status::IOError(std::string(path) + " changed size while it was archived");
    }
    CAIRN_RETURN_IF_ERROR(Write(piece));
    copied += piece.size();
  }
  return PadTo512(size);
}

Status TarGzWriter::AddDirectory(std::string_view path, uint32_t mode, int64_t mtime) {
  std::string with_slash(path);
  if (with_slash.empty() || with_slash.back() != '/') with_slash += '/';
  return WriteHeader(with_slash, '5', mode, 0, mtime);
}

Status TarGzWriter::Finish() {
  if (finished_) return Status::Ok();
  static const std::array<char, 2 * kBlock> kEnd{};
  CAIRN_RETURN_IF_ERROR(Write(std::string_view(kEnd.data(), kEnd.size())));
  CAIRN_RETURN_IF_ERROR(Write({}, /*finish=*/true));
  finished_ = true;
  return Status::Ok();
}

}  // namespace cairn
