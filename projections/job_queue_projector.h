// The job queue projection: every job with its live tasks, its scheduling parameters and its
// place in its resource pool's queue. Keys:
//   "job/<job_id>"   -> JobView; an experiment's job (trials) is kept after its last task ended,
//                       so that a later trial finds the job's priority and queue position there
//   "task/<task_id>" -> job id, while the task is live (task events name tasks, not jobs)
//   "queue/<pool>\0<priority><queue_position><job_id>" -> job id, while the job has live tasks;
//                       big-endian with sign bits flipped, so a prefix scan walks a pool in
//                       (priority, queue_position) order
//   "order/<pool>\0<queue_position><job_id>" -> job id, the same jobs in (queue_position)
//                       order: the queue of a pool that does not order by priority
//   "count/<pool>\0"  -> how many jobs the pool's queue holds (decimal), absent at 0
//   "config/pools"   -> the latest ResourcePoolsConfigured (which pools order by priority)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kJobQueueProjector = "job_queue";

// A new job's queue position is its submission offset times this spacing, so that moves can
// land between two jobs. Equal to commands::kQueuePositionSpacing (checked by a test): the
// write side computes the same positions.
inline constexpr int64_t kQueuePositionSpacing = int64_t{1} << 20;

class JobQueueProjector : public Projector {
 public:
  const std::string& name() const override { return kJobQueueProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

// The queue of `pool` ("" = every pool, pool by pool in name order) with jobs_ahead = the index
// in its pool. A pool whose recorded scheduler is `priority` is ordered by (priority,
// queue_position); any other pool (fair share, round robin, or a pool with no recorded
// configuration) by queue_position alone, priority being no part of its order. Ties go to the
// job id.
Result<std::vector<views::JobView>> ReadJobQueue(ViewReader& reader, const std::string& pool);

// How many jobs each pool's queue holds ("" = every pool with any), in pool-name order: a key
// per pool read, whatever the queue's length.
Result<std::vector<std::pair<std::string, size_t>>> ReadJobQueueLengths(ViewReader& reader,
                                                                        const std::string& pool);

// Jobs [offset, offset + limit) of the same queue (limit 0: to the end), counted from its end
// when `descending`, and how many it holds in all. Reads the page and the pools' counts, not the
// whole queue: the first page of `det job list` costs the same with 100,000 jobs queued as with
// ten.
struct JobQueuePage {
  std::vector<views::JobView> jobs;
  size_t total = 0;
};
Result<JobQueuePage> ReadJobQueuePage(ViewReader& reader, const std::string& pool, size_t offset,
                                      size_t limit, bool descending);

}  // namespace cairn::projections
