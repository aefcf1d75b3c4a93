// Trials (`det trial describe/logs`, `det experiment create -f`): read from the experiments
// projection; logs stream every run of the trial in order.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response GetTrial(Call& call);          // GET /api/v1/trials/{id}
http::Response TrialWorkloads(Call& call);    // GET /api/v1/trials/{id}/workloads
http::Response TrialLogs(Call& call);         // GET /api/v1/trials/{id}/logs[?follow=true]
http::Response TrialCheckpoints(Call& call);  // GET /api/v1/trials/{id}/checkpoints
http::Response KillTrialRoute(Call& call);    // POST /api/v1/trials/{id}/kill

}  // namespace cairn::api
