// Every route of Cairn's REST API, in one table (route_table.cpp): Determined's /api/v1 shapes
// (README.md, "REST API") so the `det` CLI works unchanged, the agent protocol
// (agent/PROTOCOL.md), the trial harness's protocol (agent/harness/PROTOCOL.md) and Cairn's own
// event stream. A new route is one line there plus its handler in api/handlers/.
#pragma once

#include <vector>

#include "api/router.h"

namespace cairn::api {

std::vector<Route> RouteTable();

}  // namespace cairn::api
