#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace cairn {

namespace {

Status ErrnoStatus(const std::string& what, const std::string& path) {
  const int error = errno;
  return Status::IOError(what + " " + path + ": " + std::strerror(error));
}

// Closes on every path unless released.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status SyncDirectory(const std::string& directory) {
  Fd fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus("cannot open directory", directory);
  if (::fsync(fd.get()) != 0) return ErrnoStatus("cannot fsync directory", directory);
  return Status::Ok();
}

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path, mode_t mode) {
  const std::string temporary = path + ".tmp";
  Fd fd(::open(temporary.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (fd.get() < 0) return ErrnoStatus("cannot create", temporary);
  // The mode of a temporary left by an earlier attempt is not changed by open.
  if (::fchmod(fd.get(), mode) != 0) return ErrnoStatus("cannot chmod", temporary);
  const int raw = fd.get();
  std::unique_ptr<AtomicFile> file(new AtomicFile(path, raw));
  (void)fd.Release();
  return file;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
}

Status AtomicFile::Commit() {
  if (::fsync(fd_) != 0) return ErrnoStatus("cannot fsync", temporary_);
  if (::close(std::exchange(fd_, -1)) != 0) return ErrnoStatus("cannot close", temporary_);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    return ErrnoStatus("cannot rename onto", path_);
  }
  committed_ = true;
  return SyncDirectory(DirectoryOf(path_));
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
  CAIRN_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(path, mode));
  while (!bytes.empty()) {
    const ssize_t written = ::write(file->fd(), bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return ErrnoStatus("cannot write", file->temporary());
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return file->Commit();
}

Result<std::string> ReadWholeFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0 && errno == ENOENT) return Status::NotFound(path + " does not exist");
  if (fd.get() < 0) return ErrnoStatus("cannot open", path);
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return ErrnoStatus("cannot stat", path);
  std::string bytes(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t count = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return ErrnoStatus("cannot read", path);
    if (count == 0) break;
    done += static_cast<size_t>(count);
  }
  bytes.resize(done);  // a file that shrank under us: the caller's checks see it
  return bytes;
}

uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
    if (entry.is_regular_file(error)) bytes += entry.file_size(error);
  }
  return bytes;
}

}  // namespace cairn
