// The object-store servers the tests run on loopback, as real child processes: s3rver (S3) and
// azurite (Microsoft's Azure Blob emulator), installed from npm by ops/install-test-servers.sh.
// Each listens on a port of its own choosing (port 0) and keeps its data in a directory the test
// owns; the destructor kills it.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "tests/support/test_support.h"

namespace cairn::testing {

class S3Server {
 public:
  // Starts s3rver with bucket `bucket` made. Its only account is S3RVER/S3RVER.
  static Result<std::unique_ptr<S3Server>> Start(const std::string& data_dir,
                                                 const std::string& bucket);
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  static constexpr const char* kAccessKey = "S3RVER";
  static constexpr const char* kSecretKey = "S3RVER";

 private:
  std::unique_ptr<ChildProcess> process_;
  uint16_t port_ = 0;
};

class AzureBlobServer {
 public:
  static Result<std::unique_ptr<AzureBlobServer>> Start(const std::string& data_dir);
  // The connection string of azurite's development account at this server.
  std::string connection_string() const;

 private:
  std::unique_ptr<ChildProcess> process_;
  uint16_t port_ = 0;
};

}  // namespace cairn::testing
