// The job queue (`det job list`, `det job update`): jobs per pool in the scheduler's order, their
// counts, and users' changes to priority, weight, pool, max slots and place.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response JobQueueV2(Call& call);      // GET /api/v1/job-queues-v2
http::Response JobQueue(Call& call);        // GET /api/v1/job-queues
http::Response JobQueueStats(Call& call);   // GET /api/v1/job-queues/stats
http::Response UpdateJobQueue(Call& call);  // POST /api/v1/job-queues {"updates": [...]}

}  // namespace cairn::api
