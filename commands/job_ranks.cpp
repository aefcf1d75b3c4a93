#include "commands/job_ranks.h"

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <functional>
#include <limits>
#include <tuple>

namespace cairn::commands {

namespace {

// A red-black tree whose nodes also count their subtrees (libstdc++'s policy-based data
// structures): order_of_key is the rank of a key in O(log n).
template <typename Key>
using RankedSet =
    __gnu_pbds::tree<Key, __gnu_pbds::null_type, std::less<Key>, __gnu_pbds::rb_tree_tag,
                     __gnu_pbds::tree_order_statistics_node_update>;

// (pool, priority, position, job id) and (pool, position, job id): the two queue orders.
using PriorityKey = std::tuple<std::string, int32_t, int64_t, std::string>;
using PositionKey = std::tuple<std::string, int64_t, std::string>;

constexpr int32_t kLowestPriority = std::numeric_limits<int32_t>::min();
constexpr int64_t kFirstPosition = std::numeric_limits<int64_t>::min();

// The rank of `at` among the keys of `pool`, which begin at `pool_start`; "" sorts before every
// job id, so a job at the same place as `at` is not counted as ahead of it.
template <typename Key>
size_t RankInPool(const RankedSet<Key>& set, const Key& pool_start, const Key& at) {
  return set.order_of_key(at) - set.order_of_key(pool_start);
}

template <typename Key>
std::vector<std::string> FirstInPool(const RankedSet<Key>& set, const Key& pool_start,
                                     const Key& at, size_t limit) {
  std::vector<std::string> job_ids;
  for (auto it = set.lower_bound(pool_start); it != set.end() && *it < at && job_ids.size() < limit;
       ++it) {
    job_ids.push_back(std::get<std::tuple_size_v<Key> - 1>(*it));
  }
  return job_ids;
}

}  // namespace

struct JobRanks::Trees {
  RankedSet<PriorityKey> by_priority;
  RankedSet<PositionKey> by_position;
};

JobRanks::JobRanks() : trees_(std::make_unique<Trees>()) {}
JobRanks::~JobRanks() = default;
JobRanks::JobRanks(JobRanks&&) noexcept = default;
JobRanks& JobRanks::operator=(JobRanks&&) noexcept = default;

void JobRanks::Add(const std::string& pool, int32_t priority, int64_t position,
                   const std::string& job_id) {
  trees_->by_priority.insert({pool, priority, position, job_id});
  trees_->by_position.insert({pool, position, job_id});
}

void JobRanks::Remove(const std::string& pool, int32_t priority, int64_t position,
                      const std::string& job_id) {
  trees_->by_priority.erase({pool, priority, position, job_id});
  trees_->by_position.erase({pool, position, job_id});
}

size_t JobRanks::CountAhead(const std::string& pool, bool by_priority, int32_t priority,
                            int64_t position) const {
  if (by_priority) {
    return RankInPool(trees_->by_priority, {pool, kLowestPriority, kFirstPosition, ""},
                      {pool, priority, position, ""});
  }
  return RankInPool(trees_->by_position, {pool, kFirstPosition, ""}, {pool, position, ""});
}

std::vector<std::string> JobRanks::FirstAhead(const std::string& pool, bool by_priority,
                                              int32_t priority, int64_t position,
                                              size_t limit) const {
  if (by_priority) {
    return FirstInPool(trees_->by_priority, {pool, kLowestPriority, kFirstPosition, ""},
                       {pool, priority, position, ""}, limit);
  }
  return FirstInPool(trees_->by_position, {pool, kFirstPosition, ""}, {pool, position, ""}, limit);
}

}  // namespace cairn::commands
