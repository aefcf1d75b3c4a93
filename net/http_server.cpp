#include "net/http_server.h"

#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/gzip.h"
#include "base/log.h"
#include "base/memory.h"
#include "base/thread_priority.h"
#include "net/http_request_parse.h"
#include "net/stream_pump.h"
#include "net/tls_context.h"
#include "net/websocket.h"

namespace cairn::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// A connection that ended the way connections end (the client left, a timeout, Stop()), as
// opposed to a request Beast could not parse.
bool IsDisconnect(const beast::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::connection_reset ||
         ec == asio::error::eof || ec == asio::error::operation_aborted ||
         ec == asio::error::bad_descriptor || ec == asio::error::not_connected ||
         ec == asio::error::timed_out || ec == asio::ssl::error::stream_truncated;
}

}  // namespace

struct Server::Impl {
  Impl(Options server_options, Handler request_handler)
      : options(std::move(server_options)), handler(std::move(request_handler)) {}

  Options options;
  Handler handler;
  std::unique_ptr<asio::ssl::context> tls;  // set when serving HTTPS
  BodyBudget body_budget{options.max_buffered_body_bytes};
  asio::io_context io;
  tcp::acceptor acceptor{io};
  uint16_t bound_port = 0;
  std::thread accept_thread;

  // idle_since of a connection the accept loop let go (ConnectionSocket::kLetGo).
  static constexpr int64_t kLetGo = ConnectionSocket::kLetGo;

  // An open connection, as the accept loop and Stop() see it.
  struct Connection {
    int fd = -1;
    std::string address;  // the client's IP address
    // Steady-clock nanoseconds since it began waiting for a next request; 0 while it is not
    // (ConnectionSocket keeps it).
    std::atomic<int64_t> idle_since{0};
  };

  std::mutex mutex;
  std::condition_variable connections_done;
  std::map<uint64_t, Connection> open_sockets;    // by connection id
  std::map<std::string, size_t> open_by_address;  // how many connections each address has
  std::map<uint64_t, int> tunnel_upstreams;       // connection id -> its tunnel's upstream fd
  uint64_t next_connection_id = 0;
  bool stopping = false;

  void AcceptLoop();
  // Makes room for a connection from `address` when it has max_connections_per_address or the
  // server max_connections: ends the longest-idle connection (of that address, or of anyone),
  // which a client may always reopen. False when every connection in the way is busy.
  bool MakeRoom(const std::string& address);
  // Serves the connection on a thread of its own with a connection-sized stack.
  bool StartServing(uint64_t id, tcp::socket& socket);
  void Serve(uint64_t id, tcp::socket socket);
  // The request loop, one for plain and TLS connections: `stream` carries HTTP, `transport` is
  // the socket beneath it.
  template <class Stream>
  void ServeRequests(uint64_t id, Stream& stream, ConnectionSocket& transport,
                     const std::string& remote);
  // Hands the connection over to `tunnel`'s upstream, answering 400 or 502 when it cannot be.
  // `buffer` holds what the client sent past the request.
  template <class Stream>
  void ServeTunnel(uint64_t id, Stream& stream, ConnectionSocket& transport, const Request& request,
                   const Tunnel& tunnel, beast::flat_buffer& buffer);
  // Registers a tunnel's upstream socket so that Stop() shuts it down too; false once stopping.
  bool TrackUpstream(uint64_t id, int fd);
  void ForgetUpstream(uint64_t id);
};

namespace {

// Reads from `stream` into `buffer`, handing the bytes to `parser`, until it has a request or an
// error. As Beast's read(), but the parsing is net/http_request_parse.h's. `ec` is set only for
// the stream's own errors (the client left, a timeout); the end of the stream inside a request
// is the parser's kMalformed instead.
template <class Stream>
void ReadRequest(Stream& stream, beast::flat_buffer& buffer, RequestParser& parser,
                 beast::error_code& ec) {
  ec = {};
  while (true) {
    const auto unparsed = buffer.data();
    buffer.consume(
        parser.Feed(std::string_view(static_cast<const char*>(unparsed.data()), unparsed.size())));
    if (parser.state() != ParseState::kNeedMoreBytes) return;
    if (parser.TakeContinueRequest()) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::write(stream, asio::const_buffer(kContinue.data(), kContinue.size()), ec);
      if (ec) return;
    }
    buffer.commit(stream.read_some(buffer.prepare(64 * 1024), ec));
    if (ec == asio::error::eof && parser.started()) {
      ec = {};
      parser.FeedEndOfStream();
      return;
    }
    if (ec) return;
  }
}

