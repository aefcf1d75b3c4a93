#include "events/pool_defaults.h"

namespace cairn {

events::ResourcePoolsConfigured DefaultPoolsConfig() {
  events::ResourcePoolsConfigured config;
  auto* pool = config.add_pools();
  pool->set_pool_name(kDefaultPool);
  pool->mutable_scheduler()->set_type(events::SCHEDULER_TYPE_FAIR_SHARE);
  pool->mutable_scheduler()->set_fitting_policy(events::FITTING_POLICY_BEST);
  pool->mutable_scheduler()->set_default_priority(kDefaultPriority);
  pool->set_max_aux_containers_per_agent(kMaxZeroSlotContainersPerAgent);
  config.set_default_compute_pool(kDefaultPool);
  config.set_default_aux_pool(kDefaultPool);
  config.set_source("defaults");
  config.set_preemption_grace_seconds(kDefaultPreemptionGraceSeconds);
  return config;
}

std::string PoolNamesOf(const events::ResourcePoolsConfigured& config) {
  std::string names;
  for (const auto& pool : config.pools()) names += (names.empty() ? "" : ", ") + pool.pool_name();
  return names;
}

}  // namespace cairn
