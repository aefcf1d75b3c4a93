// The HTTP server and client over real loopback sockets.
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "base/thread_priority.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "tests/support/test_support.h"

namespace cairn::net {
namespace {

using testing::RawConnection;
using testing::ReadUntilClosed;

TEST(HttpTest, RoundTripsRequestsOnAKeptAliveConnection) {
  std::atomic<int> calls{0};
  Server server({}, [&](const Request& request) {
    ++calls;
    Response response;
    response.body = request.method + " " + request.path + " q=" + request.QueryParam("q") +
                    " body=" + request.body + " h=" + request.Header("x-test");
    return response;
  });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  for (int i = 0; i < 3; ++i) {
    auto response = client.Request("POST", "/a%20b?q=x+y", "payload", {{"X-Test", "v"}});
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "POST /a b q=x y body=payload h=v");
  }
  EXPECT_EQ(calls.load(), 3);
}

// Each connection is served on a thread named for top -H and perf, and for bench_scheduling,
// which splits the master's CPU by thread name.
TEST(HttpTest, RequestsAreServedOnThreadsNamedCairnHttp) {
  Server server({}, [&](const Request&) {
    char name[16] = {};
    ::pthread_getname_np(::pthread_self(), name, sizeof name);
    Response response;
    response.body = name;
    return response;
  });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  auto response = client.Request("GET", "/");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, kHttpThreadName);
}

TEST(HttpTest, OversizedBodiesGet413) {
  Server::Options options;
  options.max_body_bytes = 1024;
  Server server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  auto response = client.Request("POST", "/x", std::string(4096, 'a'));
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 413);
}

TEST(HttpTest, ALargeRefusedBodyStillGetsIts413) {
  Server::Options options;
  options.max_body_bytes = 1024;
  Server server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  auto response = client.Request("POST", "/x", std::string(8 << 20, 'a'));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 413);
}

TEST(HttpTest, AJsonBodyThatBreaksTheLimitsGets400WhileItIsRead) {
  Server::Options options;
  options.json_body_limits = kRequestBodyLimits;
  std::atomic<int> calls{0};
  Server server(options, [&](const Request&) {
    ++calls;
    return Response{};
  });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  const std::string huge(16u << 20, 'x');
  auto response = client.Request("POST", "/x", R"({"config": {"description": ")" + huge + "\"}}");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 400);
  EXPECT_NE(response->body.find("description: larger than 1048576 bytes"), std::string::npos)
      << response->body;
  EXPECT_EQ(calls.load(), 0) << "the handler never sees a refused body";
  // A large body within the limits (a file's content) is served.
  auto file = Client("127.0.0.1", server.port())
                  .Request("POST", "/x", R"({"path": "a", "content": ")" + huge + "\"}");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->status, 200);
  EXPECT_EQ(calls.load(), 1);
}

TEST(HttpTest, AClientThatExpectsContinueGetsIt) {
  Server server({}, [](const Request& request) {
    Response response;
    response.body = request.body;
    return response;
  });
  ASSERT_TRUE(server.Start().ok());
  const int fd = RawConnection(server.port());
  ASSERT_GE(fd, 0);
  const std::string head =
      "POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n";
  ASSERT_EQ(::write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
  // The client sends its body only after the interim answer: reading it first is the test.
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  std::string received(interim.size(), '\0');
  size_t got = 0;
  while (got < received.size()) {
    ssize_t n = ::read(fd, received.data() + got, received.size() - got);
    ASSERT_GT(n, 0);
    got += static_cast<size_t>(n);
  }
  EXPECT_EQ(received, interim);
  ASSERT_EQ(::write(fd, "body", 4), 4);
  std::string answer;
  char chunk[512];
  while (answer.find("\r\n\r\nbody") == std::string::npos) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    ASSERT_GT(n, 0) << answer;
    answer.append(chunk, static_cast<size_t>(n));
  }
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  ::close(fd);
}

TEST(HttpTest, AnIdleConnectionIsClosedAfterTheIdleTimeout) {
  Server::Options options;
  options.idle_timeout = std::chrono::milliseconds(100);
  Server server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(server.Start().ok());
  const int fd = RawConnection(server.port());
  ASSERT_GE(fd, 0);
  char byte;
  EXPECT_EQ(::read(fd, &byte, 1), 0) << "the server closes a silent connection";
  ::close(fd);
}

TEST(HttpTest, OversizedHeadersGet431) {
  Server::Options options;
  options.max_header_bytes = 8 * 1024;
  Server server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  auto response = client.Request("GET", "/x", "", {{"X-Big", std::string(16 * 1024, 'h')}});
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 431);
  auto fine = Client("127.0.0.1", server.port()).Request("GET", "/x", "", {{"X-Small", "h"}});
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->status, 200);
}

TEST(HttpTest, ARequestThatStallsHalfWayIsDropped) {
  Server::Options options;
  options.read_timeout = std::chrono::milliseconds(100);
  Server server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(server.Start().ok());
  const int fd = RawConnection(server.port());
  ASSERT_GE(fd, 0);
  const std::string start = "GET /x HTTP/1.1\r\nHost: a\r\n";  // and never the blank line
  ASSERT_EQ(::write(fd, start.data(), start.size()), static_cast<ssize_t>(start.size()));
  std::string answer = ReadUntilClosed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u)
      << "the server answers 408 and closes a connection whose request stalls: " << answer;
  ::close(fd);
}

