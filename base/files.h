// Durable small-file I/O the components share (state files, stored contexts, keys).
#pragma once

#include <sys/types.h>

#include <cstdint>
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

// The bytes of the regular files under `dir`, recursively; 0 when it cannot be read.
uint64_t DirectoryBytes(const std::string& dir);

// The whole file; NotFound when it does not exist, IOError for other failures.
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace cairn
