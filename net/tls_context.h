// Internal to net/: the OpenSSL contexts of the HTTPS server and client, with the policy they
// share (TLS 1.2 or later) and errors that name the file at fault.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "base/status.h"

namespace cairn::http {

// A server context with this certificate chain and private key (PEM). InvalidArgument naming the
// file when one cannot be read or parsed, or when the key does not match the certificate.
Result<std::unique_ptr<boost::asio::ssl::context>> ServerTlsContext(const std::string& cert_file,
                                                                    const std::string& key_file);

// A client context that trusts the CAs in `ca_file` (PEM), or the system's when it is "".
// InvalidArgument naming the file when it cannot be read or holds no certificate.
Result<std::unique_ptr<boost::asio::ssl::context>> ClientTlsContext(const std::string& ca_file);

}  // namespace cairn::http
