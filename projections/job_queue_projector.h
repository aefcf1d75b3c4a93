// The job queue projection: the jobs waiting in or scheduled from each resource pool's queue.
// Keys: "job/<job_id>" -> JobView; "task/<task_id>" -> job_id (exits name tasks, not jobs);
// "queue/<pool>\0<priority><submitted_offset>" -> job_id, big-endian, so a prefix scan walks a
// pool in queue order.
#pragma once

#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kJobQueueProjector = "job_queue";

class JobQueueProjector : public Projector {
 public:
  const std::string& name() const override { return kJobQueueProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

// The queue of `pool` ("" = every pool, pool by pool in name order), each pool ordered by
// (priority ascending, submitted_offset ascending), with jobs_ahead = the index in its pool.
Result<std::vector<views::JobView>> ReadJobQueue(ViewReader& reader, const std::string& pool);

}  // namespace cairn::projections
