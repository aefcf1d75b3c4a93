// The server's tunnels (Response::tunnel) and the WebSocket client (PipeWebSocket) over real
// loopback sockets, plain and with TLS: upstreams are small services on threads of the test,
// written with raw sockets and net/websocket.h's framing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/encoding.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/websocket.h"
#include "net/websocket_client.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_support.h"

namespace cairn::net {
namespace {

using testing::RawConnection;

// The bound of every wait in these tests: a tunnel that loses bytes fails the test instead of
// hanging it.
constexpr int kWaitMs = 20000;

// Reads what has arrived, waiting up to kWaitMs: the byte count, 0 at the end, -1 on an error or
// when nothing came in time.
ssize_t ReadSome(int fd, char* buffer, size_t capacity) {
  pollfd readable{fd, POLLIN, 0};
  if (::poll(&readable, 1, kWaitMs) != 1) return -1;
  return ::read(fd, buffer, capacity);
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until `done(received)` holds, the peer ends, or a wait runs out.
std::string ReadUntil(int fd, const std::function<bool(const std::string&)>& done) {
  std::string received;
  char buffer[64 * 1024];
  while (!done(received)) {
    ssize_t n = ReadSome(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    received.append(buffer, static_cast<size_t>(n));
  }
  return received;
}

std::string ReadExactly(int fd, size_t size) {
  return ReadUntil(fd, [&](const std::string& received) { return received.size() >= size; });
}

std::string ReadToEnd(int fd) {
  return ReadUntil(fd, [](const std::string&) { return false; });
}

// Bytes that show where each one belongs: a lost or reordered byte changes the comparison.
std::string Pattern(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 7 + i / 251) % 256);
  return bytes;
}

// A TCP service on 127.0.0.1 that hands the connections it accepts, one after another, to
// `serve` on a thread of its own, and closes each when `serve` returns.
class Upstream {
 public:
  explicit Upstream(std::function<void(int fd)> serve, int connections = 1) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), size), 0);
    EXPECT_EQ(::listen(listener_, 8), 0);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, serve = std::move(serve), connections] {
      for (int i = 0; i < connections; ++i) {
        pollfd incoming{listener_, POLLIN, 0};
        if (::poll(&incoming, 1, kWaitMs) != 1) return;
        int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) return;
        serve(fd);
        ::close(fd);
      }
    });
  }
  ~Upstream() {
    ::shutdown(listener_, SHUT_RDWR);  // wakes an accept that waits
    thread_.join();
    ::close(listener_);
  }
  uint16_t port() const { return port_; }

 private:
  int listener_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

// Sends back every byte until the peer ends its sending; true if it did (not a wait running out).
bool EchoUntilEnd(int fd) {
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = ReadSome(fd, buffer, sizeof buffer);
    if (n == 0) return true;
    if (n < 0 || !WriteAll(fd, std::string_view(buffer, static_cast<size_t>(n)))) return false;
  }
}

// The request as the client sent it, for a kRaw tunnel's first bytes (as a proxy would pass it
// on, minus any rewriting).
std::string PassOn(const Request& request) {
  std::string head = request.method + " " + request.target + " HTTP/1.1\r\n";
  for (const auto& [name, value] : request.headers) head += name + ": " + value + "\r\n";
  return head + "\r\n" + request.body;
}

Response TunnelTo(Tunnel::Mode mode, uint16_t port, const Request& request,
                  std::function<void(size_t)> on_traffic = nullptr) {
  auto tunnel = std::make_shared<Tunnel>();
  tunnel->mode = mode;
  tunnel->host = "127.0.0.1";
  tunnel->port = port;
  if (mode == Tunnel::Mode::kRaw) tunnel->first_bytes = PassOn(request);
  tunnel->on_traffic = std::move(on_traffic);
  Response response;
  response.tunnel = std::move(tunnel);
  return response;
}

