// Internal to net/: the socket beneath every connection's stream, and the one-thread pumps that
// move bytes between two connections for the master's tunnels and the WebSocket client.
//
// How a pump works, and why so: OpenSSL's SSL object must never be read and written from two
// threads at once, and ssl::stream's asynchronous operations take turns through timers that run
// on the executor the stream was built with, which for the server's connections is an io_context
// nobody runs. So a pump switches its sockets to non-blocking mode and keeps using the streams'
// synchronous read_some and write_some: a read that would wait fails with would_block and leaves
// OpenSSL where it was, a write (data, or what OpenSSL must answer while reading) lands in the
// socket's queue, and poll() waits until either end can move again. One thread per connection as
// before, no locks, no descriptor beyond the two sockets, and every read is passed on as it comes.
#pragma once

#include <poll.h>

#include <atomic>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"

namespace cairn::net {

// The most a pump reads at once, and the most it lets wait to be sent on one end before it stops
// reading the other.
inline constexpr size_t kPumpChunkBytes = 64 * 1024;

// The TCP socket under a connection's stream (Beast's HTTP, and under TLS OpenSSL's through an
// ssl::stream). Until StartPumping() every read and write waits at most a set time for the peer:
// one that starts a request, or a handshake, and stalls, or stops reading an answer, is dropped;
// and a request (from its first byte, or from the connection's start for the handshake) must
// arrive whole within the request timeout however its bytes trickle in. (SO_RCVTIMEO would not
// do: Asio's blocking read polls again, without a limit, when recv times out; so the socket is
// non-blocking and the waits are poll's.) Not thread-safe.
class ConnectionSocket {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;
  using lowest_layer_type = boost::asio::ip::tcp::socket::lowest_layer_type;

  // `request_timeout` 0: no deadline per request. `idle_since`, when given, holds the steady
  // clock's nanoseconds since the connection began waiting for a next request, and 0 while it is
  // not waiting (the server evicts the longest-idle connection when it is full).
  ConnectionSocket(boost::asio::ip::tcp::socket& socket, std::chrono::milliseconds read_timeout,
                   std::chrono::milliseconds idle_timeout,
                   std::chrono::milliseconds request_timeout = std::chrono::milliseconds(0),
                   std::atomic<int64_t>* idle_since = nullptr);

  executor_type get_executor() { return socket_.get_executor(); }
  lowest_layer_type& lowest_layer() { return socket_.lowest_layer(); }
  const lowest_layer_type& lowest_layer() const { return socket_.lowest_layer(); }
  int native_handle() { return socket_.native_handle(); }

  // The next read waits for a new request on a kept-alive connection: up to the idle timeout
  // instead of the read timeout (an idle connection holds a thread and a descriptor); the
  // request's deadline starts when its first bytes arrive.
  void AwaitNextRequest() { awaiting_request_ = true; }
  // A request whose bytes are already at hand (pipelined) starts its deadline now.
  void BeginRequest();
  // How long a write waits for the peer to take bytes (the read timeout until set).
  void SetWriteTimeout(std::chrono::milliseconds timeout) {
    write_timeout_ms_ = static_cast<int>(timeout.count());
  }
  // idle_since's value once the server let this connection go: its next request is not served.
  static constexpr int64_t kLetGo = -1;

