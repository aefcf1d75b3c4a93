#include "tests/support/object_store_servers.h"

#include <filesystem>

namespace cairn::testing {

namespace {

// The servers' starters, where ops/install-test-servers.sh puts them.
Result<std::string> ServerBinary(const std::string& name) {
  const std::string path =
      std::string(CAIRN_BINARY_DIR) + "/test-servers/node_modules/.bin/" + name;
  if (!std::filesystem::exists(path)) {
    return Status::NotFound(path + " is missing: run ops/install-test-servers.sh");
  }
  return path;
}

// The port in a line like "... listening on 127.0.0.1:4321" or "... on http://127.0.0.1:4321".
uint16_t PortAfterLoopback(const std::string& line) {
  const size_t at = line.rfind("127.0.0.1:");
  if (at == std::string::npos) return 0;
  return static_cast<uint16_t>(std::stoi(line.substr(at + 10)));
}

}  // namespace

Result<std::unique_ptr<S3Server>> S3Server::Start(const std::string& data_dir,
                                                  const std::string& bucket) {
  CAIRN_ASSIGN_OR_RETURN(std::string binary, ServerBinary("s3rver"));
  std::filesystem::create_directories(data_dir);
  auto server = std::unique_ptr<S3Server>(new S3Server());
  CAIRN_ASSIGN_OR_RETURN(
      server->process_,
      ChildProcess::Start({binary, "--directory", data_dir, "--address", "127.0.0.1", "--port", "0",
                           "--configure-bucket", bucket}));
  CAIRN_ASSIGN_OR_RETURN(
      std::string line,
      server->process_->WaitForLine(
          [](const std::string& text) { return text.find("listening on") != std::string::npos; },
          std::chrono::seconds(60)));
  server->port_ = PortAfterLoopback(line);
  if (server->port_ == 0) return Status::Internal("s3rver said: " + line);
  return server;
}

Result<std::unique_ptr<AzureBlobServer>> AzureBlobServer::Start(const std::string& data_dir) {
  CAIRN_ASSIGN_OR_RETURN(std::string binary, ServerBinary("azurite-blob"));
  std::filesystem::create_directories(data_dir);
  auto server = std::unique_ptr<AzureBlobServer>(new AzureBlobServer());
  CAIRN_ASSIGN_OR_RETURN(
      server->process_,
      ChildProcess::Start({binary, "--blobHost", "127.0.0.1", "--blobPort", "0", "--location",
                           data_dir, "--skipApiVersionCheck", "--loose", "--disableTelemetry"}));
  CAIRN_ASSIGN_OR_RETURN(
      std::string line,
      server->process_->WaitForLine(
          [](const std::string& text) { return text.find("listens on") != std::string::npos; },
          std::chrono::seconds(60)));
  server->port_ = PortAfterLoopback(line);
  if (server->port_ == 0) return Status::Internal("azurite said: " + line);
  return server;
}

std::string AzureBlobServer::connection_string() const {
  // Azurite's documented development account (public).
  return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
         "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
         "KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:" +
         std::to_string(port_) + "/devstoreaccount1;";
}

}  // namespace cairn::testing
