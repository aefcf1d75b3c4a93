#include "net/stream_pump.h"

#include <limits.h>
#include <openssl/rand.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>

#include "net/websocket.h"

namespace cairn::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Waits up to `timeout_ms` for `events` on `fd`; false with `ec` set (timed_out, or poll's error)
// when they did not come.
bool PollFor(int fd, short events, int timeout_ms, boost::system::error_code& ec) {
  pollfd waited{fd, events, 0};
  const int ready = ::poll(&waited, 1, timeout_ms);
  if (ready > 0) return true;
  ec = ready == 0 ? boost::system::error_code(asio::error::timed_out)
                  : boost::system::error_code(errno, boost::system::system_category());
  return false;
}

}  // namespace

ConnectionSocket::ConnectionSocket(tcp::socket& socket, std::chrono::milliseconds read_timeout,
                                   std::chrono::milliseconds idle_timeout,
                                   std::chrono::milliseconds request_timeout,
                                   std::atomic<int64_t>* idle_since)
    : socket_(socket),
      read_timeout_ms_(static_cast<int>(read_timeout.count())),
      idle_timeout_ms_(static_cast<int>(idle_timeout.count())),
      write_timeout_ms_(read_timeout_ms_),
      request_timeout_(request_timeout),
      idle_since_(idle_since) {
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  BeginRequest();  // the handshake, if any, and the first request's wait are bounded too
}

void ConnectionSocket::BeginRequest() {
  if (request_timeout_.count() > 0) deadline_ = std::chrono::steady_clock::now() + request_timeout_;
}

bool ConnectionSocket::WouldBlock(const boost::system::error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

bool ConnectionSocket::WaitReadable(boost::system::error_code& ec) {
  const bool awaiting = awaiting_request_;
  awaiting_request_ = false;
  int timeout_ms = read_timeout_ms_;
  int64_t waiting_since = 0;
  if (awaiting) {
    timeout_ms = idle_timeout_ms_;
    if (idle_since_ != nullptr) {
      waiting_since = std::chrono::steady_clock::now().time_since_epoch().count();
      int64_t before = idle_since_->load();
      // Let go already (between requests): this connection serves nothing more.
      if (before == kLetGo || !idle_since_->compare_exchange_strong(before, waiting_since)) {
        ec = asio::error::eof;
        return false;
      }
    }
  } else if (deadline_ != std::chrono::steady_clock::time_point::max()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ec = asio::error::timed_out;
      return false;
    }
    timeout_ms = static_cast<int>(std::min<int64_t>(timeout_ms, left.count()));
  }
  const bool ready = PollFor(socket_.native_handle(), POLLIN, timeout_ms, ec);
  if (awaiting) {
    // Claimed back; a failed claim means the server let this connection go meanwhile, and the
    // request that arrived is not served (its client sees the connection close).
    if (idle_since_ != nullptr && !idle_since_->compare_exchange_strong(waiting_since, 0)) {
      ec = asio::error::eof;
      return false;
    }
    if (ready) BeginRequest();
  }
  return ready;
}

bool ConnectionSocket::WaitWritable(boost::system::error_code& ec) {
  return PollFor(socket_.native_handle(), POLLOUT, write_timeout_ms_, ec);
}

void ConnectionSocket::StartPumping(boost::system::error_code& ec) {
  socket_.non_blocking(true, ec);
  pumping_ = true;
}

bool ConnectionSocket::Flush() {
  while (has_queued_output()) {
    boost::system::error_code ec;
    size_t sent = socket_.write_some(
        asio::buffer(queued_.data() + queued_sent_, queued_.size() - queued_sent_), ec);
    queued_sent_ += sent;
    if (ec == asio::error::would_block || ec == asio::error::try_again) return true;
    if (ec) return false;
  }
  queued_.clear();
  queued_sent_ = 0;
  return true;
}