  // Switches to pumping, for good: reads no longer wait (would_block when nothing has arrived,
  // and no timeout: a quiet tunnel is not a stalled request), writes are queued for Flush().
  void StartPumping(boost::system::error_code& ec);
  bool has_queued_output() const { return queued_sent_ < queued_.size(); }
  // Sends queued bytes until the socket would block. False when the connection broke.
  bool Flush();

  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    if (pumping_) return socket_.read_some(buffers, ec);
    while (true) {
      if (!WaitReadable(ec)) return 0;
      const size_t n = socket_.read_some(buffers, ec);
      if (!WouldBlock(ec)) return n;
    }
  }
  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  template <class ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
    while (!pumping_) {
      const size_t n = socket_.write_some(buffers, ec);
      if (!WouldBlock(ec)) return n;
      if (!WaitWritable(ec)) return 0;
    }
    ec = {};
    size_t taken = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::const_buffer buffer(*it);
      queued_.append(static_cast<const char*>(buffer.data()), buffer.size());
      taken += buffer.size();
    }
    return taken;
  }
  template <class ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers) {
    boost::system::error_code ec;
    size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  // Waits for bytes up to the read (or idle) timeout and the request's deadline; false with
  // `ec` set when none came.
  bool WaitReadable(boost::system::error_code& ec);
  // Waits for room to send up to the read timeout; false with `ec` set when none came.
  bool WaitWritable(boost::system::error_code& ec);
  static bool WouldBlock(const boost::system::error_code& ec);

  boost::asio::ip::tcp::socket& socket_;
  int read_timeout_ms_;
  int idle_timeout_ms_;
  int write_timeout_ms_;
  std::chrono::milliseconds request_timeout_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  std::atomic<int64_t>* idle_since_;
  bool awaiting_request_ = false;
  bool pumping_ = false;
  std::string queued_;  // pumping: bytes written and not yet sent, from queued_sent_ on
  size_t queued_sent_ = 0;
};

// A TCP connection to `host:port` (each of its addresses in turn), within `timeout` per address.
// Unavailable naming host:port and the reason when none answers.
Result<boost::asio::ip::tcp::socket> ConnectTcp(boost::asio::io_context& io,
                                                const std::string& host, uint16_t port,
                                                std::chrono::milliseconds timeout);

// One end of a pump as the pumps see it: bytes received without waiting, and an outbox of bytes
// to send that Flush() hands to the connection as fast as it takes them.
class PumpEnd {
 public:
  enum class Received {
    kBytes,       // `size` bytes were read
    kNothingYet,  // nothing has arrived; poll() says when to try again
    kEnded,       // the peer ended its sending cleanly (a FIN, TLS's close_notify, EOF)
    kBroken,      // the connection failed (reset, a TLS error, a read error)
  };
  virtual ~PumpEnd() = default;

  // Reads at most `capacity` bytes of what has arrived, without waiting.
  virtual Received Receive(char* buffer, size_t capacity, size_t& size) = 0;
  // Sends from the outbox until the connection would block. False when it broke.
  virtual bool Flush() = 0;
  // After the outbox is sent, ends this end's sending: a TCP FIN, under TLS close_notify first
  // (after which this end reads nothing more: before TLS 1.3 a close_notify ends both ways, and
  // OpenSSL may drop what arrives after it).
  void EndSending() { ending_ = true; }
  // Whether anything is still to be sent, the end of sending included.
  virtual bool HasUnsent() const = 0;
  // Adds to `entries` what poll() must wait for on this end: readability when `want_read`, and
  // whatever sending waits on.
  virtual void AddPollEntries(std::vector<pollfd>& entries, bool want_read) const = 0;

  // Adds bytes to the outbox (no I/O: Flush() sends them).
  void Queue(std::string_view bytes);
  // Bytes in the outbox not yet taken by the connection.
  size_t Unsent() const { return outbox_.size() - outbox_taken_; }

 protected:
  std::string_view UnsentBytes() const { return std::string_view(outbox_).substr(outbox_taken_); }
  void Taken(size_t bytes);

  bool ending_ = false;

 private:
  std::string outbox_;
  size_t outbox_taken_ = 0;
};

// A connection's stream as a pump end: a ConnectionSocket that pumps, or an ssl::stream over one.
template <class Stream>
class StreamPumpEnd final : public PumpEnd {
 public:
  // `socket` is `stream` itself, or the layer beneath it; it must already pump.
  StreamPumpEnd(Stream& stream, ConnectionSocket& socket) : stream_(stream), socket_(socket) {}

