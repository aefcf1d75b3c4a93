// The job queue (`det job list`, `det job update`): jobs per pool in the scheduler's order, their
// counts, and users' changes to priority, weight, pool, max slots and place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "api/call.h"
#include "base/status.h"
#include "commands/tasks/task_commands.h"

namespace cairn::api {

// GET /api/v1/job-queues-v2 and /api/v1/job-queues[?resourcePool=&offset=&limit=&orderBy=&states=]
// With explain=true (a page of at most 200 jobs), each job the caller may see also carries the
// scheduler's explanation of its first task as things are now, in cairn.explanation: what the
// web UI's queue shows, in one request rather than one per job.
net::Response JobQueueV2(Call& call);
net::Response JobQueue(Call& call);
net::Response JobQueueStats(Call& call);   // GET /api/v1/job-queues/stats
net::Response UpdateJobQueue(Call& call);  // POST /api/v1/job-queues {"updates": [...]}

// A job's change as Determined's bodies carry it, read once for every route that changes a job:
// an entry of the job queue's updates (jobId, priority, weight, resourcePool, maxSlots, aheadOf,
// behindOf), or an experiment's `resources` (the same but the job and the place; the caller
// names the job). Errors name the field under `path` ("updates[2].weight must be a number").
enum class JobUpdateShape { kQueueEntry, kExperimentResources };
Result<commands::UpdateJob> ParseJobUpdate(const nlohmann::json& object, const std::string& path,
                                           JobUpdateShape shape);

}  // namespace cairn::api
