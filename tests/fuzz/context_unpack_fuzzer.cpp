// Fuzz target: an uploaded model definition (`modelDefinition` of POST /api/v1/experiments,
// what `det experiment create` packs from a directory) as the master unpacks it
// (DecodeModelDefinition, events/context_store.h). The body is JSON; whatever it decodes to must
// be safe to lay out under a directory: relative paths without "." or "..", each once and none
// under another file, permission bits only, within the size cap, sorted. Then it is stored and
// read back as a trial's harness gets it (ContextStore), which must give the same files.
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "base/document_limits.h"
#include "events/context_store.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

bool IsSafeRelativePath(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string::npos) return false;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view component = std::string_view(path).substr(start, end - start);
    if (component.empty() || component == "." || component == "..") return false;
    if (end == path.size()) return true;
    start = end + 1;
  }
}

// One store for the whole run, in memory when /dev/shm is there: a Put costs an fsync.
struct ScratchStore {
  std::string directory;
  cairn::ContextStore contexts{directory};
};

ScratchStore& Scratch() {
  static ScratchStore* scratch = [] {
    std::string directory = std::filesystem::is_directory("/dev/shm") ? "/dev/shm/cairn-fuzz-XXXXXX"
                                                                      : "/tmp/cairn-fuzz-XXXXXX";
    FUZZ_CHECK(::mkdtemp(directory.data()) != nullptr);
    std::atexit([] { std::filesystem::remove_all(Scratch().directory); });
    return new ScratchStore{directory};
  }();
  return *scratch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // As the handler reads its body (api/rest_util.h).
  auto parsed = cairn::ParseJsonDocument(text, cairn::kRequestBodyLimits, "body");
  if (!parsed.ok()) return 0;
  const nlohmann::json& body = *parsed;
  auto files = cairn::DecodeModelDefinition(body);
  if (!files.ok()) return 0;

  FUZZ_CHECK(files->size() <= cairn::kMaxContextEntries);
  std::set<std::string> paths;
  int64_t total_bytes = 0;
  for (size_t i = 0; i < files->size(); ++i) {
    const cairn::ContextFile& file = (*files)[i];
    FUZZ_CHECK(IsSafeRelativePath(file.path));
    FUZZ_CHECK(file.mode <= 0777);
    FUZZ_CHECK(i == 0 || (*files)[i - 1].path < file.path);
    paths.insert(file.path);
    total_bytes += static_cast<int64_t>(file.content.size());
  }
  FUZZ_CHECK(total_bytes <= cairn::kMaxContextBytes);
  // No file sits where another file needs a directory.
  for (const std::string& path : paths) {
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      FUZZ_CHECK(paths.count(path.substr(0, slash)) == 0);
    }
  }

  cairn::ContextStore& store = Scratch().contexts;
  auto stored = store.Put(*files);
  FUZZ_CHECK(stored.ok());
  FUZZ_CHECK(stored->file_count == files->size() && stored->total_bytes == total_bytes);
  auto read_back = store.Get(stored->digest);
  FUZZ_CHECK(read_back.ok());
  FUZZ_CHECK(read_back->size() == files->size());
  for (size_t i = 0; i < files->size(); ++i) {
    FUZZ_CHECK((*read_back)[i].path == (*files)[i].path);
    FUZZ_CHECK((*read_back)[i].content == (*files)[i].content);
    FUZZ_CHECK((*read_back)[i].mode == (*files)[i].mode);
  }
  FUZZ_CHECK(store.GetHarnessJson(stored->digest).ok());
  // Contexts are kept by digest; a million distinct ones would fill the disk.
  std::filesystem::remove(Scratch().directory + "/" +
                          stored->digest.substr(stored->digest.find(':') + 1));
  return 0;
}
