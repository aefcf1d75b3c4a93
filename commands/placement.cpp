#include "commands/placement.h"

#include <map>
#include <optional>

namespace cairn::commands {

namespace {

// What the placement pass has promised so far, on top of the state's agents.
struct AgentCapacity {
  const AgentRecord* agent;
  std::set<int32_t> used_slots;
  int32_t zero_slot_containers;
};

std::optional<std::string> ChooseAgent(const std::map<std::string, AgentCapacity>& capacity,
                                       const TaskRecord& task) {
  const int32_t needed = task.resources.slots();
  std::optional<std::string> best;
  int32_t best_left = 0;
  // std::map iterates agent ids in order, so ties go to the smallest id: deterministic.
  for (const auto& [agent_id, cap] : capacity) {
    const AgentRecord& agent = *cap.agent;
    if (!agent.schedulable() || agent.resource_pool != task.resources.resource_pool()) continue;
    int32_t left;
    if (needed == 0) {
      left = kMaxZeroSlotContainersPerAgent - cap.zero_slot_containers;
      if (left <= 0) continue;
    } else {
      left = agent.slot_count - static_cast<int32_t>(cap.used_slots.size()) - needed;
      if (left < 0) continue;
    }
    if (!best || left < best_left) {
      best = agent_id;
      best_left = left;
    }
  }
  return best;
}

}  // namespace

std::vector<events::Envelope> PlaceQueuedTasks(const DecisionState& state) {
  std::vector<events::Envelope> decisions;
  if (state.queue.empty()) return decisions;
  std::map<std::string, AgentCapacity> capacity;
  for (const auto& [agent_id, agent] : state.agents) {
    capacity.emplace(agent_id, AgentCapacity{&agent, agent.used_slots, agent.zero_slot_containers});
  }
  int position = 0;
  for (const auto& [priority, offset, task_id] : state.queue) {
    ++position;
    const TaskRecord& task = state.tasks.at(task_id);
    auto chosen = ChooseAgent(capacity, task);
    if (!chosen) continue;
    AgentCapacity& cap = capacity.at(*chosen);
    const int32_t needed = task.resources.slots();
    events::Envelope event;
    auto* assigned = event.mutable_allocation_assigned();
    assigned->set_task_id(task.task_id);
    assigned->set_allocation_id(task.task_id + "." + std::to_string(task.allocation_count + 1));
    assigned->set_agent_id(*chosen);
    assigned->set_agent_incarnation(cap.agent->incarnation);
    assigned->set_resource_pool(task.resources.resource_pool());
    *assigned->mutable_spec() = task.spec;
    int32_t free_before;
    if (needed == 0) {
      free_before = kMaxZeroSlotContainersPerAgent - cap.zero_slot_containers;
      cap.zero_slot_containers++;
    } else {
      free_before = cap.agent->slot_count - static_cast<int32_t>(cap.used_slots.size());
      for (int32_t slot = 0; slot < cap.agent->slot_count && assigned->slot_ids_size() < needed;
           ++slot) {
        if (cap.used_slots.insert(slot).second) assigned->add_slot_ids(slot);
      }
    }
    assigned->set_reason("priority " + std::to_string(priority) + ", position " +
                         std::to_string(position) + " in pool " + task.resources.resource_pool() +
                         " queue: best fit on agent " + *chosen + " (" +
                         std::to_string(free_before) +
                         (needed == 0 ? " free zero-slot places" : " free slots") + ", needs " +
                         std::to_string(needed) + ")");
    decisions.push_back(std::move(event));
  }
  return decisions;
}

}  // namespace cairn::commands
