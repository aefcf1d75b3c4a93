// Cairn's own event stream: the log as JSON lines, for analytics consumers and, filtered to their
// placement orders, for agents in embedded mode.
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET /api/v1/events?from=OFFSET&follow=true[&agent=ID][&type=T,...]
net::Response EventStream(Call& call);

}  // namespace cairn::api