// Reads one HTTP request head and its Content-Length body from `fd`.
std::string ReadRequest(int fd) {
  std::string received = ReadUntil(
      fd, [](const std::string& bytes) { return bytes.find("\r\n\r\n") != std::string::npos; });
  const size_t head_end = received.find("\r\n\r\n");
  if (head_end == std::string::npos) return received;
  size_t body_size = 0;
  const std::string lower = AsciiLower(received.substr(0, head_end));
  const size_t length = lower.find("content-length: ");
  if (length != std::string::npos) body_size = std::stoul(lower.substr(length + 16));
  const size_t total = head_end + 4 + body_size;
  if (received.size() < total) received += ReadExactly(fd, total - received.size());
  return received;
}

// Checks an answer that refuses: its status, and the API's error body with `code` (gRPC's) and a
// message that says `words`.
void ExpectErrorAnswer(const Result<ClientResponse>& response, int status, int code,
                       const std::string& words) {
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, status);
  auto body = nlohmann::json::parse(response->body, nullptr, false);
  ASSERT_TRUE(body.is_object() && body["message"].is_string()) << response->body;
  EXPECT_EQ(body["code"], code);
  EXPECT_NE(body["message"].get<std::string>().find(words), std::string::npos) << response->body;
  EXPECT_EQ(body["details"], nlohmann::json::array());
}

// A WebSocket peer on a thread that PipeWebSocket joins to a socket pair: the test reads and
// writes the other end, fd().
class PipedWebSocket {
 public:
  explicit PipedWebSocket(WebSocketTarget target) {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    thread_ = std::thread(
        [this, target = std::move(target)] { status_ = PipeWebSocket(target, fds_[1], fds_[1]); });
  }
  ~PipedWebSocket() {
    ::shutdown(fds_[0], SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int fd() const { return fds_[0]; }
  // Ends what goes into the WebSocket: the client then closes it.
  void EndInput() { ::shutdown(fds_[0], SHUT_WR); }
  Status Finish() {
    thread_.join();
    return status_;
  }

 private:
  int fds_[2] = {-1, -1};
  std::thread thread_;
  Status status_;
};

// A WebSocket echo service behind a kRaw tunnel: answers the upgrade itself, then sends every
// data frame back as it came, answers pings, and a close with a close. Records what it saw.
struct WebSocketEcho {
  std::atomic<bool> closed_by_client{false};
  std::promise<std::string> upgrade_request;

  void Serve(int fd) {
    const std::string request = ReadRequest(fd);
    upgrade_request.set_value(request);
    const std::string lower = AsciiLower(request);
    const size_t key_at = lower.find("sec-websocket-key: ");
    if (key_at == std::string::npos) return;
    const std::string key = request.substr(key_at + 19, request.find("\r\n", key_at) - key_at - 19);
    if (!WriteAll(fd,
                  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Accept: " +
                      WebSocketAccept(key) + "\r\n\r\n")) {
      return;
    }
    WebSocketDecoder decoder(WebSocketDecoder::Peer::kClient, 1u << 20);
    char buffer[64 * 1024];
    while (true) {
      ssize_t n = ReadSome(fd, buffer, sizeof buffer);
      if (n <= 0) return;
      decoder.Feed(std::string_view(buffer, static_cast<size_t>(n)));
      while (true) {
        auto next = decoder.Next();
        if (!next.ok() || !next->has_value()) break;
        const WebSocketFrame& frame = **next;
        if (frame.opcode == WebSocketOpcode::kClose) {
          closed_by_client = true;
          WriteAll(fd, EncodeWebSocketFrame(WebSocketOpcode::kClose, frame.payload));
          return;
        }
        const auto opcode =
            frame.opcode == WebSocketOpcode::kPing ? WebSocketOpcode::kPong : frame.opcode;
        if (!WriteAll(fd, EncodeWebSocketFrame(opcode, frame.payload, frame.fin))) return;
      }
    }
  }
};

// Plain and TLS: the test's parameter says whether the master serves HTTPS.
class TunnelTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (!GetParam()) return;
    auto made = testing::MakeTestCertificates(dir_.path());
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    certificates_ = *made;
  }

