// Internal to net/: the OpenSSL contexts of the HTTPS server and client, with the policy they
// share (TLS 1.2 or later) and errors that name the file at fault.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "base/status.h"

namespace cairn::net {

// A server context with this certificate chain and private key (PEM). InvalidArgument naming the
// file when one cannot be read or parsed, or when the key does not match the certificate.
Result<std::unique_ptr<boost::asio::ssl::context>> ServerTlsContext(const std::string& cert_file,
                                                                    const std::string& key_file);

// A client context that trusts the CAs in `ca_file` (PEM), or the system's when it is "".
// InvalidArgument naming the file when it cannot be read or holds no certificate.
Result<std::unique_ptr<boost::asio::ssl::context>> ClientTlsContext(const std::string& ca_file);

// Makes a client's handshake on `ssl` check that the server's certificate names `host` (a DNS
// name or an IP address), and send the name by SNI (never an address: RFC 6066).
void ExpectServerName(SSL* ssl, const std::string& host);

// Why a client's handshake with `server` ("host:port") failed with `ec`: Unauthenticated when the
// certificate failed verification (against `ca_file`, or the system's CAs when it is ""), which
// retrying cannot help, else Unavailable.
Status ClientHandshakeFailure(SSL* ssl, const std::string& server, const std::string& ca_file,
                              const boost::system::error_code& ec);

}  // namespace cairn::net
