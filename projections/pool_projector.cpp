#include "projections/pool_projector.h"

#include <algorithm>
#include <set>

#include "events/envelope_util.h"
#include "events/pool_defaults.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kConfigKey = "config";
constexpr std::string_view kUsagePrefix = "usage/";
constexpr std::string_view kPoolAgentPrefix = "agent/";
constexpr std::string_view kPoolAllocationPrefix = "allocation/";

// What one agent adds to its pool's usage: its slots and allocations while it is connected; its
// slot type always (a pool of GPU agents stays a GPU pool while they reconnect).
views::PoolUsage ContributionOf(const views::PoolAgent& agent) {
  views::PoolUsage usage;
  usage.set_cuda_agents(agent.cuda() ? 1 : 0);
  if (!agent.connected()) return usage;
  usage.set_agents(1);
  usage.set_slots(agent.slot_count());
  // Slots in use, each once: what the scheduler counts (allocations never share a slot, but the
  // count must not be what breaks if a log ever said otherwise).
  std::set<int32_t> used;
  for (const auto& allocation : agent.allocations()) {
    if (allocation.slot_ids_size() == 0) usage.set_aux_containers(usage.aux_containers() + 1);
    used.insert(allocation.slot_ids().begin(), allocation.slot_ids().end());
  }
  usage.set_used_slots(static_cast<int32_t>(used.size()));
  return usage;
}

Status AddToPool(const std::string& pool, const views::PoolUsage& delta, int sign,
                 ViewStore& store) {
  if (pool.empty() || (delta.agents() == 0 && delta.cuda_agents() == 0)) return Status::Ok();
  const std::string key = PrefixedKey(kUsagePrefix, pool);
  views::PoolUsage absent;
  CAIRN_ASSIGN_OR_RETURN(views::PoolUsage * found, OpenView(store, key, &absent));
  views::PoolUsage& usage = found != nullptr ? *found : absent;
  usage.set_agents(usage.agents() + sign * delta.agents());
  usage.set_slots(usage.slots() + sign * delta.slots());
  usage.set_used_slots(usage.used_slots() + sign * delta.used_slots());
  usage.set_aux_containers(usage.aux_containers() + sign * delta.aux_containers());
  usage.set_cuda_agents(usage.cuda_agents() + sign * delta.cuda_agents());
  if (usage.agents() == 0 && usage.cuda_agents() == 0) return store.Delete(key);
  return store.PutMessage(key, usage);
}

// Loads one agent, lets `change` edit it, and moves its contribution from the old to the new
// state of the agent. `change` returns false when it changed nothing.
template <typename Change>
Status UpdateAgent(const std::string& agent_id, ViewStore& store, Change change) {
  if (agent_id.empty()) return Status::Ok();
  const std::string key = PrefixedKey(kPoolAgentPrefix, agent_id);
  views::PoolAgent absent;
  CAIRN_ASSIGN_OR_RETURN(views::PoolAgent * found, OpenView(store, key, &absent));
  const bool exists = found != nullptr;
  views::PoolAgent& agent = exists ? *found : absent;
  const views::PoolUsage before = ContributionOf(agent);
  const std::string pool_before = agent.resource_pool();
  if (!change(exists, agent)) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(AddToPool(pool_before, before, -1, store));
  CAIRN_RETURN_IF_ERROR(AddToPool(agent.resource_pool(), ContributionOf(agent), +1, store));
  return store.PutMessage(key, agent);
}

bool RemoveAllocation(views::PoolAgent& agent, const std::string& allocation_id) {
  auto* allocations = agent.mutable_allocations();
  auto it = std::find_if(allocations->begin(), allocations->end(), [&](const auto& allocation) {
    return allocation.allocation_id() == allocation_id;
  });
  if (it == allocations->end()) return false;
  allocations->erase(it);
  return true;
}

Status OnRegistered(const events::AgentRegistered& registered, ViewStore& store) {
  return UpdateAgent(registered.agent_id(), store, [&](bool exists, views::PoolAgent& agent) {
    // A new incarnation is a new process that runs nothing yet (the decider ended the old
    // process's tasks before registering it).
    if (!exists || agent.incarnation() != registered.incarnation()) agent.clear_allocations();
    agent.set_agent_id(registered.agent_id());
    agent.set_incarnation(registered.incarnation());
    agent.set_resource_pool(registered.resource_pool());
    agent.set_slot_count(registered.slot_count());
    agent.set_connected(true);
    agent.set_cuda(
        std::any_of(registered.devices().begin(), registered.devices().end(),
                    [](const events::Device& device) { return device.type() == "cuda"; }));
    return true;
  });
}

