#include "events/context_store.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/document_limits.h"
#include "base/encoding.h"
#include "base/files.h"

namespace cairn {
namespace {

// The canonical encoding of a context, hashed for its digest and stored verbatim as its file:
//
//   "cairn-context-v1\n"
//   u64 file count
//   per file, in byte-wise path order:
//     u64 path length, path bytes, u32 mode, u64 content length, content bytes
//
// Integers are big-endian. Every variable-length field is length-prefixed, so two different
// contexts never encode to the same bytes; the magic line versions the encoding, so a future
// change of it cannot collide with an old digest.
constexpr std::string_view kMagic = "cairn-context-v1\n";
constexpr std::string_view kDigestPrefix = "sha256:";
constexpr int64_t kMiB = 1024 * 1024;

void AppendBigEndian(std::string* out, uint64_t value, int bytes) {
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>(value >> shift));
  }
}

// Reads the encoding back, advancing through `bytes`; false when too short.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool Integer(int width, uint64_t* value) {
    if (bytes_.size() < static_cast<size_t>(width)) return false;
    *value = 0;
    for (int i = 0; i < width; ++i) *value = (*value << 8) | static_cast<uint8_t>(bytes_[i]);
    bytes_.remove_prefix(width);
    return true;
  }
  bool Field(std::string* out) {
    uint64_t length = 0;
    if (!Integer(8, &length) || bytes_.size() < length) return false;
    out->assign(bytes_.substr(0, length));
    bytes_.remove_prefix(length);
    return true;
  }
  bool Literal(std::string_view expected) {
    if (bytes_.substr(0, expected.size()) != expected) return false;
    bytes_.remove_prefix(expected.size());
    return true;
  }
  bool empty() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

std::string Quoted(std::string_view path) { return "'" + std::string(path) + "'"; }

int64_t TotalBytes(const std::vector<ContextFile>& files) {
  int64_t total = 0;
  for (const auto& file : files) total += static_cast<int64_t>(file.content.size());
  return total;
}

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Why `path` is not a relative path that stays inside the context directory, or "" if it is.
std::string PathProblem(std::string_view path) {
  if (path.empty()) return "a path is empty";
  if (path.front() == '/') return "path " + Quoted(path) + " is absolute";
  if (path.find('\0') != std::string_view::npos) {
    return "path " + Quoted(path) + " contains a NUL byte";
  }
  size_t start = 0;
  while (true) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view component = path.substr(start, end - start);
    if (component.empty()) return "path " + Quoted(path) + " has an empty component";
    if (component == "." || component == "..") {
      return "path " + Quoted(path) + " has a '" + std::string(component) + "' component";
    }
    if (end == path.size()) return "";
    start = end + 1;
  }
}

struct TreeEntry {
  std::string_view path;
  bool is_file = true;
};

// Why `entries` (paths already valid) cannot be laid out as one directory tree, or "" if they
// can: a path listed twice, or a file that another path needs to be a directory.
std::string TreeProblem(std::vector<TreeEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  std::set<std::string_view> files;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0 && entries[i].path == entries[i - 1].path) {
      return "path " + Quoted(entries[i].path) + " is listed twice";
    }
    if (entries[i].is_file) files.insert(entries[i].path);
  }
  for (const TreeEntry& entry : entries) {
    for (size_t slash = entry.path.find('/'); slash != std::string_view::npos;
         slash = entry.path.find('/', slash + 1)) {
      const std::string_view parent = entry.path.substr(0, slash);
      if (files.count(parent) != 0) {
        return "path " + Quoted(parent) + " is a file, but " + Quoted(entry.path) +
               " needs it to be a directory";
      }
    }
  }
  return "";
}

// An integer field of an entry: nothing when absent or null, an error when not an integer.
Result<std::optional<int64_t>> IntegerField(const nlohmann::json& entry, const char* key,
                                            const std::string& where) {
  const auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return std::optional<int64_t>();
  if (it->is_number_unsigned()) {
    const uint64_t value = it->get<uint64_t>();
    return std::optional<int64_t>(
        static_cast<int64_t>(std::min<uint64_t>(value, std::numeric_limits<int64_t>::max())));
  }
  if (it->is_number_integer()) return std::optional<int64_t>(it->get<int64_t>());
  return Status::InvalidArgument(where + ": \"" + key + "\" is not an integer");
}

