#include "api/render/pool_json.h"

namespace cairn::api {

using nlohmann::json;

namespace {

std::string SchedulerTypeEnum(events::SchedulerType type) {
  switch (type) {
    case events::SCHEDULER_TYPE_PRIORITY:
      return "SCHEDULER_TYPE_PRIORITY";
    case events::SCHEDULER_TYPE_ROUND_ROBIN:
      return "SCHEDULER_TYPE_ROUND_ROBIN";
    default:
      return "SCHEDULER_TYPE_FAIR_SHARE";  // a blank type means fair share
  }
}

std::string FittingPolicyEnum(events::FittingPolicy policy) {
  return policy == events::FITTING_POLICY_WORST ? "FITTING_POLICY_WORST" : "FITTING_POLICY_BEST";
}

}  // namespace

json PoolJson(const views::PoolView& pool, const std::string& cluster_name) {
  const auto& config = pool.config();
  const auto& scheduler = config.scheduler();
  const auto& usage = pool.usage();
  const bool priority = scheduler.type() == events::SCHEDULER_TYPE_PRIORITY;
  json details = json::object();
  if (priority) {
    details["priorityScheduler"] = {{"preemption", scheduler.preemption()},
                                    {"defaultPriority", scheduler.default_priority()}};
  }
  const int per_agent = config.max_aux_containers_per_agent();
  return {{"name", config.pool_name()},
          {"description", config.description()},
          {"type", "RESOURCE_POOL_TYPE_STATIC"},
          {"defaultComputePool", pool.default_compute()},
          {"defaultAuxPool", pool.default_aux()},
          // Determined calls a pool preemptible when its scheduler may preempt.
          {"preemptible", priority && scheduler.preemption()},
          {"numAgents", usage.agents()},
          {"slotsAvailable", usage.slots()},
          {"slotsUsed", usage.used_slots()},
          {"auxContainerCapacity", usage.agents() * per_agent},
          {"auxContainersRunning", usage.aux_containers()},
          {"auxContainerCapacityPerAgent", per_agent},
          {"minAgents", 0},
          {"maxAgents", 0},
          {"slotType", usage.cuda_agents() > 0 ? "TYPE_CUDA" : "TYPE_CPU"},
          {"schedulerType", SchedulerTypeEnum(scheduler.type())},
          {"schedulerFittingPolicy", FittingPolicyEnum(scheduler.fitting_policy())},
          {"location", "on-prem"},
          {"imageId", ""},
          {"instanceType", ""},
          {"masterUrl", ""},
          {"masterCertName", ""},
          {"startupScript", ""},
          {"containerStartupScript", ""},
          {"agentDockerNetwork", ""},
          {"agentDockerRuntime", ""},
          {"agentDockerImage", ""},
          {"agentFluentImage", ""},
          {"maxIdleAgentPeriod", 0},
          {"maxAgentStartingPeriod", 0},
          {"details", details},
          {"resourceManagerMetadata", json::object()},
          {"clusterName", cluster_name}};
}

}  // namespace cairn::api
