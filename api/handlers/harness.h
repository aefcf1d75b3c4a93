// The trial harness's protocol (agent/harness/PROTOCOL.md): a trial process asks where its run
// starts and for its model definition, then reports each workload and gets the next one.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response TrialDescription(Call& call);  // GET /api/v1/allocations/{id}/trial
net::Response TrialContext(Call& call);      // GET /api/v1/allocations/{id}/context
net::Response ReportWorkload(Call& call);    // POST /api/v1/allocations/{id}/workloads

}  // namespace cairn::api
