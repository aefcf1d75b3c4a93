// The resource pools as configured, with what their agents offer and hold
// (`det resource-pool list`).
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ListResourcePools(Call& call);  // GET /api/v1/resource-pools

}  // namespace cairn::api
