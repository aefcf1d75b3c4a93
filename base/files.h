// Durable small-file I/O the components share (state files, stored contexts, keys).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

// fsync of a directory, so that entries created or renamed in it survive a crash.
Status SyncDirectory(const std::string& directory);

// Replaces `path` with `bytes` so that a crash leaves the old file or the new one, never a mix:
// a temporary beside it, fsync, rename, fsync of the directory. Callers serialise writes to one
// path (the temporary's name is fixed; one left by a crash is overwritten by the next attempt).
Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode = 0644);

// A file replaced the way WriteFileAtomically replaces one, for contents written in pieces (too
// large to hold in memory at once): Create opens `path`.tmp, truncated, with `mode`; the caller
// writes (and may read back) through fd(); Commit fsyncs, renames it onto `path` and syncs the
// directory. One destroyed without a successful Commit removes its temporary.
class AtomicFile {
 public:
  static Result<std::unique_ptr<AtomicFile>> Create(const std::string& path, mode_t mode = 0644);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_; }
  const std::string& temporary() const { return temporary_; }
  Status Commit();

 private:
  AtomicFile(std::string path, int fd)
      : path_(std::move(path)), temporary_(path_ + ".tmp"), fd_(fd) {}
  const std::string path_;
  const std::string temporary_;
  int fd_;
  bool committed_ = false;
};

// The bytes of the regular files under `dir`, recursively; 0 when it cannot be read.
uint64_t DirectoryBytes(const std::string& dir);

// The whole file; NotFound when it does not exist, IOError for other failures.
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace cairn