Status OnDisconnected(const events::AgentDisconnected& disconnected, ViewStore& store) {
  return UpdateAgent(disconnected.agent_id(), store, [&](bool exists, views::PoolAgent& agent) {
    if (!exists || !agent.connected()) return false;
    if (!disconnected.incarnation().empty() && disconnected.incarnation() != agent.incarnation()) {
      return false;
    }
    agent.set_connected(false);
    return true;
  });
}

Status OnAssignedInPool(const events::AllocationAssigned& assigned, ViewStore& store) {
  std::vector<std::string> holders;
  for (const auto& part : AllocationPartsOf(assigned)) {
    CAIRN_RETURN_IF_ERROR(
        UpdateAgent(part.agent_id(), store, [&](bool exists, views::PoolAgent& agent) {
          // An assignment addressed to an older process of the agent is stale.
          if (!exists || (!part.agent_incarnation().empty() &&
                          part.agent_incarnation() != agent.incarnation())) {
            return false;
          }
          auto* allocation = agent.add_allocations();
          allocation->set_allocation_id(assigned.allocation_id());
          allocation->set_task_id(assigned.task_id());
          allocation->mutable_slot_ids()->CopyFrom(part.slot_ids());
          holders.push_back(part.agent_id());
          return true;
        }));
  }
  if (holders.empty()) return Status::Ok();
  return store.Put(PrefixedKey(kPoolAllocationPrefix, assigned.allocation_id()), JoinIds(holders));
}

// Takes the allocation off `only_agent` (a gang's part that ended), or off every agent holding it.
Status OnPoolAllocationEnded(const std::string& allocation_id, const std::string& only_agent,
                             ViewStore& store) {
  if (allocation_id.empty()) return Status::Ok();
  const std::string index_key = PrefixedKey(kPoolAllocationPrefix, allocation_id);
  CAIRN_ASSIGN_OR_RETURN(auto index, store.Get(index_key));
  if (!index) return Status::Ok();
  std::vector<std::string> holders = SplitIds(*index);
  std::vector<std::string> ending =
      only_agent.empty() ? holders : std::vector<std::string>{only_agent};
  for (const auto& agent_id : ending) {
    CAIRN_RETURN_IF_ERROR(UpdateAgent(agent_id, store, [&](bool exists, views::PoolAgent& agent) {
      return exists && RemoveAllocation(agent, allocation_id);
    }));
    holders.erase(std::remove(holders.begin(), holders.end(), agent_id), holders.end());
  }
  return holders.empty() ? store.Delete(index_key) : store.Put(index_key, JoinIds(holders));
}

}  // namespace

Status PoolProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kResourcePoolsConfigured:
      return store.PutMessage(kConfigKey, event.resource_pools_configured());
    case Envelope::kAgentRegistered:
      return OnRegistered(event.agent_registered(), store);
    case Envelope::kAgentDisconnected:
      return OnDisconnected(event.agent_disconnected(), store);
    case Envelope::kAllocationAssigned:
      return OnAssignedInPool(event.allocation_assigned(), store);
    case Envelope::kTaskExited:
      return OnPoolAllocationEnded(event.task_exited().allocation_id(), "", store);
    case Envelope::kAllocationReleased:
      return OnPoolAllocationEnded(event.allocation_released().allocation_id(), "", store);
    case Envelope::kAllocationPartExited: {
      const auto& exited = event.allocation_part_exited();
      if (exited.agent_id().empty()) return Status::Ok();
      return OnPoolAllocationEnded(exited.allocation_id(), exited.agent_id(), store);
    }
    default:
      return Status::Ok();
  }
}

Result<std::vector<views::PoolView>> ReadPools(ViewReader& reader) {
  events::ResourcePoolsConfigured config;
  CAIRN_ASSIGN_OR_RETURN(bool configured, GetMessage(reader, kConfigKey, &config));
  if (!configured) config = DefaultPoolsConfig();
  std::vector<views::PoolView> pools;
  for (const auto& pool_config : config.pools()) {
    views::PoolView& pool = pools.emplace_back();
    *pool.mutable_config() = pool_config;
    pool.set_default_compute(pool_config.pool_name() == config.default_compute_pool());
    pool.set_default_aux(pool_config.pool_name() == config.default_aux_pool());
    CAIRN_RETURN_IF_ERROR(
        GetMessage(reader, PrefixedKey(kUsagePrefix, pool_config.pool_name()), pool.mutable_usage())
            .status());
  }
  return pools;
}

}  // namespace cairn::projections
