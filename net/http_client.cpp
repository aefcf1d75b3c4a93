#include "net/http_client.h"

#include <sys/socket.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <variant>

#include "base/encoding.h"
#include "base/http_url.h"
#include "net/tls_context.h"

namespace cairn::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

using TlsStream = beast::ssl_stream<beast::tcp_stream>;
// One connection to the server: plain TCP, or TLS over it. Operations take either kind through
// std::visit, so there is one request path for both.
using Connection = std::variant<beast::tcp_stream, TlsStream>;

// The TCP stream at the bottom of a connection: its timeouts and its descriptor.
beast::tcp_stream& Tcp(Connection& connection) {
  return std::visit(
      [](auto& stream) -> beast::tcp_stream& { return beast::get_lowest_layer(stream); },
      connection);
}

}  // namespace

struct Client::Impl {
  std::string host;
  uint16_t port = 0;
  ClientOptions options;
  asio::io_context io;
  std::unique_ptr<asio::ssl::context> tls;  // loaded with the first HTTPS connection
  std::unique_ptr<Connection> stream;
  beast::flat_buffer buffer;
  std::mutex fd_mutex;  // guards active_fd for Cancel()
  int active_fd = -1;
  std::atomic<bool> cancelled{false};
  std::map<std::string, std::string> default_headers;  // sent with every request

  // A new connection, its TLS handshake done; it is the one Cancel() shuts down.
  Result<std::unique_ptr<Connection>> Connect(std::chrono::milliseconds timeout);
  Status Handshake(TlsStream& stream, std::chrono::milliseconds timeout);
  void SetActiveFd(int fd) {
    std::lock_guard lock(fd_mutex);
    active_fd = fd;
  }
  // Runs the io_context until the pending async operation completes.
  void Run() {
    io.restart();
    io.run();
  }
};

Result<std::unique_ptr<Connection>> Client::Impl::Connect(std::chrono::milliseconds timeout) {
  if (options.tls && !tls) {
    CAIRN_ASSIGN_OR_RETURN(tls, ClientTlsContext(options.ca_file));
  }
  beast::error_code ec;
  tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return Status::Unavailable("cannot resolve " + host + ": " + ec.message());
  beast::tcp_stream target(io);
  target.expires_after(timeout);
  target.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
  Run();
  if (ec) {
    return Status::Unavailable("cannot connect to " + host + ":" + std::to_string(port) + ": " +
                               ec.message());
  }
  target.socket().set_option(tcp::no_delay(true), ec);
  SetActiveFd(target.socket().native_handle());
  if (!options.tls) {
    return std::make_unique<Connection>(std::in_place_type<beast::tcp_stream>, std::move(target));
  }
  auto connection =
      std::make_unique<Connection>(std::in_place_type<TlsStream>, std::move(target), *tls);
  Status shaken = Handshake(std::get<TlsStream>(*connection), timeout);
  if (!shaken.ok()) {
    SetActiveFd(-1);
    return shaken;
  }
  return connection;
}

Status Client::Impl::Handshake(TlsStream& stream, std::chrono::milliseconds timeout) {
  ExpectServerName(stream.native_handle(), host);
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(timeout);
  stream.async_handshake(asio::ssl::stream_base::client, [&](beast::error_code e) { ec = e; });
  Run();
  if (!ec) return Status::Ok();
  return ClientHandshakeFailure(stream.native_handle(), host + ":" + std::to_string(port),
                                options.ca_file, ec);
}

Client::Client(std::string host, uint16_t port, ClientOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->options = std::move(options);
}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Result<Client> Client::FromUrl(const std::string& url, const std::string& ca_file) {
  CAIRN_ASSIGN_OR_RETURN(
      HttpUrl parsed, ParseHttpUrl(url.find("://") == std::string::npos ? "http://" + url : url));
  if (!parsed.port_given) return Status::InvalidArgument("URL needs host:port: " + url);
  if (parsed.target != "/") {
    return Status::InvalidArgument("a server's URL has no path or query: " + url);
  }
  ClientOptions options;
  options.tls = parsed.tls;
  if (parsed.tls) options.ca_file = ca_file;
  return Client(parsed.host, parsed.port, std::move(options));
}