  Server::Options MasterOptions() const {
    Server::Options options;
    options.tls_cert_file = certificates_.cert_file;
    options.tls_key_file = certificates_.key_file;
    return options;
  }
  ClientOptions Transport() const { return ClientOptions{GetParam(), certificates_.ca_file}; }
  Client MasterClient(uint16_t port) const { return Client("127.0.0.1", port, Transport()); }
  WebSocketTarget Target(uint16_t port, const std::string& path) const {
    WebSocketTarget target;
    target.host = "127.0.0.1";
    target.port = port;
    target.transport = Transport();
    target.path = path;
    target.timeout = std::chrono::milliseconds(kWaitMs);
    return target;
  }

  testing::TempDir dir_;
  testing::TestCertificates certificates_;
};

INSTANTIATE_TEST_SUITE_P(PlainAndTls, TunnelTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Tls" : "Plain";
                         });

TEST_P(TunnelTest, ARawTunnelStreamsAnAnswerOverAMebibyteAsItComes) {
  // The upstream sends 1 MiB of lines, then waits until the client has every one of them before
  // it sends the rest: a tunnel that gathered the answer before passing it on never gets there.
  constexpr int kFirstLines = 1024;
  constexpr int kLaterLines = 512;
  const std::string first_line = std::string(1023, 'a');
  const std::string later_line = std::string(1023, 'b');
  std::promise<void> client_has_first_part;
  std::future<void> first_part_seen = client_has_first_part.get_future();
  std::atomic<bool> upstream_saw_client{false};
  std::atomic<bool> request_passed_on{false};
  Upstream upstream([&](int fd) {
    request_passed_on = ReadRequest(fd).rfind("GET /proxy/task/lines?x=1 HTTP/1.1\r\n", 0) == 0;
    std::string first = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
    for (int i = 0; i < kFirstLines; ++i) first += first_line + "\n";
    if (!WriteAll(fd, first)) return;
    if (first_part_seen.wait_for(std::chrono::milliseconds(kWaitMs)) != std::future_status::ready) {
      return;
    }
    upstream_saw_client = true;
    std::string later;
    for (int i = 0; i < kLaterLines; ++i) later += later_line + "\n";
    WriteAll(fd, later);
  });
  Server master(MasterOptions(), [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kRaw, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());

  int first_lines = 0;
  int later_lines = 0;
  Status streamed = MasterClient(master.port())
                        .StreamLines(
                            "GET", "/proxy/task/lines?x=1",
                            [&](std::string_view line) {
                              if (line == first_line && ++first_lines == kFirstLines) {
                                client_has_first_part.set_value();
                              }
                              if (line == later_line) ++later_lines;
                              return true;
                            },
                            {}, std::chrono::milliseconds(kWaitMs));
  EXPECT_TRUE(streamed.ok()) << streamed.ToString();
  EXPECT_EQ(first_lines, kFirstLines);
  EXPECT_EQ(later_lines, kLaterLines);
  EXPECT_TRUE(upstream_saw_client) << "the first megabyte reached the client only at the end";
  EXPECT_TRUE(request_passed_on);
}

TEST_P(TunnelTest, ARawTunnelPassesARequestBodyAndItsAnswer) {
  const std::string body = Pattern(300 * 1024);
  Upstream upstream([&](int fd) {
    const std::string request = ReadRequest(fd);
    const std::string received_body = request.substr(request.find("\r\n\r\n") + 4);
    const std::string answer = "received " + std::to_string(received_body.size()) + " bytes, " +
                               (received_body == body ? "intact" : "damaged");
    WriteAll(fd, "HTTP/1.1 201 Created\r\nContent-Length: " + std::to_string(answer.size()) +
                     "\r\nConnection: close\r\n\r\n" + answer);
  });
  Server master(MasterOptions(), [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kRaw, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  auto response = MasterClient(master.port()).Request("POST", "/proxy/task/upload", body);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, "received 307200 bytes, intact");
}

TEST_P(TunnelTest, AnUnreachableUpstreamGets502NamingIt) {
  uint16_t closed_port;
  {
    Upstream gone([](int) {}, 0);
    closed_port = gone.port();
  }
  Server master(MasterOptions(), [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kRaw, closed_port, request);
  });
  ASSERT_TRUE(master.Start().ok());
  ExpectErrorAnswer(MasterClient(master.port()).Request("GET", "/proxy/task/"), 502, 14,
                    "127.0.0.1:" + std::to_string(closed_port));
}

TEST_P(TunnelTest, ARawTunnelCarriesAWebSocketBothWays) {
  WebSocketEcho echo;
  Upstream upstream([&](int fd) { echo.Serve(fd); });
  Server master(MasterOptions(), [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kRaw, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  WebSocketTarget target = Target(master.port(), "/proxy/task/kernels/1/channels");
  target.headers = {{"Authorization", "Bearer secret-token"}, {"Cookie", "a=b"}};
  PipedWebSocket client(target);
  ASSERT_TRUE(WriteAll(client.fd(), "hello"));
  EXPECT_EQ(ReadExactly(client.fd(), 5), "hello");
  const std::string large = Pattern(700 * 1024);
  std::thread writer([&] { WriteAll(client.fd(), large); });
  EXPECT_TRUE(ReadExactly(client.fd(), large.size()) == large);
  writer.join();
  client.EndInput();
  Status ended = client.Finish();
  EXPECT_TRUE(ended.ok()) << ended.ToString();
  EXPECT_TRUE(echo.closed_by_client);
  const std::string lower = AsciiLower(echo.upgrade_request.get_future().get());
  EXPECT_EQ(lower.rfind("get /proxy/task/kernels/1/channels http/1.1\r\n", 0), 0u) << lower;
  EXPECT_NE(lower.find("authorization: bearer secret-token\r\n"), std::string::npos) << lower;
  EXPECT_NE(lower.find("cookie: a=b\r\n"), std::string::npos) << lower;
}

TEST_P(TunnelTest, AWebSocketToTcpTunnelCarriesAMebibyteInOrderAndCountsIt) {
  std::promise<bool> upstream_end;
  Upstream upstream([&](int fd) { upstream_end.set_value(EchoUntilEnd(fd)); });
  std::atomic<size_t> counted{0};
  Server master(MasterOptions(), [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kWebSocketToTcp, upstream.port(), request,
                    [&](size_t bytes) { counted += bytes; });
  });
  ASSERT_TRUE(master.Start().ok());
  PipedWebSocket client(Target(master.port(), "/proxy/shell/"));
  const std::string sent = Pattern(1 << 20);
  std::thread writer([&] {
    for (size_t at = 0; at < sent.size(); at += 10000) {
      if (!WriteAll(client.fd(), std::string_view(sent).substr(at, 10000))) return;
    }
  });
  const std::string received = ReadExactly(client.fd(), sent.size());
  writer.join();
  EXPECT_EQ(received.size(), sent.size());
  EXPECT_TRUE(received == sent) << "the bytes came back changed or out of order";
  // Everything came back, so every byte was counted on its way in and on its way out.
  EXPECT_EQ(counted.load(), 2 * sent.size());
  // The client's close closes the upstream too.
  client.EndInput();
  Status ended = client.Finish();
  EXPECT_TRUE(ended.ok()) << ended.ToString();
  auto upstream_ended = upstream_end.get_future();
  ASSERT_EQ(upstream_ended.wait_for(std::chrono::milliseconds(kWaitMs)), std::future_status::ready);
  EXPECT_TRUE(upstream_ended.get()) << "the upstream never saw its connection end";
}

TEST_P(TunnelTest, TheUpstreamsEndClosesTheWebSocket) {
  Upstream upstream([&](int fd) { WriteAll(fd, "last words"); });
  Server master(MasterOptions(), [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kWebSocketToTcp, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  PipedWebSocket client(Target(master.port(), "/proxy/shell/"));
  EXPECT_EQ(ReadExactly(client.fd(), 10), "last words");
  // The input stays open: the server's close frame alone ends the client.
  Status ended = client.Finish();
  EXPECT_TRUE(ended.ok()) << ended.ToString();
}

TEST_P(TunnelTest, AWebSocketToTcpTunnelRefusesARequestThatIsNoUpgradeWith400) {
  Upstream upstream([](int) {}, 0);
  Server master(MasterOptions(), [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kWebSocketToTcp, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  ExpectErrorAnswer(MasterClient(master.port()).Request("GET", "/proxy/shell/"), 400, 3, "Upgrade");
}

TEST_P(TunnelTest, StopEndsOpenTunnels) {
  // The raw tunnel's upstream keeps its connection open after its client's end (a half-close):
  // only Stop() shutting the upstream down too ends that tunnel before the test lets go of it.
  WebSocketEcho echo;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<bool> held_until_released;
  Upstream raw_upstream([&](int fd) {
    echo.Serve(fd);
    held_until_released.set_value(released.wait_for(std::chrono::milliseconds(kWaitMs)) ==
                                  std::future_status::ready);
  });
  Upstream shell_upstream([](int fd) { EchoUntilEnd(fd); });
  Server master(MasterOptions(), [&](const Request& request) {
    if (request.path == "/raw") return TunnelTo(Tunnel::Mode::kRaw, raw_upstream.port(), request);
    return TunnelTo(Tunnel::Mode::kWebSocketToTcp, shell_upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  // One tunnel of each kind, each shown open by a round trip.
  PipedWebSocket shell(Target(master.port(), "/shell"));
  ASSERT_TRUE(WriteAll(shell.fd(), "are you there"));
  ASSERT_EQ(ReadExactly(shell.fd(), 13), "are you there");
  PipedWebSocket raw(Target(master.port(), "/raw"));
  ASSERT_TRUE(WriteAll(raw.fd(), "and you"));
  ASSERT_EQ(ReadExactly(raw.fd(), 7), "and you");
  master.Stop();
  release.set_value();
  // Both WebSocket connections are gone without a close frame.
  Status shell_ended = shell.Finish();
  EXPECT_EQ(shell_ended.code(), StatusCode::kUnavailable) << shell_ended.ToString();
  Status raw_ended = raw.Finish();
  EXPECT_EQ(raw_ended.code(), StatusCode::kUnavailable) << raw_ended.ToString();
  auto held = held_until_released.get_future();
  ASSERT_EQ(held.wait_for(std::chrono::milliseconds(kWaitMs)), std::future_status::ready);
  EXPECT_TRUE(held.get()) << "Stop() waited for the upstream to end the tunnel";
}

// Plain HTTP only: these write requests and frames byte by byte on a raw socket.
TEST(TunnelRawSocketTest, PipelinedBytesReachTheUpstreamAndAreCounted) {
  const std::string second = "GET /b HTTP/1.1\r\nHost: up\r\n\r\n";
  const std::string answers =
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA"
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nB";
  std::promise<std::string> first_bytes_made;
  std::shared_future<std::string> first_bytes = first_bytes_made.get_future().share();
  std::promise<std::string> seen_by_upstream;
  Upstream upstream([&](int fd) {
    // Both requests, then both answers.
    const size_t expected = first_bytes.get().size() + second.size();
    seen_by_upstream.set_value(
        ReadUntil(fd, [&](const std::string& bytes) { return bytes.size() >= expected; }));
    WriteAll(fd, answers);
  });
  std::atomic<size_t> counted{0};
  Server master({}, [&](const Request& request) {
    Response response =
        TunnelTo(Tunnel::Mode::kRaw, upstream.port(), request, [&](size_t n) { counted += n; });
    first_bytes_made.set_value(response.tunnel->first_bytes);
    return response;
  });
  ASSERT_TRUE(master.Start().ok());
  const int fd = RawConnection(master.port());
  ASSERT_GE(fd, 0);
  // One write: the server reads the second request along with the first.
  ASSERT_TRUE(WriteAll(fd, "GET /a HTTP/1.1\r\nHost: up\r\n\r\n" + second));
  EXPECT_EQ(ReadToEnd(fd), answers);
  ::close(fd);
  auto seen = seen_by_upstream.get_future();
  ASSERT_EQ(seen.wait_for(std::chrono::milliseconds(kWaitMs)), std::future_status::ready);
  EXPECT_EQ(seen.get(), first_bytes.get() + second);
  // The second request on its way in and both answers on their way out; not the first bytes,
  // which the handler made.
  EXPECT_EQ(counted.load(), second.size() + answers.size());
}

// Reads frames from `fd` until `count` have come (or a wait runs out).
std::vector<WebSocketFrame> ReadFrames(int fd, WebSocketDecoder& decoder, size_t count) {
  std::vector<WebSocketFrame> frames;
  char buffer[4096];
  while (frames.size() < count) {
    auto next = decoder.Next();
    if (!next.ok()) break;
    if (next->has_value()) {
      frames.push_back(std::move(**next));
      continue;
    }
    ssize_t n = ReadSome(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    decoder.Feed(std::string_view(buffer, static_cast<size_t>(n)));
  }
  return frames;
}

TEST(TunnelRawSocketTest, FramesSentWithTheUpgradeRequestReachTheUpstreamAndPingsArePonged) {
  std::promise<bool> upstream_end;
  Upstream upstream([&](int fd) { upstream_end.set_value(EchoUntilEnd(fd)); });
  Server master({}, [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kWebSocketToTcp, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  const int fd = RawConnection(master.port());
  ASSERT_GE(fd, 0);
  const WebSocketMask mask{0x12, 0x34, 0x56, 0x78};
  // RFC 6455's own key, so the answer is known: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=.
  ASSERT_TRUE(
      WriteAll(fd,
               "GET /shell HTTP/1.1\r\nHost: m\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" +
                   EncodeMaskedWebSocketFrame(WebSocketOpcode::kBinary, "early", mask) +
                   EncodeMaskedWebSocketFrame(WebSocketOpcode::kPing, "p?", mask)));
  std::string answer = ReadUntil(
      fd, [](const std::string& bytes) { return bytes.find("\r\n\r\n") != std::string::npos; });
  const size_t head_end = answer.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << answer;
  const std::string head = answer.substr(0, head_end + 4);
  EXPECT_EQ(head.rfind("HTTP/1.1 101 ", 0), 0u) << head;
  EXPECT_NE(head.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string::npos)
      << head;
  WebSocketDecoder decoder(WebSocketDecoder::Peer::kServer, 1u << 20);
  decoder.Feed(std::string_view(answer).substr(head_end + 4));
  // The pong comes from the master, the echo from the upstream: either may come first.
  auto frames = ReadFrames(fd, decoder, 2);
  ASSERT_EQ(frames.size(), 2u);
  if (frames[0].opcode != WebSocketOpcode::kPong) std::swap(frames[0], frames[1]);
  EXPECT_EQ(frames[0].opcode, WebSocketOpcode::kPong);
  EXPECT_EQ(frames[0].payload, "p?");
  EXPECT_EQ(frames[1].opcode, WebSocketOpcode::kBinary);
  EXPECT_EQ(frames[1].payload, "early");
  // A close is answered with the same code, and the connection ends.
  ASSERT_TRUE(WriteAll(fd, EncodeMaskedWebSocketFrame(WebSocketOpcode::kClose,
                                                      WebSocketClosePayload(1000, "done"), mask)));
  frames = ReadFrames(fd, decoder, 1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, WebSocketOpcode::kClose);
  EXPECT_EQ(frames[0].payload, WebSocketClosePayload(1000));
  EXPECT_EQ(ReadToEnd(fd), "");
  ::close(fd);
  auto upstream_ended = upstream_end.get_future();
  ASSERT_EQ(upstream_ended.wait_for(std::chrono::milliseconds(kWaitMs)), std::future_status::ready);
  EXPECT_TRUE(upstream_ended.get());
}

TEST(TunnelRawSocketTest, AFrameOverTheCapIsRefusedWithClose1009) {
  Upstream upstream([](int fd) { EchoUntilEnd(fd); });
  Server master({}, [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kWebSocketToTcp, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  const int fd = RawConnection(master.port());
  ASSERT_GE(fd, 0);
  // A binary frame announcing 17 MiB (a 64-bit length, then the mask): its header is enough.
  ASSERT_TRUE(
      WriteAll(fd,
               "GET /shell HTTP/1.1\r\nHost: m\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" +
                   std::string("\x82\xFF\0\0\0\0\x01\x10\0\0\x12\x34\x56\x78", 14)));
  std::string answer = ReadUntil(
      fd, [](const std::string& bytes) { return bytes.find("\r\n\r\n") != std::string::npos; });
  const size_t head_end = answer.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << answer;
  WebSocketDecoder decoder(WebSocketDecoder::Peer::kServer, 1u << 20);
  decoder.Feed(std::string_view(answer).substr(head_end + 4));
  auto frames = ReadFrames(fd, decoder, 1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, WebSocketOpcode::kClose);
  EXPECT_EQ(frames[0].payload.substr(0, 2), WebSocketClosePayload(1009));
  ::close(fd);
}

TEST(TunnelRawSocketTest, AQuietTunnelOutlivesTheReadAndIdleTimeouts) {
  Upstream upstream([](int fd) { EchoUntilEnd(fd); });
  Server::Options options;
  options.read_timeout = std::chrono::milliseconds(50);
  options.idle_timeout = std::chrono::milliseconds(50);
  Server master(options, [&](const Request& request) {
    return TunnelTo(Tunnel::Mode::kWebSocketToTcp, upstream.port(), request);
  });
  ASSERT_TRUE(master.Start().ok());
  auto target = WebSocketTarget::FromUrl("http://127.0.0.1:" + std::to_string(master.port()), "/s");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  PipedWebSocket client(*target);
  ASSERT_TRUE(WriteAll(client.fd(), "one"));
  ASSERT_EQ(ReadExactly(client.fd(), 3), "one");
  // Ten read timeouts of silence. This wait is what is under test, not a way to order events:
  // were the timeout applied to the tunnel, its end would wake the poll.
  pollfd quiet{client.fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&quiet, 1, 500), 0);
  ASSERT_TRUE(WriteAll(client.fd(), "two"));
  EXPECT_EQ(ReadExactly(client.fd(), 3), "two");
}

TEST(WebSocketClientTest, AnAnswerOtherThan101IsItsStatusAndBadInputIsRefused) {
  Server master({}, [](const Request& request) {
    Response response;
    if (request.path == "/denied") {
      response.status = 401;
      response.body = R"({"code":16,"message":"invalid credentials","details":[]})";
    }
    return response;
  });
  ASSERT_TRUE(master.Start().ok());
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto target =
      WebSocketTarget::FromUrl("http://127.0.0.1:" + std::to_string(master.port()), "/denied");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  Status denied = PipeWebSocket(*target, fds[1], fds[1]);
  EXPECT_EQ(denied.code(), StatusCode::kUnauthenticated) << denied.ToString();
  EXPECT_NE(denied.message().find("invalid credentials"), std::string::npos) << denied.ToString();
  target->path = "/plain";
  Status not_upgraded = PipeWebSocket(*target, fds[1], fds[1]);
  EXPECT_EQ(not_upgraded.code(), StatusCode::kFailedPrecondition) << not_upgraded.ToString();
  target->headers = {{"X-Bad", "a\r\nInjected: yes"}};
  Status smuggled = PipeWebSocket(*target, fds[1], fds[1]);
  EXPECT_EQ(smuggled.code(), StatusCode::kInvalidArgument) << smuggled.ToString();
  EXPECT_EQ(smuggled.message().find("Injected"), std::string::npos) << smuggled.ToString();
  target->headers.clear();
  target->path = "no-slash";
  EXPECT_EQ(PipeWebSocket(*target, fds[1], fds[1]).code(), StatusCode::kInvalidArgument);
  target->port = 0;
  EXPECT_EQ(PipeWebSocket(*target, fds[1], fds[1]).code(), StatusCode::kUnavailable);
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace cairn::net