constexpr int64_t kTarRegularFile = '0';
constexpr int64_t kTarOldRegularFile = 0;  // pre-POSIX tar's '\0'
constexpr int64_t kTarHardLink = '1';
constexpr int64_t kTarSymbolicLink = '2';
constexpr int64_t kTarDirectory = '5';

// A file entry between validation and decoding.
struct PendingFile {
  std::string path;
  uint32_t mode = 0644;
  std::string_view base64;
  size_t size = 0;
};

}  // namespace

Result<std::vector<ContextFile>> DecodeModelDefinition(const nlohmann::json& model_definition,
                                                       std::string_view field) {
  const std::string prefix = std::string(field) + ": ";
  if (!model_definition.is_array()) {
    return Status::InvalidArgument(prefix + "not an array of files");
  }
  if (model_definition.size() > kMaxContextEntries) {
    return Status::ResourceExhausted(prefix + std::to_string(model_definition.size()) +
                                     " entries, over the limit of " +
                                     std::to_string(kMaxContextEntries));
  }
  // First validate everything and add up the decoded sizes, so an oversized context is refused
  // before any of it is decoded.
  std::vector<PendingFile> pending;
  std::vector<std::string> directories;
  int64_t total_bytes = 0;
  for (size_t index = 0; index < model_definition.size(); ++index) {
    const nlohmann::json& entry = model_definition[index];
    const std::string at_index = "entry " + std::to_string(index);
    if (!entry.is_object()) {
      return Status::InvalidArgument(prefix + at_index + " is not an object");
    }
    const auto path_field = entry.find("path");
    if (path_field == entry.end() || !path_field->is_string()) {
      return Status::InvalidArgument(prefix + at_index + " has no string \"path\"");
    }
    std::string path = path_field->get<std::string>();
    const std::string where = "path " + Quoted(path);
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> type,
                           IntegerField(entry, "type", prefix + where));
    CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> mode,
                           IntegerField(entry, "mode", prefix + where));
    const int64_t typeflag = type.value_or(kTarRegularFile);
    if (typeflag == kTarHardLink || typeflag == kTarSymbolicLink) {
      return Status::InvalidArgument(prefix + where +
                                     ": links are not allowed in the model definition");
    }
    if (typeflag == kTarDirectory) {
      // tar writes directory names with a trailing slash; some clients keep it.
      if (path.size() > 1 && path.back() == '/') path.pop_back();
      if (std::string problem = PathProblem(path); !problem.empty()) {
        return Status::InvalidArgument(prefix + problem);
      }
      directories.push_back(std::move(path));
      continue;
    }
    if (typeflag != kTarRegularFile && typeflag != kTarOldRegularFile) {
      return Status::InvalidArgument(prefix + where + ": entry type " + std::to_string(typeflag) +
                                     " is not supported (only regular files and directories)");
    }
    if (std::string problem = PathProblem(path); !problem.empty()) {
      return Status::InvalidArgument(prefix + problem);
    }
    const int64_t mode_value = mode.value_or(0);
    if (mode_value < 0 || mode_value > std::numeric_limits<uint32_t>::max()) {
      return Status::InvalidArgument(prefix + where + ": mode " + std::to_string(mode_value) +
                                     " is not a file mode");
    }
    // A mode's type bits must agree with the entry: a "regular file" whose mode says symbolic
    // link or device is refused, not turned into something else.
    const int64_t mode_type = mode_value & S_IFMT;
    if (mode_type != 0 && mode_type != S_IFREG) {
      return Status::InvalidArgument(prefix + where + ": mode " + std::to_string(mode_value) +
                                     " is not a regular file's (only regular files and "
                                     "directories are allowed)");
    }
    PendingFile file;
    // Only the owner's permission bits and group/other read and execute reach the trial: no file
    // of a context is writable by other users, setuid and sticky are not honoured, and dropping
    // the rest keeps the digest independent of the client.
    file.mode = mode_value == 0 ? 0644 : static_cast<uint32_t>(mode_value) & 0755;
    const auto content = entry.find("content");
    if (content != entry.end() && !content->is_null()) {
      if (!content->is_string()) {
        return Status::InvalidArgument(prefix + where + ": \"content\" is not a string");
      }
      file.base64 = content->get_ref<const std::string&>();
    }
    const std::optional<size_t> size = Base64DecodedSize(file.base64);
    if (!size) {
      return Status::InvalidArgument(prefix + where +
                                     ": \"content\" is not padded standard base64");
    }
    file.size = *size;
    file.path = std::move(path);
    total_bytes += static_cast<int64_t>(file.size);
    pending.push_back(std::move(file));
  }
  if (total_bytes > kMaxContextBytes) {
    char mebibytes[32];
    std::snprintf(mebibytes, sizeof mebibytes, "%.1f",
                  static_cast<double>(total_bytes) / static_cast<double>(kMiB));
    return Status::ResourceExhausted(prefix + "the files total " + std::to_string(total_bytes) +
                                     " bytes (" + mebibytes + " MiB), over the " +
                                     std::to_string(kMaxContextBytes / kMiB) + " MiB cap");
  }
  std::vector<TreeEntry> tree;
  tree.reserve(pending.size() + directories.size());
  for (const PendingFile& file : pending) tree.push_back({file.path, true});
  for (const std::string& directory : directories) tree.push_back({directory, false});
  if (std::string problem = TreeProblem(std::move(tree)); !problem.empty()) {
    return Status::InvalidArgument(prefix + problem);
  }

  std::sort(pending.begin(), pending.end(),
            [](const PendingFile& a, const PendingFile& b) { return a.path < b.path; });
  std::vector<ContextFile> files;
  files.reserve(pending.size());
  for (PendingFile& file : pending) {
    CAIRN_ASSIGN_OR_RETURN(std::string content, Base64Decode(file.base64));
    files.push_back({std::move(file.path), std::move(content), file.mode});
  }
  return files;
}

