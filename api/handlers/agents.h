// The cluster's agents as users see them (`det agent list`, `det slot list`, enable/disable).
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ListAgents(Call& call);    // GET /api/v1/agents
net::Response GetAgent(Call& call);      // GET /api/v1/agents/{id}
net::Response EnableAgent(Call& call);   // POST /api/v1/agents/{id}/enable
net::Response DisableAgent(Call& call);  // POST /api/v1/agents/{id}/disable {"drain": bool}
// det slot enable/disable: POST /api/v1/agents/{id}/slots/{slotId}/enable|disable, the second
// with an optional {"drain": bool}; both answer {"slot": v1Slot}.
net::Response EnableSlot(Call& call);
net::Response DisableSlot(Call& call);

}  // namespace cairn::api
