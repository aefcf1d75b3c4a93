// The master's identity: Determined's /info and /api/v1/master.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response Info(Call& call);        // GET /info
net::Response MasterInfo(Call& call);  // GET /api/v1/master
// Admins only: what the master runs with, and what it has been saying.
net::Response MasterConfigRoute(Call& call);  // GET /api/v1/master/config
net::Response MasterLogs(Call& call);         // GET /api/v1/master/logs[?offset=&limit=&follow=]
// GET /metrics: Prometheus's text format (any signed-in user: counts and latencies only, no
// names but pools' and projections').
net::Response Metrics(Call& call);

// The Determined CLI compares this with its own version; we speak its 0.38 API.
inline constexpr const char* kDeterminedApiVersion = "0.38.1";
inline constexpr const char* kCairnVersion = "0.1.0";

}  // namespace cairn::api
