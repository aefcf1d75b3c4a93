#include "api/static_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

namespace cairn::api {

std::optional<std::string> StaticContentType(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
  }};
  for (const auto& [extension, type] : kTypes) {
    if (path.size() > extension.size() && path.ends_with(extension)) return std::string(type);
  }
  return std::nullopt;
}

Result<std::string> ResolveStaticFile(const std::string& root, std::string_view relative) {
  const Status not_found = Status::NotFound("no such file in the web UI");
  if (relative.empty() || relative.find_first_of(std::string_view("\\\0", 2)) != relative.npos) {
    return not_found;
  }
  size_t start = 0;
  while (start <= relative.size()) {
    size_t slash = relative.find('/', start);
    if (slash == relative.npos) slash = relative.size();
    const std::string_view segment = relative.substr(start, slash - start);
    // Empty, ".", ".." and hidden names: none is part of the UI, and the first three could climb.
    if (segment.empty() || segment.front() == '.') return not_found;
    start = slash + 1;
  }
  if (!StaticContentType(relative)) return not_found;
  std::error_code error;
  const std::filesystem::path canonical_root = std::filesystem::canonical(root, error);
  if (error) return Status::NotFound("the web UI's folder " + root + " is missing");
  const std::filesystem::path file =
      std::filesystem::canonical(canonical_root / std::filesystem::path(relative), error);
  if (error) return not_found;
  // A link inside the folder that leads out of it is refused like a path that climbs.
  const auto [root_end, file_it] =
      std::mismatch(canonical_root.begin(), canonical_root.end(), file.begin(), file.end());
  if (root_end != canonical_root.end() || !std::filesystem::is_regular_file(file, error)) {
    return not_found;
  }
  return file.string();
}

std::string StaticFileTag(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "";
  return "\"" + std::to_string(info.st_size) + "-" + std::to_string(info.st_mtim.tv_sec) + "." +
         std::to_string(info.st_mtim.tv_nsec) + "\"";
}

}  // namespace cairn::api
