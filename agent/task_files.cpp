#include "agent/task_files.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/encoding.h"

namespace cairn::agent {

namespace {

bool SafeRelativePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  for (const auto& part : std::filesystem::path(path)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

struct TaskFile {
  std::string path;
  std::string content;
  uint32_t mode = 0644;
};

}  // namespace

Status WriteTaskFiles(const std::string& files_json, const std::string& work_dir) {
  const nlohmann::json document = nlohmann::json::parse(files_json, nullptr, false);
  if (!document.is_object() || !document.contains("files") || !document["files"].is_array()) {
    return Status::InvalidArgument("task files: expected {\"files\": [...]}");
  }
  std::vector<TaskFile> files;
  for (const auto& entry : document["files"]) {
    if (!entry.is_object() || !entry.value("path", nlohmann::json()).is_string() ||
        !entry.value("content", nlohmann::json()).is_string()) {
      return Status::InvalidArgument("task files: each entry needs a path and a content");
    }
    TaskFile file;
    file.path = entry["path"].get<std::string>();
    if (!SafeRelativePath(file.path)) {
      return Status::InvalidArgument("task files: refusing path '" + file.path + "'");
    }
    CAIRN_ASSIGN_OR_RETURN(file.content, Base64Decode(entry["content"].get<std::string>()));
    if (entry.contains("mode") && entry["mode"].is_number_unsigned()) {
      file.mode = entry["mode"].get<uint32_t>() & 0777;
    }
    files.push_back(std::move(file));
  }
  for (const auto& file : files) {
    const std::filesystem::path target = std::filesystem::path(work_dir) / file.path;
    std::error_code error;
    std::filesystem::create_directories(target.parent_path(), error);
    if (error) {
      return Status::IOError("cannot create " + target.parent_path().string() + ": " +
                             error.message());
    }
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out.write(file.content.data(), static_cast<std::streamsize>(file.content.size()));
    out.close();
    if (!out) return Status::IOError("cannot write " + target.string());
    if (::chmod(target.c_str(), file.mode) != 0) {
      return Status::IOError("cannot set the mode of " + target.string());
    }
  }
  return Status::Ok();
}

}  // namespace cairn::agent
