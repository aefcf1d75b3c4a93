// The HTTP server and client over real loopback sockets.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api/http/http_client.h"
#include "api/http/http_server.h"

namespace cairn::http {
namespace {

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
  EXPECT_FALSE(Client::FromUrl("https://x:1").ok());
  EXPECT_FALSE(Client::FromUrl("http://nohost").ok());
  EXPECT_FALSE(Client::FromUrl("http://h:99999").ok());
}

}  // namespace
}  // namespace cairn::http
