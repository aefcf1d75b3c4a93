#include "commands/tasks/job_ranks.h"

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>

namespace cairn::commands {

namespace {

// A red-black tree whose nodes also count their subtrees (libstdc++'s policy-based data
// structures): order_of_key is the rank of a key in O(log n).
template <typename Key>
using RankedSet =
    __gnu_pbds::tree<Key, __gnu_pbds::null_type, std::less<Key>, __gnu_pbds::rb_tree_tag,
                     __gnu_pbds::tree_order_statistics_node_update>;

// (priority, position, job id) and (position, job id): a pool's two queue orders. The job id is
// a view of the caller's string (the JobRecord's own): a live job costs two tree nodes and no
// copy of its id or pool (about 190 bytes less per queued job).
using PriorityKey = std::tuple<int32_t, int64_t, std::string_view>;
using PositionKey = std::tuple<int64_t, std::string_view>;

template <typename Key>
std::vector<std::string> First(const RankedSet<Key>& set, const Key& at, size_t limit) {
  std::vector<std::string> job_ids;
  for (auto it = set.begin(); it != set.end() && *it < at && job_ids.size() < limit; ++it) {
    job_ids.emplace_back(std::get<std::tuple_size_v<Key> - 1>(*it));
  }
  return job_ids;
}

}  // namespace

struct JobRanks::Trees {
  struct Pool {
    RankedSet<PriorityKey> by_priority;
    RankedSet<PositionKey> by_position;
  };
  std::map<std::string, Pool, std::less<>> pools;
};

JobRanks::JobRanks() : trees_(std::make_unique<Trees>()) {}
JobRanks::~JobRanks() = default;
JobRanks::JobRanks(JobRanks&&) noexcept = default;
JobRanks& JobRanks::operator=(JobRanks&&) noexcept = default;

void JobRanks::Add(const std::string& pool, int32_t priority, int64_t position,
                   const std::string& job_id) {
  Trees::Pool& trees = trees_->pools[pool];
  trees.by_priority.insert({priority, position, job_id});
  trees.by_position.insert({position, job_id});
}

void JobRanks::Remove(const std::string& pool, int32_t priority, int64_t position,
                      const std::string& job_id) {
  auto trees = trees_->pools.find(pool);
  if (trees == trees_->pools.end()) return;
  trees->second.by_priority.erase({priority, position, job_id});
  trees->second.by_position.erase({position, job_id});
  if (trees->second.by_position.empty()) trees_->pools.erase(trees);
}

size_t JobRanks::CountAhead(const std::string& pool, bool by_priority, int32_t priority,
                            int64_t position) const {
  auto trees = trees_->pools.find(pool);
  if (trees == trees_->pools.end()) return 0;
  // "" sorts before every job id: a job at the same place is not counted as ahead.
  if (by_priority) return trees->second.by_priority.order_of_key({priority, position, ""});
  return trees->second.by_position.order_of_key({position, ""});
}

std::vector<std::string> JobRanks::FirstAhead(const std::string& pool, bool by_priority,
                                              int32_t priority, int64_t position,
                                              size_t limit) const {
  auto trees = trees_->pools.find(pool);
  if (trees == trees_->pools.end()) return {};
  if (by_priority) return First(trees->second.by_priority, {priority, position, ""}, limit);
  return First(trees->second.by_position, {position, ""}, limit);
}

}  // namespace cairn::commands