Result<ClientResponse> Client::Request(const std::string& method, const std::string& target,
                                       const std::string& body,
                                       const std::map<std::string, std::string>& headers,
                                       std::chrono::milliseconds timeout) {
  Impl& d = *impl_;
  d.cancelled = false;
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  if (req.method() == bhttp::verb::unknown) return Status::InvalidArgument("bad method " + method);
  const bool ipv6 = d.host.find(':') != std::string::npos;
  req.set(bhttp::field::host, (ipv6 ? "[" + d.host + "]" : d.host) + ":" + std::to_string(d.port));
  req.set(bhttp::field::user_agent, "cairn");
  for (const auto& [name, value] : d.default_headers) req.set(name, value);
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();

  // A kept-alive connection may have been closed by the server meanwhile. Only a request that
  // is safe to repeat gets one retry on a fresh connection: a POST that failed after it was
  // sent may have been executed, so its caller decides (with an idempotency key, say).
  const bool repeatable = req.method() == bhttp::verb::get || req.method() == bhttp::verb::head ||
                          req.method() == bhttp::verb::put ||
                          req.method() == bhttp::verb::delete_ ||
                          headers.count("Idempotency-Key") > 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = d.stream != nullptr;
    if (!d.stream) {
      d.buffer.clear();
      CAIRN_ASSIGN_OR_RETURN(d.stream, d.Connect(timeout));
    }
    beast::error_code write_ec, read_ec;
    Tcp(*d.stream).expires_after(timeout);
    std::visit(
        [&](auto& stream) {
          bhttp::async_write(stream, req, [&](beast::error_code e, size_t) { write_ec = e; });
        },
        *d.stream);
    d.Run();
    // Read the answer even when the write failed: a server refusing an oversized body answers
    // 413 and stops reading, which makes our write fail first.
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(d.options.max_response_bytes > 0 ? d.options.max_response_bytes
                                                       : std::numeric_limits<std::uint64_t>::max());
    if (!d.cancelled) {
      Tcp(*d.stream).expires_after(timeout);
      std::visit(
          [&](auto& stream) {
            bhttp::async_read(stream, d.buffer, parser,
                              [&](beast::error_code e, size_t) { read_ec = e; });
          },
          *d.stream);
      d.Run();
    }
    if (read_ec || d.cancelled || !parser.is_done()) {
      d.SetActiveFd(-1);
      d.stream.reset();
      beast::error_code ec = read_ec ? read_ec : write_ec;
      if (reused && repeatable && !d.cancelled && ec != beast::error::timeout) continue;
      return Status::Unavailable(
          method + (d.options.target_in_errors ? " " + target : "") +
          " failed: " + (d.cancelled ? std::string("cancelled") : ec.message()));
    }
    auto& res = parser.get();
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    for (const auto& field : res) {
      out.headers[AsciiLower(std::string(field.name_string()))] = std::string(field.value());
    }
    if (!res.keep_alive() || write_ec) {
      d.SetActiveFd(-1);
      d.stream.reset();
    }
    return out;
  }
  return Status::Unavailable(method + (d.options.target_in_errors ? " " + target : "") + " failed");
}

Status StatusFromHttp(int http_status, const std::string& body) {
  if (http_status >= 200 && http_status < 300) return Status::Ok();
  std::string message;
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("message") && parsed["message"].is_string()) {
    message = parsed["message"].get<std::string>();
  } else {
    message = body.substr(0, 200);
  }
  message = "HTTP " + std::to_string(http_status) + (message.empty() ? "" : ": " + message);
  if (http_status >= 500) return Status::Unavailable(message);
  switch (http_status) {
    case 400:
      return Status::InvalidArgument(message);
    case 401:
      return Status::Unauthenticated(message);
    case 403:
      return Status::PermissionDenied(message);
    case 404:
      return Status::NotFound(message);
    case 409:
      return Status::FailedPrecondition(message);
    case 413:
    case 429:
      return Status::ResourceExhausted(message);
    default:
      return Status::FailedPrecondition(message);
  }
}