Result<tcp::socket> ConnectTcp(asio::io_context& io, const std::string& host, uint16_t port,
                               std::chrono::milliseconds timeout) {
  const std::string target = host + ":" + std::to_string(port);
  boost::system::error_code ec;
  tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return Status::Unavailable("cannot resolve " + host + ": " + ec.message());
  std::string reason = "no address";
  for (const auto& entry : endpoints) {
    tcp::socket socket(io);
    socket.open(entry.endpoint().protocol(), ec);
    if (!ec) socket.non_blocking(true, ec);
    if (ec) {
      reason = ec.message();
      continue;
    }
    // Asio's blocking connect has no time limit: connect without blocking and poll instead.
    int error = 0;
    if (::connect(socket.native_handle(), entry.endpoint().data(),
                  static_cast<socklen_t>(entry.endpoint().size())) != 0) {
      error = errno;
    }
    if (error == EINPROGRESS) {
      pollfd writable{socket.native_handle(), POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&writable, 1, static_cast<int>(timeout.count()));
      } while (ready < 0 && errno == EINTR);
      socklen_t size = sizeof error;
      if (ready == 0) {
        error = ETIMEDOUT;
      } else if (ready < 0 ||
                 ::getsockopt(socket.native_handle(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) {
        error = errno;
      }
    }
    if (error != 0) {
      reason = boost::system::error_code(error, boost::system::system_category()).message();
      continue;
    }
    socket.non_blocking(false, ec);
    socket.set_option(tcp::no_delay(true), ec);
    // Finds peers that vanished without a FIN on connections that may stay quiet for long.
    socket.set_option(asio::socket_base::keep_alive(true), ec);
    return socket;
  }
  return Status::Unavailable("cannot connect to " + target + ": " + reason);
}

void PumpEnd::Queue(std::string_view bytes) {
  if (outbox_taken_ == outbox_.size()) {
    outbox_.clear();
    outbox_taken_ = 0;
  }
  outbox_.append(bytes);
}

void PumpEnd::Taken(size_t bytes) {
  outbox_taken_ += bytes;
  if (outbox_taken_ == outbox_.size()) {
    outbox_.clear();
    outbox_taken_ = 0;
  }
}

PumpEnd::Received DescriptorPumpEnd::Receive(char* buffer, size_t capacity, size_t& size) {
  size = 0;
  pollfd readable{in_fd_, POLLIN, 0};
  if (::poll(&readable, 1, 0) <= 0) return Received::kNothingYet;
  ssize_t n = ::read(in_fd_, buffer, capacity);
  if (n > 0) {
    size = static_cast<size_t>(n);
    return Received::kBytes;
  }
  if (n == 0) return Received::kEnded;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Received::kNothingYet
                                                                   : Received::kBroken;
}

bool DescriptorPumpEnd::Flush() {
  while (Unsent() > 0) {
    pollfd writable{out_fd_, POLLOUT, 0};
    if (::poll(&writable, 1, 0) <= 0) return true;
    if (writable.revents & (POLLERR | POLLNVAL)) return false;
    const std::string_view bytes = UnsentBytes().substr(0, PIPE_BUF);
    // A socket whose reader left answers EPIPE without killing the process by SIGPIPE.
    ssize_t n = ::send(out_fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(out_fd_, bytes.data(), bytes.size());
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    Taken(static_cast<size_t>(n));
  }
  return true;
}

void DescriptorPumpEnd::AddPollEntries(std::vector<pollfd>& entries, bool want_read) const {
  if (want_read) entries.push_back({in_fd_, POLLIN, 0});
  if (Unsent() > 0) entries.push_back({out_fd_, POLLOUT, 0});
}

namespace {

// Waits until one of `entries` is ready, or `timeout_ms` (-1: no limit). False when there is
// nothing to wait for, or poll() fails: the pump cannot go on.
bool WaitForEither(std::vector<pollfd>& entries, int timeout_ms) {
  if (entries.empty() && timeout_ms < 0) return false;
  while (true) {
    int ready = ::poll(entries.data(), entries.size(), timeout_ms);
    if (ready >= 0) return true;
    if (errno != EINTR) return false;
  }
}

void Count(const std::function<void(size_t)>& on_traffic, size_t bytes) {
  if (on_traffic && bytes > 0) on_traffic(bytes);
}

}  // namespace

void PumpBytes(PumpEnd& first, PumpEnd& second, const std::function<void(size_t)>& on_traffic) {
  struct Direction {
    PumpEnd& from;
    PumpEnd& to;
    bool over = false;
  };
  std::array<Direction, 2> directions{{{first, second}, {second, first}}};
  std::vector<char> buffer(kPumpChunkBytes);
  while (true) {
    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (Direction& direction : directions) {
        if (!direction.to.Flush()) return;
        // A direction reads again only once the other end has taken what it read before.
        if (direction.over || direction.to.Unsent() > 0) continue;
        size_t size = 0;
        switch (direction.from.Receive(buffer.data(), buffer.size(), size)) {
          case PumpEnd::Received::kBytes:
            direction.to.Queue(std::string_view(buffer.data(), size));
            Count(on_traffic, size);
            progressed = true;
            break;
          case PumpEnd::Received::kNothingYet:
            break;
          case PumpEnd::Received::kEnded:
            direction.over = true;
            direction.to.EndSending();
            progressed = true;
            break;
          case PumpEnd::Received::kBroken:
            return;
        }
      }
    }
    if (directions[0].over && directions[1].over && !first.HasUnsent() && !second.HasUnsent()) {
      return;
    }
    std::vector<pollfd> entries;
    first.AddPollEntries(entries, !directions[0].over && second.Unsent() == 0);
    second.AddPollEntries(entries, !directions[1].over && first.Unsent() == 0);
    if (!WaitForEither(entries, -1)) return;
  }
}

namespace {

WebSocketMask RandomMask() {
  WebSocketMask mask{};
  // RFC 6455 asks for an unpredictable mask; should the generator fail, a zero mask is still a
  // valid frame (the mask protects proxies in between, not the payload).
  if (RAND_bytes(mask.data(), static_cast<int>(mask.size())) != 1) mask = {};
  return mask;
}

// How a close frame's payload reads, and whether it is a normal end.
struct CloseReason {
  uint16_t code = 0;  // 0: the frame carried no code
  std::string text;
  bool normal() const { return code == 0 || code == kWebSocketCloseNormal || code == 1001; }
};

CloseReason ParseClose(const std::string& payload) {
  CloseReason reason;
  if (payload.size() >= 2) {
    reason.code = static_cast<uint16_t>((static_cast<unsigned char>(payload[0]) << 8) |
                                        static_cast<unsigned char>(payload[1]));
    reason.text = payload.substr(2);
  }
  return reason;
}

// One WebSocket connection's close handshake and framing, as PumpWebSocket drives it.
class WebSocketSession {
 public:
  WebSocketSession(PumpEnd& websocket, PumpEnd& bytes, const WebSocketPumpOptions& options)
      : websocket_(websocket),
        bytes_(bytes),
        options_(options),
        decoder_(
            options.as_client ? WebSocketDecoder::Peer::kServer : WebSocketDecoder::Peer::kClient,
            options.max_frame_bytes) {}

  Status Run(std::string_view received);

 private:
  void Send(WebSocketOpcode opcode, std::string_view payload) {
    websocket_.Queue(options_.as_client ? EncodeMaskedWebSocketFrame(opcode, payload, RandomMask())
                                        : EncodeWebSocketFrame(opcode, payload));
  }
  // Sends a close frame (once) and from then on waits at most the close timeout for the peer's.
  void BeginClose(uint16_t code, std::string_view reason) {
    if (close_sent_) return;
    Send(WebSocketOpcode::kClose, WebSocketClosePayload(code, reason));
    close_sent_ = true;
    close_deadline_ = std::chrono::steady_clock::now() + options_.close_timeout;
  }
  void Fail(Status status) {
    if (outcome_.ok()) outcome_ = std::move(status);
  }
  // Decodes and handles the frames received so far, while `bytes` keeps up. True if any was.
  bool HandleFrames();
  // Reads what the WebSocket's peer sent. True if anything happened.
  bool ReceiveFrames(std::vector<char>& buffer);
  // Reads from `bytes` into binary messages. True if anything happened.
  bool ReceiveBytes(std::vector<char>& buffer);
  bool finished() const {
    return peer_gone_ || (close_sent_ && close_received_) ||
           (close_deadline_ && std::chrono::steady_clock::now() >= *close_deadline_);
  }

  PumpEnd& websocket_;
  PumpEnd& bytes_;
  const WebSocketPumpOptions& options_;
  WebSocketDecoder decoder_;
  bool close_sent_ = false;
  bool close_received_ = false;  // or the peer's frames are no longer read (a protocol error)
  bool peer_gone_ = false;       // the WebSocket's connection ended or broke
  bool bytes_over_ = false;      // `bytes` ended or broke: nothing more is read from it
  bool bytes_broken_ = false;    // nothing more can be sent to `bytes` either
  std::optional<std::chrono::steady_clock::time_point> close_deadline_;
  Status outcome_;
};

bool WebSocketSession::HandleFrames() {
  bool handled = false;
  while (!close_received_ && bytes_.Unsent() < kPumpChunkBytes) {
    auto next = decoder_.Next();
    if (!next.ok()) {
      Fail(next.status());
      const bool too_big = next.status().code() == StatusCode::kResourceExhausted;
      BeginClose(too_big ? kWebSocketCloseTooBig : kWebSocketCloseProtocolError,
                 next.status().message());
      close_received_ = true;
      return true;
    }
    if (!next->has_value()) return handled;
    WebSocketFrame& frame = **next;
    handled = true;
    switch (frame.opcode) {
      case WebSocketOpcode::kText:
      case WebSocketOpcode::kBinary:
      case WebSocketOpcode::kContinuation:
        // Also after our close frame: the peer may have sent these before it saw ours.
        if (!bytes_broken_) {
          bytes_.Queue(frame.payload);
          Count(options_.on_traffic, frame.payload.size());
        }
        break;
      case WebSocketOpcode::kPing:
        if (!close_sent_) Send(WebSocketOpcode::kPong, frame.payload);
        break;
      case WebSocketOpcode::kPong:
        break;
      case WebSocketOpcode::kClose: {
        close_received_ = true;
        CloseReason reason = ParseClose(frame.payload);
        if (!reason.normal()) {
          Fail(Status::Unavailable("the WebSocket was closed with code " +
                                   std::to_string(reason.code) +
                                   (reason.text.empty() ? "" : ": " + reason.text)));
        }
        if (!close_sent_) {
          // The answer echoes the code (RFC 6455 §5.5.1).
          Send(WebSocketOpcode::kClose, frame.payload.substr(0, 2));
          close_sent_ = true;
        }
        break;
      }
    }
  }
  return handled;
}

bool WebSocketSession::ReceiveFrames(std::vector<char>& buffer) {
  if (close_received_ || peer_gone_ || bytes_.Unsent() >= kPumpChunkBytes) return false;
  size_t size = 0;
  switch (websocket_.Receive(buffer.data(), buffer.size(), size)) {
    case PumpEnd::Received::kBytes:
      decoder_.Feed(std::string_view(buffer.data(), size));
      return true;
    case PumpEnd::Received::kNothingYet:
      return false;
    case PumpEnd::Received::kEnded:
    case PumpEnd::Received::kBroken:
      peer_gone_ = true;
      // After our close frame the peer may just hang up; before it, the WebSocket broke off.
      if (!close_sent_) Fail(Status::Unavailable("the WebSocket connection ended without a close"));
      return true;
  }
  return false;
}

bool WebSocketSession::ReceiveBytes(std::vector<char>& buffer) {
  if (close_sent_ || bytes_over_ || websocket_.Unsent() >= kPumpChunkBytes) return false;
  size_t size = 0;
  switch (bytes_.Receive(buffer.data(), buffer.size(), size)) {
    case PumpEnd::Received::kBytes:
      Send(WebSocketOpcode::kBinary, std::string_view(buffer.data(), size));
      Count(options_.on_traffic, size);
      return true;
    case PumpEnd::Received::kNothingYet:
      return false;
    case PumpEnd::Received::kEnded:
      bytes_over_ = true;
      BeginClose(kWebSocketCloseNormal, "");
      return true;
    case PumpEnd::Received::kBroken:
      bytes_over_ = true;
      bytes_broken_ = true;
      Fail(Status::IOError("reading what goes into the WebSocket failed"));
      BeginClose(1011, "the other end of the tunnel broke");
      return true;
  }
  return false;
}

Status WebSocketSession::Run(std::string_view received) {
  decoder_.Feed(received);
  std::vector<char> buffer(kPumpChunkBytes);
  while (true) {
    bool progressed = true;
    while (progressed) {
      if (!websocket_.Flush()) {
        if (!close_received_ && !peer_gone_) {
          Fail(Status::Unavailable("the WebSocket connection broke"));
        }
        return outcome_;
      }
      if (!bytes_broken_ && !bytes_.Flush()) {
        Fail(Status::IOError("writing what comes out of the WebSocket failed"));
        bytes_over_ = true;
        bytes_broken_ = true;
        BeginClose(1011, "the other end of the tunnel broke");
      }
      progressed = HandleFrames();
      progressed = ReceiveFrames(buffer) || progressed;
      progressed = ReceiveBytes(buffer) || progressed;
    }
    if (finished() && !websocket_.HasUnsent() && (!bytes_.HasUnsent() || bytes_broken_)) {
      return outcome_;
    }
    std::vector<pollfd> entries;
    websocket_.AddPollEntries(entries,
                              !close_received_ && !peer_gone_ && bytes_.Unsent() < kPumpChunkBytes);
    if (!bytes_broken_) {
      bytes_.AddPollEntries(entries,
                            !close_sent_ && !bytes_over_ && websocket_.Unsent() < kPumpChunkBytes);
    }
    int timeout_ms = -1;
    if (close_deadline_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *close_deadline_ - std::chrono::steady_clock::now());
      timeout_ms = static_cast<int>(std::max<int64_t>(left.count(), 0)) + 1;
    }
    if (!WaitForEither(entries, timeout_ms)) return outcome_;
  }
}

}  // namespace

Status PumpWebSocket(PumpEnd& websocket, PumpEnd& bytes, std::string_view received,
                     const WebSocketPumpOptions& options) {
  return WebSocketSession(websocket, bytes, options).Run(received);
}

}  // namespace cairn::net