// `text` as the inside of a JSON string.
std::string JsonEscaped(const std::string& text) {
  const std::string quoted =
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

// How long, and how much, a refused request's remaining bytes are read and dropped: enough for
// a client on a fast link to finish sending and read the answer, never a thread for a trickle.
constexpr auto kRefusalDrainTime = std::chrono::seconds(2);
constexpr size_t kRefusalDrainBytes = 64u << 20;

// Answers a request refused before its body was read to the end, and ends the connection. The
// client may still be sending: some of that is read and dropped, so that it gets to read the
// answer instead of a reset. (Under TLS these are records nobody decrypts.)
template <class Stream>
void RefuseBody(Stream& stream, ConnectionSocket& transport,
                const bhttp::response<bhttp::string_body>& answer) {
  beast::error_code ec;
  bhttp::write(stream, answer, ec);
  transport.lowest_layer().shutdown(tcp::socket::shutdown_send, ec);
  const int fd = transport.lowest_layer().native_handle();
  char sink[64 * 1024];
  size_t drained = 0;
  const auto until = std::chrono::steady_clock::now() + kRefusalDrainTime;
  pollfd more{fd, POLLIN, 0};
  while (drained < kRefusalDrainBytes && std::chrono::steady_clock::now() < until &&
         ::poll(&more, 1, 200) > 0) {
    ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
}

// The status line and headers of `response`, over a body of type Body.
template <class Body>
bhttp::response<Body> BeastHead(const Response& response) {
  bhttp::response<Body> head{static_cast<bhttp::status>(response.status), 11};
  head.set(bhttp::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) head.set(name, value);
  return head;
}

bhttp::response<bhttp::string_body> BeastResponse(Response response, bool keep_alive) {
  auto res = BeastHead<bhttp::string_body>(response);
  res.body() = std::move(response.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

bhttp::response<bhttp::string_body> SimpleResponse(int status, const std::string& message,
                                                   bool keep_alive) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), 11};
  res.set(bhttp::field::content_type, "application/json");
  // The codes are gRPC's, as in every error body of the API: 8 resource exhausted, 14
  // unavailable, 3 invalid argument (408: the request was not sent in time).
  const int code = status == 413 || status == 431 ? 8 : status == 502 || status == 503 ? 14 : 3;
  res.body() =
      "{\"code\":" + std::to_string(code) + ",\"message\":\"" + message + "\",\"details\":[]}";
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

}  // namespace

void Server::Impl::AcceptLoop() {
  while (true) {
    beast::error_code ec;
    tcp::socket socket(io);
    acceptor.accept(socket, ec);
    std::unique_lock lock(mutex);
    if (stopping) return;
    if (ec) {
      // Out of descriptors (EMFILE/ENFILE) or a transient failure: back off instead of spinning.
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    const auto endpoint = socket.remote_endpoint(ec);
    const std::string address = ec ? std::string() : endpoint.address().to_string();
    if (!MakeRoom(address)) {
      lock.unlock();
      // Under TLS a plain answer would be noise to the client (and a handshake here would stall
      // the accept loop): it is just closed.
      if (!tls) {
        auto res = SimpleResponse(503, "too many connections", false);
        bhttp::write(socket, res, ec);
      }
      socket.close(ec);
      continue;
    }
    const uint64_t id = next_connection_id++;
    Connection& connection = open_sockets[id];
    connection.fd = socket.native_handle();
    connection.address = address;
    // Idle until its first request arrives (a TLS handshake in progress included).
    connection.idle_since = std::chrono::steady_clock::now().time_since_epoch().count();
    ++open_by_address[address];
    lock.unlock();
    if (!StartServing(id, socket)) {
      // No thread to serve it: refuse this connection, keep serving the others.
      socket.close(ec);
      std::lock_guard relock(mutex);
      if (--open_by_address[address] == 0) open_by_address.erase(address);
      open_sockets.erase(id);
      connections_done.notify_all();
    }
  }
}

bool Server::Impl::MakeRoom(const std::string& address) {
  const auto from_address = open_by_address.find(address);
  const bool address_full = from_address != open_by_address.end() &&
                            from_address->second >= options.max_connections_per_address;
  if (!address_full && open_sockets.size() < options.max_connections) return true;
  std::vector<std::pair<int64_t, Connection*>> idle;  // by how long they have waited
  for (auto& [id, connection] : open_sockets) {
    const int64_t idle_since = connection.idle_since.load();
    if (idle_since <= 0 || (address_full && connection.address != address)) continue;
    idle.emplace_back(idle_since, &connection);
  }
  std::sort(idle.begin(), idle.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [since, connection] : idle) {
    // Claimed, so its thread (which claims it back when a request arrives) knows it was let go
    // and the next accept picks another; it ends when it sees the shutdown.
    int64_t expected = since;
    if (connection->idle_since.compare_exchange_strong(expected, kLetGo)) {
      ::shutdown(connection->fd, SHUT_RDWR);
      return true;
    }
  }
  return false;
}

bool Server::Impl::StartServing(uint64_t id, tcp::socket& socket) {
  struct Start {
    Impl* impl;
    uint64_t id;
    tcp::socket socket;
  };
  auto start = std::make_unique<Start>(Start{this, id, std::move(socket)});
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) return false;
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  if (pthread_attr_setstacksize(&attributes, options.connection_stack_bytes) != 0) {
    log::Warn("http_server", "connection_stack_bytes {} refused; the default stack is used",
              options.connection_stack_bytes);
  }
  pthread_t thread;
  const int started = pthread_create(
      &thread, &attributes,
      [](void* argument) -> void* {
        std::unique_ptr<Start> start(static_cast<Start*>(argument));
        start->impl->Serve(start->id, std::move(start->socket));
        return nullptr;
      },
      start.get());
  pthread_attr_destroy(&attributes);
  if (started != 0) {
    socket = std::move(start->socket);  // the caller closes it
    return false;
  }
  start.release();  // the thread owns it now
  return true;
}

void Server::Impl::Serve(uint64_t id, tcp::socket socket) {
  NameThisThread(kHttpThreadName);
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  // Finds peers that vanished without a FIN (a crashed host) on long-lived streams.
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  std::string remote;
  auto endpoint = socket.remote_endpoint(ec);
  if (!ec) remote = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  std::atomic<int64_t>* idle_since;
  {
    std::lock_guard lock(mutex);
    idle_since = &open_sockets.at(id).idle_since;
  }
  if (tls) {
    asio::ssl::stream<ConnectionSocket> stream(
        ConnectionSocket(socket, options.read_timeout, options.idle_timeout,
                         options.request_timeout, idle_since),
        *tls);
    stream.handshake(asio::ssl::stream_base::server, ec);
    if (ec) {
      // Plain HTTP on the HTTPS port, an untrusting client, a scanner: only this connection ends.
      log::Debug("http_server", "TLS handshake with {} failed: {}", remote, ec.message());
    } else {
      ServeRequests(id, stream, stream.next_layer(), remote);
    }
  } else {
    ConnectionSocket transport(socket, options.read_timeout, options.idle_timeout,
                               options.request_timeout, idle_since);
    ServeRequests(id, transport, transport, remote);
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
  std::lock_guard lock(mutex);
  // Erased before closing, so Stop() never shuts down a descriptor number reused meanwhile.
  const std::string& address = open_sockets.at(id).address;
  if (--open_by_address[address] == 0) open_by_address.erase(address);
  open_sockets.erase(id);
  socket.close(ec);
  connections_done.notify_all();
}

template <class Stream>
void Server::Impl::ServeRequests(uint64_t id, Stream& stream, ConnectionSocket& transport,
                                 const std::string& remote) {
  const int fd = transport.lowest_layer().native_handle();
  beast::error_code ec;
  beast::flat_buffer buffer;
  while (true) {
    // Nothing of a next request read yet: wait for one, but not forever. Stop() shuts the
    // socket down, which ends the wait too.
    if (buffer.size() == 0) {
      transport.AwaitNextRequest();
    } else {
      transport.BeginRequest();
    }
    RequestLimits limits;
    limits.max_header_bytes = options.max_header_bytes;
    limits.max_body_bytes = options.max_body_bytes;
    limits.body_shape = options.json_body_limits;
    limits.body_shape_exempt_prefix = options.json_body_exempt_prefix;
    limits.admit_head = options.admit_head;
    limits.budget = &body_budget;
    RequestParser parser(limits, remote);
    ReadRequest(stream, buffer, parser, ec);
    if (parser.state() == ParseState::kHeadRefused) {
      RefuseBody(stream, transport, BeastResponse(parser.TakeHeadRefusal(), false));
      break;
    }
    if (parser.state() == ParseState::kBudgetExhausted) {
      RefuseBody(
          stream, transport,
          SimpleResponse(503, "the master holds too many request bodies; retry later", false));
      break;
    }
    if (parser.state() == ParseState::kHeaderTooLarge) {
      RefuseBody(stream, transport, SimpleResponse(431, "request header fields too large", false));
      break;
    }
    if (parser.state() == ParseState::kBodyTooLarge) {
      RefuseBody(stream, transport, SimpleResponse(413, "request body too large", false));
      break;
    }
    if (parser.state() == ParseState::kBodyRefused) {
      RefuseBody(stream, transport,
                 SimpleResponse(400, JsonEscaped(parser.refusal().message()), false));
      break;
    }
    if (ec == asio::error::timed_out && parser.started()) {
      // Begun and not sent whole in time (the stall or the request timeout).
      auto res = SimpleResponse(408, "the request was not sent in time", false);
      bhttp::write(stream, res, ec);
      break;
    }
    if (ec || parser.state() != ParseState::kComplete) {
      if (!IsDisconnect(ec)) {
        auto res = SimpleResponse(400, "malformed HTTP request", false);
        bhttp::write(stream, res, ec);
      }
      break;
    }
    bool keep_alive = parser.keep_alive();
    Request request = parser.TakeRequest();
    const bool large_request = request.body.size() >= kLargeRequestBytes;
    Response response;
    try {
      response = handler(request);
    } catch (const std::exception& e) {
      // The path only: a query string may carry a secret.
      log::Error("http_server", "handler for {} {} threw: {}", request.method, request.path,
                 e.what());
      response.status = 500;
      response.body = "{\"code\":13,\"message\":\"internal error\",\"details\":[]}";
    }
    if (response.tunnel) {
      ServeTunnel(id, stream, transport, request, *response.tunnel, buffer);
      break;
    }
    if (response.stream) {
      // A follower reads when it likes (a paused pager): only an idle connection's patience.
      transport.SetWriteTimeout(options.idle_timeout);
      auto head = BeastHead<bhttp::empty_body>(response);
      head.chunked(true);
      head.keep_alive(false);
      bhttp::response_serializer<bhttp::empty_body> serializer{head};
      bhttp::write_header(stream, serializer, ec);
      if (ec) break;
      ChunkWriter writer = [&](std::string_view chunk) {
        if (chunk.empty()) {
          // A liveness probe: has the client closed its end? (It sends nothing while it waits,
          // so under TLS too any byte or EOF on the socket is the client's doing.)
          char probe;
          ssize_t n = ::recv(fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
          return !(n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK));
        }
        beast::error_code write_ec;
        asio::write(stream, bhttp::make_chunk(asio::const_buffer(chunk.data(), chunk.size())),
                    write_ec);
        return !write_ec;
      };
      try {
        response.stream(writer);
      } catch (const std::exception& e) {
        log::Error("http_server", "stream for {} {} threw: {}", request.method, request.path,
                   e.what());
      }
      asio::write(stream, bhttp::make_chunk_last(), ec);
      break;
    }
    if (response.shared_body) {
      const bool gzipped =
          response.shared_gzip_body && AcceptsGzip(request.Header("accept-encoding"));
      const std::string& bytes = gzipped ? *response.shared_gzip_body : *response.shared_body;
      auto shared = BeastHead<bhttp::span_body<const char>>(response);
      if (response.shared_gzip_body) shared.set(bhttp::field::vary, "Accept-Encoding");
      if (gzipped) shared.set(bhttp::field::content_encoding, "gzip");
      shared.body() = {bytes.data(), bytes.size()};
      shared.keep_alive(keep_alive);
      shared.prepare_payload();
      bhttp::write(stream, shared, ec);
    } else {
      bhttp::write(stream, BeastResponse(std::move(response), keep_alive), ec);
    }
    if (large_request) {
      // Free the body (and what handling it allocated) now, not when the connection ends.
      request = Request{};
      ReturnFreedMemory();
    }
    if (ec || !keep_alive) break;
  }
}

bool Server::Impl::TrackUpstream(uint64_t id, int fd) {
  std::lock_guard lock(mutex);
  if (stopping) return false;
  tunnel_upstreams[id] = fd;
  return true;
}

void Server::Impl::ForgetUpstream(uint64_t id) {
  std::lock_guard lock(mutex);
  tunnel_upstreams.erase(id);
}

template <class Stream>
void Server::Impl::ServeTunnel(uint64_t id, Stream& stream, ConnectionSocket& transport,
                               const Request& request, const Tunnel& tunnel,
                               beast::flat_buffer& buffer) {
  beast::error_code ec;
  std::string accept;
  if (tunnel.mode == Tunnel::Mode::kWebSocketToTcp) {
    auto accepted = AcceptWebSocketUpgrade(request);
    if (!accepted.ok()) {
      bhttp::write(stream, SimpleResponse(400, JsonEscaped(accepted.status().message()), false),
                   ec);
      return;
    }
    accept = std::move(*accepted);
  }
  // The read timeout bounds the connect, as it bounds every other wait for a peer.
  auto connected = ConnectTcp(io, tunnel.host, tunnel.port, options.read_timeout);
  if (!connected.ok()) {
    log::Info("http_server", "tunnel for {} {}: {}", request.method, request.path,
              connected.status().message());
    const std::string& message = tunnel.unreachable_message.empty() ? connected.status().message()
                                                                    : tunnel.unreachable_message;
    bhttp::write(stream, SimpleResponse(502, JsonEscaped(message), false), ec);
    return;
  }
  tcp::socket upstream_socket = std::move(*connected);
  if (!TrackUpstream(id, upstream_socket.native_handle())) return;
  if (tunnel.mode == Tunnel::Mode::kWebSocketToTcp) {
    const std::string switching =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Accept: " +
        accept + "\r\n\r\n";
    asio::write(stream, asio::buffer(switching), ec);
  }
  ConnectionSocket upstream(upstream_socket, options.read_timeout, options.idle_timeout);
  if (!ec) transport.StartPumping(ec);
  if (!ec) upstream.StartPumping(ec);
  if (!ec) {
    const auto unparsed = buffer.data();
    const std::string_view already_read(static_cast<const char*>(unparsed.data()), unparsed.size());
    StreamPumpEnd<Stream> client_end(stream, transport);
    StreamPumpEnd<ConnectionSocket> upstream_end(upstream, upstream);
    try {
      if (tunnel.mode == Tunnel::Mode::kRaw) {
        upstream_end.Queue(tunnel.first_bytes);
        upstream_end.Queue(already_read);
        if (tunnel.on_traffic && !already_read.empty()) tunnel.on_traffic(already_read.size());
        PumpBytes(client_end, upstream_end, tunnel.on_traffic);
      } else {
        WebSocketPumpOptions pump_options;
        pump_options.close_timeout = options.read_timeout;
        pump_options.on_traffic = tunnel.on_traffic;
        Status ended = PumpWebSocket(client_end, upstream_end, already_read, pump_options);
        if (!ended.ok()) {
          log::Debug("http_server", "WebSocket tunnel for {}: {}", request.path, ended.message());
        }
      }
    } catch (const std::exception& e) {
      // on_traffic is the caller's: its failure ends this tunnel, not the process.
      log::Error("http_server", "tunnel for {} {} threw: {}", request.method, request.path,
                 e.what());
    }
  }
  ForgetUpstream(id);
  upstream_socket.shutdown(tcp::socket::shutdown_both, ec);
  upstream_socket.close(ec);
}

Server::Server(Options options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  const Options& options = impl_->options;
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return Status::InvalidArgument("TLS needs both a certificate file and a key file");
  }
  if (!options.tls_cert_file.empty()) {
    CAIRN_ASSIGN_OR_RETURN(impl_->tls,
                           ServerTlsContext(options.tls_cert_file, options.tls_key_file));
  }
  beast::error_code ec;
  auto address = asio::ip::make_address(impl_->options.address, ec);
  if (ec) return Status::InvalidArgument("bad listen address: " + impl_->options.address);
  tcp::endpoint endpoint(address, impl_->options.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("cannot listen on " + impl_->options.address + ":" +
                               std::to_string(impl_->options.port) + ": " + ec.message());
  }
  impl_->bound_port = impl_->acceptor.local_endpoint().port();
  // Every connection holds a descriptor: stay below the open-file limit, with room for files.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    size_t room = files.rlim_cur > 256 ? files.rlim_cur - 128 : files.rlim_cur / 2;
    impl_->options.max_connections = std::min(impl_->options.max_connections, room);
  }
  impl_->accept_thread = std::thread(&Impl::AcceptLoop, impl_.get());
  return Status::Ok();
}

uint16_t Server::port() const { return impl_->bound_port; }

void Server::Stop() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) return;
    impl_->stopping = true;
    // shutdown() wakes threads blocked in accept/read on these descriptors.
    if (impl_->acceptor.is_open()) ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
    for (const auto& [id, connection] : impl_->open_sockets) ::shutdown(connection.fd, SHUT_RDWR);
    for (const auto& [id, fd] : impl_->tunnel_upstreams) ::shutdown(fd, SHUT_RDWR);
  }
  if (impl_->accept_thread.joinable()) impl_->accept_thread.join();
  beast::error_code ec;
  impl_->acceptor.close(ec);
  std::unique_lock lock(impl_->mutex);
  impl_->connections_done.wait(lock, [&] { return impl_->open_sockets.empty(); });
}

}  // namespace cairn::net