void Client::SetDefaultHeader(const std::string& name, const std::string& value) {
  if (value.empty()) {
    impl_->default_headers.erase(name);
  } else {
    impl_->default_headers[name] = value;
  }
}

Status Client::StreamLines(const std::string& method, const std::string& target,
                           const std::function<bool(std::string_view line)>& on_line,
                           const std::map<std::string, std::string>& headers,
                           std::chrono::milliseconds idle_timeout) {
  Impl& d = *impl_;
  d.cancelled = false;
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<Connection> connection,
                         d.Connect(std::chrono::seconds(30)));
  Connection& stream = *connection;
  beast::tcp_stream& tcp_layer = Tcp(stream);
  if (d.cancelled) {
    d.SetActiveFd(-1);
    return Status::Unavailable("cancelled");
  }
  bhttp::request<bhttp::empty_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, d.host + ":" + std::to_string(d.port));
  req.set(bhttp::field::user_agent, "cairn");
  for (const auto& [name, value] : d.default_headers) req.set(name, value);
  for (const auto& [name, value] : headers) req.set(name, value);
  req.keep_alive(false);
  beast::error_code ec;
  tcp_layer.expires_after(std::chrono::seconds(30));
  std::visit(
      [&](auto& s) { bhttp::async_write(s, req, [&](beast::error_code e, size_t) { ec = e; }); },
      stream);
  d.Run();
  if (ec) {
    d.SetActiveFd(-1);
    return Status::Unavailable("stream request failed: " + ec.message());
  }
  tcp_layer.expires_never();
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  std::visit(
      [&](auto& s) {
        bhttp::async_read_header(s, buffer, parser, [&](beast::error_code e, size_t) { ec = e; });
      },
      stream);
  d.Run();
  if (ec) {
    d.SetActiveFd(-1);
    return Status::Unavailable("stream response failed: " + ec.message());
  }
  int status = static_cast<int>(parser.get().result_int());
  std::string pending;
  std::string error_body;
  char chunk[16 * 1024];
  Status result = Status::Ok();
  bool stop = false;
  while (!parser.is_done() && !stop) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof chunk;
    if (idle_timeout.count() > 0) {
      tcp_layer.expires_after(idle_timeout);
    } else {
      tcp_layer.expires_never();
    }
    std::visit(
        [&](auto& s) {
          bhttp::async_read_some(s, buffer, parser, [&](beast::error_code e, size_t) { ec = e; });
        },
        stream);
    d.Run();
    if (ec == bhttp::error::need_buffer) ec = {};
    size_t got = sizeof chunk - parser.get().body().size;
    if (status != 200) {
      error_body.append(chunk, got);
    } else {
      pending.append(chunk, got);
      size_t newline;
      while (!stop && (newline = pending.find('\n')) != std::string::npos) {
        if (!on_line(std::string_view(pending.data(), newline))) stop = true;
        pending.erase(0, newline + 1);
      }
    }
    if (ec) {
      if (ec != bhttp::error::end_of_stream) {
        result =
            Status::Unavailable(d.cancelled ? "stream cancelled" : "stream broke: " + ec.message());
      }
      break;
    }
  }
  if (result.ok() && !stop && status == 200 && !pending.empty()) on_line(pending);
  d.SetActiveFd(-1);
  tcp_layer.socket().shutdown(tcp::socket::shutdown_both, ec);
  if (status != 200 && result.ok()) {
    return Status(status == 404 ? StatusCode::kNotFound : StatusCode::kFailedPrecondition,
                  "HTTP " + std::to_string(status) + ": " + error_body);
  }
  return result;
}

void Client::Cancel() {
  std::lock_guard lock(impl_->fd_mutex);
  impl_->cancelled = true;
  if (impl_->active_fd >= 0) ::shutdown(impl_->active_fd, SHUT_RDWR);
}

const std::string& Client::host() const { return impl_->host; }
uint16_t Client::port() const { return impl_->port; }
const ClientOptions& Client::options() const { return impl_->options; }

}  // namespace cairn::net
