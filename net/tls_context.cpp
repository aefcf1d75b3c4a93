#include "net/tls_context.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/ip/address.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace cairn::net {

namespace ssl = boost::asio::ssl;

namespace {

// Why a TLS file cannot be used: the file itself when it cannot be opened, else OpenSSL's words.
Status FileError(const char* what, const std::string& path, const boost::system::error_code& ec) {
  std::ifstream readable(path);
  std::string reason = readable ? ec.message() : std::strerror(errno);
  return Status::InvalidArgument(std::string("TLS ") + what + " '" + path + "': " + reason);
}

std::unique_ptr<ssl::context> NewContext(ssl::context::method method) {
  auto context = std::make_unique<ssl::context>(method);
  // Older protocol versions have known weaknesses; every client Cairn supports speaks 1.2.
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  return context;
}

}  // namespace

Result<std::unique_ptr<ssl::context>> ServerTlsContext(const std::string& cert_file,
                                                       const std::string& key_file) {
  auto context = NewContext(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
  boost::system::error_code ec;
  context->use_certificate_chain_file(cert_file, ec);
  if (ec) return FileError("certificate file", cert_file, ec);
  context->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) return FileError("key file", key_file, ec);
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return Status::InvalidArgument("TLS key file '" + key_file +
                                   "' does not match the certificate in '" + cert_file + "'");
  }
  return context;
}

Result<std::unique_ptr<ssl::context>> ClientTlsContext(const std::string& ca_file) {
  auto context = NewContext(ssl::context::tls_client);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return Status::InvalidArgument("TLS: cannot load the system's CAs: " + ec.message());
  } else {
    context->load_verify_file(ca_file, ec);
    if (ec) return FileError("CA file", ca_file, ec);
  }
  context->set_verify_mode(ssl::verify_peer);
  return context;
}

void ExpectServerName(SSL* ssl, const std::string& host) {
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  // OpenSSL checks the name during the handshake and records why it refused, so a wrong name
  // reads as clearly as an unknown CA.
  if (ec) {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), address.to_string().c_str());
  }
}

Status ClientHandshakeFailure(SSL* ssl, const std::string& server, const std::string& ca_file,
                              const boost::system::error_code& ec) {
  const long verdict = SSL_get_verify_result(ssl);
  if (verdict != X509_V_OK) {
    return Status::Unauthenticated(
        "TLS: the certificate of " + server +
        " failed verification: " + X509_verify_cert_error_string(verdict) +
        (ca_file.empty() ? " (checked against the system's CAs)"
                         : " (checked against the CA file '" + ca_file + "')"));
  }
  return Status::Unavailable("TLS handshake with " + server + " failed: " + ec.message());
}

}  // namespace cairn::net
