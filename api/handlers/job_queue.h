// The job queue (`det job list`, `det job update`): jobs per pool in the scheduler's order, their
// counts, and users' changes to priority, weight, pool, max slots and place.
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET /api/v1/job-queues-v2 and /api/v1/job-queues[?resourcePool=&offset=&limit=&orderBy=&states=]
// With explain=true (a page of at most 200 jobs), each job the caller may see also carries the
// scheduler's explanation of its first task as things are now, in cairn.explanation: what the
// web UI's queue shows, in one request rather than one per job.
http::Response JobQueueV2(Call& call);
http::Response JobQueue(Call& call);
http::Response JobQueueStats(Call& call);   // GET /api/v1/job-queues/stats
http::Response UpdateJobQueue(Call& call);  // POST /api/v1/job-queues {"updates": [...]}

}  // namespace cairn::api
