// Writes a gzip-compressed POSIX tar archive (ustar, with a PAX record for paths longer than
// ustar holds) to a sink as it goes, so an archive of any size costs one bounded buffer. Used for
// the downloads Determined's CLI reads with Python's tarfile: a checkpoint through the master and
// an experiment's model definition.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

class TarGzWriter {
 public:
  // Receives the compressed bytes in order; returns false when the reader has gone away, and
  // every later call then fails with Unavailable.
  using Sink = std::function<bool(std::string_view)>;

  // How hard deflate works. Checkpoints are mostly incompressible floats: stored as they are
  // (still a valid gzip stream) they go out at memory speed, where level 1 keeps a core busy
  // finding nothing to save (docs/benchmarks.md, "HTTP edge"). Source files compress well and are
  // small.
  enum class Compression { kStore, kFast };

  explicit TarGzWriter(Sink sink, Compression compression = Compression::kFast);
  ~TarGzWriter();
  TarGzWriter(const TarGzWriter&) = delete;
  TarGzWriter& operator=(const TarGzWriter&) = delete;

  // `path` is relative and '/'-separated (InvalidArgument for an empty path, a leading '/', or a
  // "..", "." or empty component); `mode` keeps its permission bits. `mtime` is in seconds.
  Status AddFile(std::string_view path, uint32_t mode, std::string_view content, int64_t mtime = 0);
  // A regular file copied from disk in 1 MiB pieces, with its permission bits and mtime; its
  // size is taken when it is opened and a file that changes size while read is IOError (the
  // archive is then unusable). `source` is opened without following a final symbolic link, and
  // must be a regular file (not a FIFO or device: PermissionDenied). With `within` (a canonical
  // directory), the file as opened must lie under it, whatever links or renames stood in its path
  // (PermissionDenied otherwise): nothing outside it can be archived by racing the reader.
  Status AddFileFromDisk(std::string_view path, const std::string& source,
                         const std::string& within = "");
  // A file of `size` bytes whose content `read(offset, length)` hands over a piece at a time (an
  // object in a store); a short or failed read fails the archive.
  using PieceReader = std::function<Result<std::string>(uint64_t offset, uint64_t length)>;
  Status AddFileFromPieces(std::string_view path, uint32_t mode, uint64_t size,
                           const PieceReader& read);
  Status AddDirectory(std::string_view path, uint32_t mode = 0755, int64_t mtime = 0);
  // Writes the end-of-archive blocks and the gzip trailer. Nothing may be added after it.
  Status Finish();

 private:
  struct Deflater;
  Status WriteHeader(std::string_view path, char type, uint32_t mode, uint64_t size, int64_t mtime);
  Status Write(std::string_view bytes, bool finish = false);
  Status PadTo512(uint64_t size);

  Sink sink_;
  std::unique_ptr<Deflater> deflater_;
  bool finished_ = false;
  bool failed_ = false;
};

}  // namespace cairn
