// The HTTP server and client with TLS over real loopback sockets, with a CA and server
// certificate made for each test (tests/support/test_certificates.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_support.h"

namespace cairn::net {
namespace {

using testing::MakeTestCertificates;
using testing::RawConnection;
using testing::TempDir;
using testing::TestCertificates;

Response Echo(const Request& request) {
  Response response;
  response.body = request.method + " " + request.path + " " + request.body;
  return response;
}

class HttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = MakeTestCertificates(dir_.path());
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    certificates_ = *made;
  }

  Server::Options TlsOptions() const {
    Server::Options options;
    options.tls_cert_file = certificates_.cert_file;
    options.tls_key_file = certificates_.key_file;
    return options;
  }

  // A client of 127.0.0.1:`port` that trusts the test CA.
  Client TrustingClient(uint16_t port) const {
    return Client("127.0.0.1", port, ClientOptions{true, certificates_.ca_file});
  }

  TempDir dir_;
  TestCertificates certificates_;
};

TEST_F(HttpsTest, AClientThatTrustsTheCaGetsAnswersOnAKeptAliveConnection) {
  Server server(TlsOptions(), Echo);
  ASSERT_TRUE(server.Start().ok());
  Client client = TrustingClient(server.port());
  for (int i = 0; i < 3; ++i) {
    auto response = client.Request("POST", "/a", "payload");
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "POST /a payload");
  }
  // By name too (SNI and a DNS name check), from a URL as the agent and tools make them.
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    auto by_url = Client::FromUrl("https://" + host + ":" + std::to_string(server.port()) + "/",
                                  certificates_.ca_file);
    ASSERT_TRUE(by_url.ok()) << by_url.status().ToString();
    auto response = by_url->Request("GET", "/b");
    ASSERT_TRUE(response.ok()) << host << ": " << response.status().ToString();
    EXPECT_EQ(response->body, "GET /b ");
  }
}

TEST_F(HttpsTest, AClientThatDoesNotTrustTheCaIsRefusedWithAClearStatus) {
  Server server(TlsOptions(), Echo);
  ASSERT_TRUE(server.Start().ok());
  // The system's CAs do not include a CA made a moment ago.
  auto system_only =
      Client("127.0.0.1", server.port(), ClientOptions{true, ""}).Request("GET", "/");
  EXPECT_EQ(system_only.status().code(), StatusCode::kUnauthenticated)
      << system_only.status().ToString();
  EXPECT_NE(system_only.status().message().find("failed verification"), std::string::npos)
      << system_only.status().message();
  // Nor does another CA.
  TempDir other_dir;
  auto other = MakeTestCertificates(other_dir.path());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto other_ca =
      Client("127.0.0.1", server.port(), ClientOptions{true, other->ca_file}).Request("GET", "/");
  EXPECT_EQ(other_ca.status().code(), StatusCode::kUnauthenticated) << other_ca.status().ToString();
  EXPECT_NE(other_ca.status().message().find(other->ca_file), std::string::npos)
      << other_ca.status().message();
  // The server is none the worse for it.
  auto trusted = TrustingClient(server.port()).Request("GET", "/");
  ASSERT_TRUE(trusted.ok()) << trusted.status().ToString();
}

TEST(HttpsNameTest, ACertificateForAnotherNameIsRefused) {
  TempDir dir;
  auto made = MakeTestCertificates(dir.path(), "DNS:elsewhere.example");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Server::Options options;
  options.tls_cert_file = made->cert_file;
  options.tls_key_file = made->key_file;
  Server server(options, Echo);
  ASSERT_TRUE(server.Start().ok());
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    auto response =
        Client(host, server.port(), ClientOptions{true, made->ca_file}).Request("GET", "/");
    EXPECT_EQ(response.status().code(), StatusCode::kUnauthenticated)
        << host << ": " << response.status().ToString();
    EXPECT_NE(response.status().message().find("mismatch"), std::string::npos)
        << response.status().message();
  }
}