Result<std::vector<ContextFile>> AddPackages(std::vector<ContextFile> context,
                                             std::vector<ContextFile> packages) {
  const std::string directory = std::string(kPackagesDirectory) + "/";
  for (const auto& file : context) {
    if (file.path.rfind(directory, 0) == 0) {
      return Status::InvalidArgument("modelDefinition: " + Quoted(file.path) + " is in " +
                                     kPackagesDirectory +
                                     "/, which holds the experiment's packages; rename it");
    }
  }
  for (const auto& package : packages) {
    const bool kind_known = EndsWith(package.path, ".whl") || EndsWith(package.path, ".tar.gz") ||
                            EndsWith(package.path, ".tar.bz2") || EndsWith(package.path, ".zip");
    if (package.path.find('/') != std::string::npos || !kind_known) {
      return Status::InvalidArgument(
          "packages: " + Quoted(package.path) +
          " must be a file name (no directory) ending in .whl, .tar.gz, .tar.bz2 or .zip: a "
          "Python wheel or source distribution");
    }
  }
  CAIRN_RETURN_IF_ERROR(CheckContextWithPackagesSize(TotalBytes(context), TotalBytes(packages)));
  for (auto& package : packages) {
    package.path = directory + package.path;
    context.push_back(std::move(package));
  }
  std::sort(context.begin(), context.end(),
            [](const ContextFile& a, const ContextFile& b) { return a.path < b.path; });
  return context;
}

namespace {

// A context's canonical encoding and what it describes, or why the files are not a context.
struct EncodedContext {
  StoredContext described;
  std::string encoding;
};

Result<EncodedContext> EncodeContext(const std::vector<ContextFile>& files) {
  std::vector<const ContextFile*> sorted;
  std::vector<TreeEntry> tree;
  sorted.reserve(files.size());
  tree.reserve(files.size());
  StoredContext stored;
  size_t encoded_size = kMagic.size() + 8;
  for (const ContextFile& file : files) {
    if (std::string problem = PathProblem(file.path); !problem.empty()) {
      return Status::InvalidArgument("context: " + problem);
    }
    if (file.mode > 0777) {
      return Status::InvalidArgument("context: path " + Quoted(file.path) +
                                     " has a mode beyond the permission bits");
    }
    sorted.push_back(&file);
    tree.push_back({file.path, true});
    stored.total_bytes += static_cast<int64_t>(file.content.size());
    encoded_size += 8 + file.path.size() + 4 + 8 + file.content.size();
  }
  if (std::string problem = TreeProblem(std::move(tree)); !problem.empty()) {
    return Status::InvalidArgument("context: " + problem);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const ContextFile* a, const ContextFile* b) { return a->path < b->path; });

  std::string encoding;
  encoding.reserve(encoded_size);
  encoding.append(kMagic);
  AppendBigEndian(&encoding, sorted.size(), 8);
  for (const ContextFile* file : sorted) {
    AppendBigEndian(&encoding, file->path.size(), 8);
    encoding.append(file->path);
    AppendBigEndian(&encoding, file->mode, 4);
    AppendBigEndian(&encoding, file->content.size(), 8);
    encoding.append(file->content);
  }
  CAIRN_ASSIGN_OR_RETURN(std::string hex, Sha256Hex(encoding));
  stored.digest = std::string(kDigestPrefix) + hex;
  stored.file_count = sorted.size();
  return EncodedContext{std::move(stored), std::move(encoding)};
}

}  // namespace