TEST(HttpTest, ARequestTricklingInPastItsDeadlineIsCutThoughEachByteComesInTime) {
  Server::Options options;
  options.read_timeout = std::chrono::seconds(10);
  options.request_timeout = std::chrono::milliseconds(300);
  Server server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(server.Start().ok());
  const int fd = RawConnection(server.port());
  ASSERT_GE(fd, 0);
  // A byte every 20 ms never stalls the read, yet 300 bytes need 6 s: the deadline ends it.
  const std::string head = "GET /x HTTP/1.1\r\nX-Slow: " + std::string(300, 'a');
  size_t sent = 0;
  for (; sent < head.size(); ++sent) {
    if (::send(fd, &head[sent], 1, MSG_NOSIGNAL) != 1) break;
    pollfd answered{fd, POLLIN, 0};
    if (::poll(&answered, 1, 20) > 0) break;
  }
  EXPECT_LT(sent, head.size()) << "the server waited for every byte";
  std::string answer = ReadUntilClosed(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u) << answer;
  ::close(fd);
}

TEST(HttpTest, AFullAddressLetsItsLongestIdleConnectionGoButNeverABusyOne) {
  Server::Options options;
  options.max_connections_per_address = 3;
  Server server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(server.Start().ok());
  // Idle connections (nothing sent) make room: the oldest is closed for each newcomer.
  std::vector<int> idle;
  for (int i = 0; i < 6; ++i) idle.push_back(RawConnection(server.port()));
  char byte;
  EXPECT_EQ(::read(idle[0], &byte, 1), 0) << "the longest-idle connection was let go";
  Client client("127.0.0.1", server.port());
  auto answer = client.Request("GET", "/");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->status, 200);
  for (int fd : idle) ::close(fd);

  // Connections in the middle of a request are never let go: the next one is refused.
  Server busy_server(options, [](const Request&) { return Response{}; });
  ASSERT_TRUE(busy_server.Start().ok());
  std::vector<int> busy;
  for (int i = 0; i < 3; ++i) {
    const int fd = RawConnection(busy_server.port());
    const std::string head =
        "POST /x HTTP/1.1\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n";
    ASSERT_EQ(::write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
    char continued[64];
    // "100 Continue": the server has read the head, so this connection is busy for sure.
    ASSERT_GT(::read(fd, continued, sizeof continued), 0);
    busy.push_back(fd);
  }
  const int refused = RawConnection(busy_server.port());
  EXPECT_EQ(ReadUntilClosed(refused).rfind("HTTP/1.1 503", 0), 0u);
  ::close(refused);
  for (int fd : busy) ::close(fd);
}

TEST(HttpTest, StreamsLinesUntilTheServerEndsTheResponse) {
  Server server({}, [](const Request&) {
    Response response;
    response.stream = [](const ChunkWriter& write) {
      write("one\ntw");
      write("o\nthree\n");
    };
    return response;
  });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  std::vector<std::string> lines;
  auto status = client.StreamLines("GET", "/", [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(HttpTest, CancelUnblocksAStreamThatWaitsForever) {
  std::atomic<bool> stop{false};
  Server server({}, [&](const Request&) {
    Response response;
    response.stream = [&](const ChunkWriter& write) {
      write("first\n");
      while (!stop && write("")) std::this_thread::yield();
    };
    return response;
  });
  ASSERT_TRUE(server.Start().ok());
  Client client("127.0.0.1", server.port());
  std::atomic<bool> got_first{false};
  std::thread reader([&] {
    (void)client.StreamLines("GET", "/", [&](std::string_view) {
      got_first = true;
      got_first.notify_all();
      return true;
    });
  });
  got_first.wait(false);
  client.Cancel();
  reader.join();
  stop = true;
  server.Stop();
  EXPECT_TRUE(got_first.load());
}

TEST(HttpTest, AConnectionRefusalIsUnavailable) {
  uint16_t port;
  {
    Server server({}, [](const Request&) { return Response{}; });
    ASSERT_TRUE(server.Start().ok());
    port = server.port();
  }
  Client client("127.0.0.1", port);
  auto response = client.Request("GET", "/");
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
}

TEST(HttpTest, UrlsAreParsedStrictly) {
  EXPECT_TRUE(Client::FromUrl("http://127.0.0.1:8080/").ok());
  EXPECT_TRUE(Client::FromUrl("localhost:80").ok());
  EXPECT_TRUE(Client::FromUrl("https://x:1").ok());
  EXPECT_TRUE(Client::FromUrl("https://x:1")->options().tls);
  EXPECT_FALSE(Client::FromUrl("http://x:1", "ca.pem")->options().tls);
  EXPECT_FALSE(Client::FromUrl("ftp://x:1").ok());
  EXPECT_FALSE(Client::FromUrl("http://nohost").ok());
  EXPECT_FALSE(Client::FromUrl("http://h:99999").ok());
}

}  // namespace
}  // namespace cairn::net
