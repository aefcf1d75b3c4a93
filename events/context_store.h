// An experiment's model definition (its "context"): decoding what Determined's CLI submits in
// `modelDefinition`, and a content-addressed store that keeps each distinct context once under
// <data_dir>/contexts and hands it to trial harnesses (agent/harness/PROTOCOL.md section 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn {

// One regular file of a context. Directories are not represented: a file's path implies them.
struct ContextFile {
  std::string path;      // relative, '/'-separated, no empty, "." or ".." component
  std::string content;   // raw bytes
  uint32_t mode = 0644;  // permission bits only (0..0777)
};

struct StoredContext {
  std::string digest;       // "sha256:<64 lowercase hex>"
  int64_t total_bytes = 0;  // sum of the files' content sizes
  size_t file_count = 0;
};

// Determined's own limit on a model definition, so a context it accepts Cairn accepts too.
inline constexpr int64_t kMaxContextBytes = 95ll * 1024 * 1024;
inline constexpr size_t kMaxContextEntries = 100000;

// Validates and decodes a `modelDefinition` array: entries {"path", "type", "content" (base64),
// "mode", "mtime", "uid", "gid"}. `type` is the tar typeflag as a number: 48 ('0', or 0, or
// absent) a regular file, 53 ('5') a directory; everything else is refused, links with "links are
// not allowed in the model definition". mtime, uid and gid are ignored, so they do not change the
// digest. A file's mode keeps its permission bits only; 0 or absent means 0644. A directory's path
// may end in one '/'. Directories are dropped (files imply them); files come back sorted by path.
// Errors start with "<field>: " and name the offending path or entry index:
// InvalidArgument for malformed input, ResourceExhausted when the decoded files total more than
// kMaxContextBytes or there are more than kMaxContextEntries entries.
// `field` names the request's field in errors (a command's uploaded files are "files").
Result<std::vector<ContextFile>> DecodeModelDefinition(const nlohmann::json& model_definition,
                                                       std::string_view field = "modelDefinition");

// PEDL's local packages (`pedl experiment create --package FILE`): Python wheels or source
// distributions uploaded with an experiment, kept in its context under this directory so that
// every trial's harness receives them with the model definition and installs them into the
// prepared environment (agent/harness/cairn_harness/prepared_env.py).
inline constexpr char kPackagesDirectory[] = ".cairn-packages";

// The context with `packages` (decoded by DecodeModelDefinition with field "packages") added
// under kPackagesDirectory. InvalidArgument when a package's path is not a plain file name ending
// in .whl, .tar.gz, .tar.bz2 or .zip, or when the model definition already has a
// kPackagesDirectory; ResourceExhausted, naming both sizes, when the model definition and the
// packages total more than kMaxContextWithPackagesBytes (base/document_limits.h). Files come back
// sorted by path.
Result<std::vector<ContextFile>> AddPackages(std::vector<ContextFile> context,
                                             std::vector<ContextFile> packages);

// What ContextStore::Put would store and answer for `files`, with nothing written (a request that
// only validates). The same errors as Put's.
Result<StoredContext> DescribeContext(const std::vector<ContextFile>& files);

// Contexts on disk, one immutable file per digest. Thread-safe: any number of threads may call
// any method concurrently.
class ContextStore {
 public:
  // `directory` (e.g. <data_dir>/contexts) is created on the first Put.
  explicit ContextStore(std::string directory);

  // Stores `files` (in any order; paths valid and unique, modes within 0777, else
  // InvalidArgument) unless that context is already stored, and returns its digest: sha256 over
  // the canonical encoding described in context_store.cpp, which is also the stored file's
  // content. The write is atomic (temporary file, fsync, rename, fsync of the directory).
  Result<StoredContext> Put(const std::vector<ContextFile>& files);

  // The files of a stored context, sorted by path. InvalidArgument for a malformed digest,
  // NotFound when absent, Corruption when the stored bytes do not hash to the digest.
  Result<std::vector<ContextFile>> Get(const std::string& digest) const;

  // Get's files as the trial harness wants them:
  // {"files":[{"path":"...","content":"<base64>","mode":420},...]}.
  Result<std::string> GetHarnessJson(const std::string& digest) const;

 private:
  std::string directory_;
  // Serialises Put's exists-check and write, so concurrent Puts of one context write it once.
  std::mutex put_mutex_;
};

}  // namespace cairn
