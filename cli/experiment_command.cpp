#include "cli/experiment_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "base/document_limits.h"
#include "base/encoding.h"
#include "cli/shell_command.h"
#include "net/http_client.h"

namespace cairn::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Result<std::string> ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  if (!in || in.bad()) return Status::InvalidArgument("cannot read " + path.string());
  return content.str();
}

// One file as Determined's CLI sends it: a regular file (tar's type '0'), its mode's permission
// bits, its content in base64.
json FileEntry(const std::string& path, const std::string& content, uint32_t mode) {
  return {{"path", path}, {"type", 48}, {"content", Base64Encode(content)}, {"mode", mode}};
}

}  // namespace

Result<json> ExperimentCreateBody(const std::string& config_file, const std::string& context,
                                  const std::vector<std::string>& packages) {
  CAIRN_ASSIGN_OR_RETURN(std::string config, ReadWhole(config_file));
  std::error_code error;
  if (!fs::is_directory(context, error)) {
    return Status::InvalidArgument("the context " + context + " is not a directory");
  }
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(context, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory() && it->path().filename() == "__pycache__") {
      it.disable_recursion_pending();
    } else if (it->is_regular_file()) {
      files.push_back(it->path());
    }
  }
  if (error) return Status::InvalidArgument("cannot list " + context + ": " + error.message());
  std::sort(files.begin(), files.end());
  json model_definition = json::array();
  int64_t context_bytes = 0;
  for (const auto& file : files) {
    CAIRN_ASSIGN_OR_RETURN(std::string content, ReadWhole(file));
    struct stat info {};
    const uint32_t mode = ::stat(file.c_str(), &info) == 0 ? (info.st_mode & 0777) : 0644;
    context_bytes += static_cast<int64_t>(content.size());
    model_definition.push_back(
        FileEntry(fs::relative(file, context).generic_string(), content, mode));
  }
  json uploads = json::array();
  int64_t package_bytes = 0;
  for (const auto& package : packages) {
    if (!fs::is_regular_file(package, error)) {
      return Status::InvalidArgument("the package " + package + " is not a file");
    }
    package_bytes += static_cast<int64_t>(fs::file_size(package, error));
  }
  // Before reading the packages: a package too large is refused without holding it in memory.
  CAIRN_RETURN_IF_ERROR(CheckContextWithPackagesSize(context_bytes, package_bytes));
  for (const auto& package : packages) {
    CAIRN_ASSIGN_OR_RETURN(std::string content, ReadWhole(package));
    uploads.push_back(FileEntry(fs::path(package).filename().string(), content, 0644));
  }
  json body = {{"config", config}, {"modelDefinition", model_definition}, {"activate", true}};
  if (!uploads.empty()) body["packages"] = uploads;
  return body;
}

ExperimentCommand::ExperimentCommand(CLI::App& cairn) {
  experiment_ = cairn.add_subcommand("experiment", "experiments, with PEDL's local packages");
  experiment_->require_subcommand(1);
  create_ = experiment_->add_subcommand(
      "create",
      "create and activate an experiment from CONFIG (YAML) and the model definition in "
      "CONTEXT; each --package (a wheel or source distribution) is installed into every "
      "trial's prepared environment");
  create_->add_option("config", config_file_, "the experiment configuration (YAML)")->required();
  create_->add_option("context", context_, "the model definition directory")->required();
  create_->add_option("--package", packages_, "a local Python package to install (repeatable)")
      ->type_name("FILE");
  AddMasterOption(*create_, master_);
}

bool ExperimentCommand::chosen() const { return experiment_->parsed(); }

int ExperimentCommand::Run(std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& message) {
    err << "cairn experiment create: " << message << "\n";
    return 1;
  };
  auto body = ExperimentCreateBody(config_file_, context_, packages_);
  if (!body.ok()) return fail(body.status().message());
  const std::string url = MasterUrl(master_);
  auto token = SessionToken(url);
  if (!token.ok()) return fail(token.status().message());
  const char* ca_file = std::getenv("DET_MASTER_CERT_FILE");
  auto client = net::Client::FromUrl(url, ca_file != nullptr ? ca_file : "");
  if (!client.ok()) return fail(client.status().message());
  // Up to 128 MiB of base64 to send and a context to store: more than a request's usual time.
  auto answer =
      client->Request("POST", "/api/v1/experiments", body->dump(),
                      {{"Authorization", "Bearer " + *token}, {"Content-Type", "application/json"}},
                      std::chrono::minutes(5));
  if (!answer.ok()) return fail(answer.status().message());
  json reply = json::parse(answer->body, nullptr, false);
  if (answer->status != 200 || !reply.is_object() || !reply.contains("experiment")) {
    return fail("the master answered " + std::to_string(answer->status) + ": " +
                (reply.is_object() ? reply.value("message", answer->body) : answer->body));
  }
  out << "Created experiment " << reply["experiment"].value("id", json(0)).dump() << "\n";
  return 0;
}

}  // namespace cairn::cli
