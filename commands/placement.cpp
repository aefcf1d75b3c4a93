#include "commands/placement.h"

#include <algorithm>
#include <map>
#include <optional>

namespace cairn::commands {

namespace {

// What the placement pass has promised so far, on top of the state's agents.
struct AgentCapacity {
  const AgentRecord* agent;
  std::set<int32_t> used_slots;
  int32_t zero_slot_containers;

  int32_t free_slots() const { return agent->slot_count - static_cast<int32_t>(used_slots.size()); }
  int32_t free_zero_slot_places() const {
    return kMaxZeroSlotContainersPerAgent - zero_slot_containers;
  }
};

// The schedulable agents of one pool, in agent-id order (ties go to the smallest id), and the
// most any one of them can still take: a task needing more is skipped without a scan, which
// keeps a pass over a long queue on a full cluster cheap.
struct PoolCapacity {
  std::vector<AgentCapacity> agents;
  int32_t max_free_slots = 0;
  int32_t max_free_zero_slot_places = 0;

  void Recompute() {
    max_free_slots = 0;
    max_free_zero_slot_places = 0;
    for (const auto& agent : agents) {
      max_free_slots = std::max(max_free_slots, agent.free_slots());
      max_free_zero_slot_places =
          std::max(max_free_zero_slot_places, agent.free_zero_slot_places());
    }
  }
};

// Best fit: the agent left with the least room after taking the task.
AgentCapacity* ChooseAgent(PoolCapacity& pool, int32_t needed) {
  AgentCapacity* best = nullptr;
  int32_t best_left = 0;
  for (auto& candidate : pool.agents) {
    int32_t left =
        needed == 0 ? candidate.free_zero_slot_places() - 1 : candidate.free_slots() - needed;
    if (left < 0) continue;
    if (best == nullptr || left < best_left) {
      best = &candidate;
      best_left = left;
    }
  }
  return best;
}

}  // namespace

std::vector<events::Envelope> PlaceQueuedTasks(const DecisionState& state) {
  std::vector<events::Envelope> decisions;
  if (state.queue.empty()) return decisions;
  std::map<std::string, PoolCapacity> pools;
  for (const auto& [agent_id, agent] : state.agents) {
    if (!agent.schedulable()) continue;
    pools[agent.resource_pool].agents.push_back(
        AgentCapacity{&agent, agent.used_slots, agent.zero_slot_containers});
  }
  bool any_room = false;
  for (auto& [name, pool] : pools) {
    pool.Recompute();
    any_room |= pool.max_free_slots > 0 || pool.max_free_zero_slot_places > 0;
  }
  if (!any_room) return decisions;

  int position = 0;
  for (const auto& [priority, offset, task_id] : state.queue) {
    ++position;
    const TaskRecord& task = state.tasks.at(task_id);
    auto pool_it = pools.find(task.resources.resource_pool());
    if (pool_it == pools.end()) continue;
    PoolCapacity& pool = pool_it->second;
    const int32_t needed = task.resources.slots();
    if (needed == 0 ? pool.max_free_zero_slot_places == 0 : needed > pool.max_free_slots) {
      continue;
    }
    AgentCapacity* chosen = ChooseAgent(pool, needed);
    if (chosen == nullptr) continue;
    events::Envelope event;
    auto* assigned = event.mutable_allocation_assigned();
    assigned->set_task_id(task.task_id);
    assigned->set_allocation_id(task.task_id + "." + std::to_string(task.allocation_count + 1));
    assigned->set_agent_id(chosen->agent->agent_id);
    assigned->set_agent_incarnation(chosen->agent->incarnation);
    assigned->set_resource_pool(task.resources.resource_pool());
    *assigned->mutable_spec() = task.spec;
    int32_t free_before;
    if (needed == 0) {
      free_before = chosen->free_zero_slot_places();
      chosen->zero_slot_containers++;
    } else {
      free_before = chosen->free_slots();
      for (int32_t slot = 0; slot < chosen->agent->slot_count && assigned->slot_ids_size() < needed;
           ++slot) {
        if (chosen->used_slots.insert(slot).second) assigned->add_slot_ids(slot);
      }
    }
    pool.Recompute();
    assigned->set_reason("priority " + std::to_string(priority) + ", position " +
                         std::to_string(position) + " in pool " + task.resources.resource_pool() +
                         " queue: best fit on agent " + chosen->agent->agent_id + " (" +
                         std::to_string(free_before) +
                         (needed == 0 ? " free zero-slot places" : " free slots") + ", needs " +
                         std::to_string(needed) + ")");
    decisions.push_back(std::move(event));
  }
  return decisions;
}

}  // namespace cairn::commands