TEST_F(HttpsTest, PlainHttpOnTheTlsPortEndsOnlyThatConnection) {
  Server::Options options = TlsOptions();
  options.read_timeout = std::chrono::milliseconds(200);
  Server server(options, Echo);
  ASSERT_TRUE(server.Start().ok());
  auto plain = Client("127.0.0.1", server.port()).Request("GET", "/");
  EXPECT_EQ(plain.status().code(), StatusCode::kUnavailable) << plain.status().ToString();
  // A connection that never begins its handshake is closed after the read timeout.
  const int fd = RawConnection(server.port());
  ASSERT_GE(fd, 0);
  char byte;
  EXPECT_EQ(::read(fd, &byte, 1), 0) << "the server closes a connection that never shakes hands";
  ::close(fd);
  auto trusted = TrustingClient(server.port()).Request("GET", "/after");
  ASSERT_TRUE(trusted.ok()) << trusted.status().ToString();
  EXPECT_EQ(trusted->body, "GET /after ");
}

TEST_F(HttpsTest, ATlsClientOfAPlainServerFailsWithoutHanging) {
  Server server({}, Echo);
  ASSERT_TRUE(server.Start().ok());
  auto response =
      TrustingClient(server.port()).Request("GET", "/", "", {}, std::chrono::seconds(5));
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable) << response.status().ToString();
}

TEST_F(HttpsTest, LimitsAndStreamsWorkUnderTls) {
  Server::Options options = TlsOptions();
  options.max_body_bytes = 1024;
  options.max_header_bytes = 8 * 1024;
  Server server(options, [](const Request& request) {
    if (request.path != "/stream") return Echo(request);
    Response response;
    response.stream = [](const ChunkWriter& write) {
      write("one\ntw");
      write("o\n");
    };
    return response;
  });
  ASSERT_TRUE(server.Start().ok());
  auto too_big = TrustingClient(server.port()).Request("POST", "/", std::string(64 * 1024, 'a'));
  ASSERT_TRUE(too_big.ok()) << too_big.status().ToString();
  EXPECT_EQ(too_big->status, 413);
  auto big_head =
      TrustingClient(server.port()).Request("GET", "/", "", {{"X-Big", std::string(16384, 'h')}});
  ASSERT_TRUE(big_head.ok()) << big_head.status().ToString();
  EXPECT_EQ(big_head->status, 431);
  std::vector<std::string> lines;
  Status streamed = TrustingClient(server.port()).StreamLines("GET", "/stream", [&](auto line) {
    lines.emplace_back(line);
    return true;
  });
  ASSERT_TRUE(streamed.ok()) << streamed.ToString();
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
}

TEST_F(HttpsTest, AnUnusableCertificateOrKeyStopsTheStartNamingTheFile) {
  TempDir other_dir;
  auto other = MakeTestCertificates(other_dir.path());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const std::string missing = dir_.Sub("missing.key");
  struct Case {
    std::string cert, key, named;
  };
  const std::vector<Case> cases = {
      {certificates_.cert_file, missing, missing},
      {dir_.Sub("missing.crt"), certificates_.key_file, dir_.Sub("missing.crt")},
      {certificates_.cert_file, certificates_.cert_file, certificates_.cert_file},  // not a key
      {certificates_.cert_file, other->key_file, other->key_file},  // another certificate's key
      {certificates_.cert_file, "", "key file"},
  };
  for (const Case& c : cases) {
    Server::Options options;
    options.tls_cert_file = c.cert;
    options.tls_key_file = c.key;
    Server server(options, Echo);
    Status started = server.Start();
    EXPECT_EQ(started.code(), StatusCode::kInvalidArgument) << c.cert << " " << c.key;
    EXPECT_NE(started.message().find(c.named), std::string::npos) << started.message();
  }
}

TEST_F(HttpsTest, AMissingCaFileIsInvalidArgumentNamingIt) {
  Server server(TlsOptions(), Echo);
  ASSERT_TRUE(server.Start().ok());
  const std::string missing = dir_.Sub("nowhere.pem");
  auto response =
      Client("127.0.0.1", server.port(), ClientOptions{true, missing}).Request("GET", "/");
  EXPECT_EQ(response.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(response.status().message().find(missing), std::string::npos)
      << response.status().message();
}

}  // namespace
}  // namespace cairn::net
