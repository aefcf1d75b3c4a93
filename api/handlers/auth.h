// Logging in and out as Determined's CLI does, and who the caller is.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response Login(Call& call);   // POST /api/v1/auth/login
http::Response Logout(Call& call);  // POST /api/v1/auth/logout
http::Response Me(Call& call);      // GET /api/v1/me

}  // namespace cairn::api
