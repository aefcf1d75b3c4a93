// Certificates for HTTPS tests, made at test time with the openssl binary: a throwaway CA and a
// server certificate it signed. Nothing is checked in, so nothing expires or leaks.
#pragma once

#include <string>

#include "base/status.h"

namespace cairn::testing {

struct TestCertificates {
  std::string ca_file;    // the CA's certificate (PEM): what clients trust
  std::string cert_file;  // the server's certificate (PEM), signed by the CA
  std::string key_file;   // the server's private key (PEM, unencrypted)
};

// Writes a new CA and a server certificate for `subject_alt_names` (openssl's syntax, e.g.
// "DNS:localhost,IP:127.0.0.1"), valid for a day, into `directory` (which must exist).
// Unavailable when openssl is missing or fails, with its output.
Result<TestCertificates> MakeTestCertificates(
    const std::string& directory,
    const std::string& subject_alt_names = "DNS:localhost,IP:127.0.0.1");

}  // namespace cairn::testing
