// Logging a client in to a Cairn master, as Determined's CLI does: POST /api/v1/auth/login with
// a plain password, then every later request of that client carries the session's bearer token.
// For tools and tests that talk to the master over HTTP (benchmarks, end-to-end tests).
#pragma once

#include <string>

#include "base/status.h"
#include "net/http_client.h"

namespace cairn::net {

// Logs `client` in as `username`; on success the client sends "Authorization: Bearer <token>"
// from now on and the token is returned. A refused login is Unauthenticated with the master's
// message; a transport failure is Unavailable.
Result<std::string> LogIn(Client& client, const std::string& username,
                          const std::string& password = "");

}  // namespace cairn::net