  Received Receive(char* buffer, size_t capacity, size_t& size) override {
    size = 0;
    if (receiving_over_) return Received::kEnded;
    boost::system::error_code ec;
    size = stream_.read_some(boost::asio::buffer(buffer, capacity), ec);
    if (size > 0) return Received::kBytes;
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) {
      return Received::kNothingYet;
    }
    return ec == boost::asio::error::eof ? Received::kEnded : Received::kBroken;
  }

  bool Flush() override {
    while (true) {
      if (!socket_.Flush()) return false;
      if (socket_.has_queued_output()) return true;  // poll() waits for room
      if (Unsent() > 0) {
        boost::system::error_code ec;
        const std::string_view bytes = UnsentBytes().substr(0, kPumpChunkBytes);
        const size_t taken =
            stream_.write_some(boost::asio::buffer(bytes.data(), bytes.size()), ec);
        // OpenSSL may need the peer's bytes before it can write (a renegotiation).
        write_waits_for_input_ = ec == boost::asio::error::would_block;
        if (taken > 0) {
          Taken(taken);
          continue;
        }
        return write_waits_for_input_;
      }
      if (ending_ && !sending_ended_) {
        sending_ended_ = true;
        if constexpr (kTls) {
          // Queues close_notify; OpenSSL's wait for the peer's own ends in would_block.
          boost::system::error_code ignored;
          stream_.shutdown(ignored);
          receiving_over_ = true;
        }
        continue;
      }
      if (sending_ended_ && !fin_sent_) {
        fin_sent_ = true;
        boost::system::error_code ignored;
        socket_.lowest_layer().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
      }
      return true;
    }
  }

  bool HasUnsent() const override {
    return Unsent() > 0 || socket_.has_queued_output() || (ending_ && !fin_sent_);
  }

  void AddPollEntries(std::vector<pollfd>& entries, bool want_read) const override {
    short events = want_read || write_waits_for_input_ ? POLLIN : 0;
    if (socket_.has_queued_output()) events |= POLLOUT;
    if (events != 0) entries.push_back({socket_.native_handle(), events, 0});
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, ConnectionSocket>;

  Stream& stream_;
  ConnectionSocket& socket_;
  bool write_waits_for_input_ = false;
  bool receiving_over_ = false;
  bool sending_ended_ = false;
  bool fin_sent_ = false;
};

// Two descriptors as a pump end, read from `in_fd` and written to `out_fd` (which may be the
// same). They stay blocking (they may be shared with another process): each read and write
// follows a poll() that says it will not wait, and writes go PIPE_BUF bytes at a time, which a
// pipe that polls writable takes whole. Ending the sending does nothing: the caller owns them.
class DescriptorPumpEnd final : public PumpEnd {
 public:
  DescriptorPumpEnd(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}
  Received Receive(char* buffer, size_t capacity, size_t& size) override;
  bool Flush() override;
  bool HasUnsent() const override { return Unsent() > 0; }
  void AddPollEntries(std::vector<pollfd>& entries, bool want_read) const override;

 private:
  int in_fd_;
  int out_fd_;
};

// kRaw tunnels: bytes both ways unchanged, each read passed on as it comes. When one end ends its
// sending the other's sending is ended once what it was sent is through, and the pump returns
// when both directions are over, or as soon as either end breaks. `on_traffic` (may be empty)
// gets each read's byte count.
void PumpBytes(PumpEnd& first, PumpEnd& second, const std::function<void(size_t)>& on_traffic);

struct WebSocketPumpOptions {
  // The WebSocket's end is a client's connection to a server (frames sent masked, frames
  // received unmasked), or a server's connection from a client.
  bool as_client = false;
  uint64_t max_frame_bytes = 16u << 20;  // a larger frame closes with 1009
  // After sending a close frame, how long to wait for the peer's.
  std::chrono::milliseconds close_timeout = std::chrono::seconds(30);
  std::function<void(size_t)> on_traffic;  // message payload bytes, either way; may be empty
};

// A WebSocket on `websocket` to plain bytes on `bytes`: the payload of every data frame received
// (binary, text, continuation) is sent to `bytes` as it arrives, every read from `bytes` goes out
// as a binary message, a ping gets its pong. A close frame is answered and ends the pump; `bytes`
// ending (or breaking) sends a close frame (1000, or 1011) and waits for the peer's. Frames the
// peer sends against the protocol get a close frame (1002, or 1009 for one over the cap).
// `received` holds bytes already read from the WebSocket's connection. OK when the WebSocket
// closed normally (code 1000 or 1001, or none), else a Status saying how it ended.
Status PumpWebSocket(PumpEnd& websocket, PumpEnd& bytes, std::string_view received,
                     const WebSocketPumpOptions& options);

}  // namespace cairn::net