Result<StoredContext> DescribeContext(const std::vector<ContextFile>& files) {
  CAIRN_ASSIGN_OR_RETURN(EncodedContext encoded, EncodeContext(files));
  return std::move(encoded.described);
}

ContextStore::ContextStore(std::string directory) : directory_(std::move(directory)) {}

Result<StoredContext> ContextStore::Put(const std::vector<ContextFile>& files) {
  CAIRN_ASSIGN_OR_RETURN(EncodedContext encoded, EncodeContext(files));
  const std::string& encoding = encoded.encoding;
  const std::string hex = encoded.described.digest.substr(kDigestPrefix.size());
  std::lock_guard<std::mutex> lock(put_mutex_);
  std::error_code error;
  if (std::filesystem::create_directories(directory_, error)) {
    // The new directory's own entry must be durable too, or a crash could lose every context.
    const std::filesystem::path parent = std::filesystem::path(directory_).parent_path();
    CAIRN_RETURN_IF_ERROR(SyncDirectory(parent.empty() ? "." : parent.string()));
  } else if (error) {
    return Status::IOError("cannot create " + directory_ + ": " + error.message());
  }
  const std::string path = directory_ + "/" + hex;
  struct stat info;
  // Same name and size: the same context, stored before. (A damaged copy of the right size is
  // Get's to report; rewriting on every Put to guard against it would cost a full write.)
  if (::stat(path.c_str(), &info) == 0 && static_cast<size_t>(info.st_size) == encoding.size()) {
    return encoded.described;
  }
  CAIRN_RETURN_IF_ERROR(WriteFileAtomically(path, encoding));
  return encoded.described;
}

Result<std::vector<ContextFile>> ContextStore::Get(const std::string& digest) const {
  const std::string_view hex =
      std::string_view(digest).substr(std::min(kDigestPrefix.size(), digest.size()));
  const bool well_formed = digest.compare(0, kDigestPrefix.size(), kDigestPrefix) == 0 &&
                           hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
                             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                           });
  if (!well_formed) {
    return Status::InvalidArgument("context digest '" + digest +
                                   "' is not sha256: followed by 64 lowercase hex digits");
  }
  const std::string path = directory_ + "/" + std::string(hex);
  auto read = ReadWholeFile(path);
  if (read.status().code() == StatusCode::kNotFound) {
    return Status::NotFound("context " + digest + " is not stored");
  }
  CAIRN_ASSIGN_OR_RETURN(std::string bytes, std::move(read));
  CAIRN_ASSIGN_OR_RETURN(std::string actual, Sha256Hex(bytes));
  if (actual != hex) {
    return Status::Corruption("context " + digest + ": " + path + " hashes to sha256:" + actual);
  }

  const auto malformed = [&] {
    return Status::Corruption("context " + digest + ": " + path +
                              " matches its digest but is not a context encoding");
  };
  Reader reader(bytes);
  uint64_t count = 0;
  if (!reader.Literal(kMagic) || !reader.Integer(8, &count)) return malformed();
  std::vector<ContextFile> files;
  for (uint64_t i = 0; i < count; ++i) {
    ContextFile file;
    uint64_t mode = 0;
    if (!reader.Field(&file.path) || !reader.Integer(4, &mode) || !reader.Field(&file.content)) {
      return malformed();
    }
    file.mode = static_cast<uint32_t>(mode);
    files.push_back(std::move(file));
  }
  if (!reader.empty()) return malformed();
  return files;
}

Result<std::string> ContextStore::GetHarnessJson(const std::string& digest) const {
  CAIRN_ASSIGN_OR_RETURN(std::vector<ContextFile> files, Get(digest));
  nlohmann::json list = nlohmann::json::array();
  for (ContextFile& file : files) {
    list.push_back({{"path", std::move(file.path)},
                    {"content", Base64Encode(file.content)},
                    {"mode", file.mode}});
  }
  // Paths were valid UTF-8 when they arrived as JSON; replace rather than throw on one that
  // reached Put some other way.
  return nlohmann::json{{"files", std::move(list)}}.dump(-1, ' ', false,
                                                         nlohmann::json::error_handler_t::replace);
}

}  // namespace cairn
