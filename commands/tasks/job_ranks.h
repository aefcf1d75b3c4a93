// The live jobs (those with a task that has not exited) of every resource pool in queue order,
// with ranks: how many jobs are ahead of one, and which come first, in O(log n) instead of a walk
// of the queue, so that explaining one task (scheduler/explain.h) costs the same with ten jobs
// queued as with a hundred thousand. Part of DecisionState, kept by Apply. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cairn::commands {

class JobRanks {
 public:
  JobRanks();
  ~JobRanks();
  JobRanks(JobRanks&&) noexcept;
  JobRanks& operator=(JobRanks&&) noexcept;

  // A job with these queue parameters became live, or stopped being live. Its queue parameters
  // change by Remove with the old ones, then Add with the new. Add keeps a view of `job_id`, which
  // must stay where it is, unchanged, until the job is removed (DecisionState passes the
  // JobRecord's own id: its records never move, and a job's id never changes).
  void Add(const std::string& pool, int32_t priority, int64_t position, const std::string& job_id);
  void Remove(const std::string& pool, int32_t priority, int64_t position,
              const std::string& job_id);

  // Live jobs of `pool` strictly ahead of a job at (priority, position): ordered by priority
  // (lower first) and then position when `by_priority` (the priority scheduler's queue), by
  // position alone otherwise.
  size_t CountAhead(const std::string& pool, bool by_priority, int32_t priority,
                    int64_t position) const;
  // The first `limit` of those jobs, in that order.
  std::vector<std::string> FirstAhead(const std::string& pool, bool by_priority, int32_t priority,
                                      int64_t position, size_t limit) const;

 private:
  struct Trees;
  std::unique_ptr<Trees> trees_;
};

}  // namespace cairn::commands
