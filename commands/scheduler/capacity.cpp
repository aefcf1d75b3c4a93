#include "commands/scheduler/capacity.h"

#include <algorithm>
#include <map>

namespace cairn::commands {

PoolCapacity::PoolCapacity(const DecisionState& state, const events::ResourcePoolConfig& pool)
    : PoolCapacity(state, pool, View::kNow) {}

PoolCapacity PoolCapacity::AllIdle(const DecisionState& state,
                                   const events::ResourcePoolConfig& pool) {
  return PoolCapacity(state, pool, View::kAllIdle);
}

PoolCapacity::PoolCapacity(const DecisionState& state, const events::ResourcePoolConfig& pool,
                           View view)
    : policy_(pool.scheduler().fitting_policy()) {
  const bool now = view == View::kNow;
  for (const auto& [agent_id, agent] : state.agents) {
    if (agent.resource_pool != pool.pool_name() || (now && !agent.schedulable())) continue;
    AgentSlots slots;
    slots.agent = &agent;
    slots.slots.assign(static_cast<size_t>(std::max(agent.slot_count, 0)), kFree);
    if (now) {
      for (int32_t used : agent.used_slots) {
        if (used >= 0 && used < agent.slot_count) slots.slots[used] = kUsed;
      }
      // A disabled slot is out of the pool: neither free nor counted in its capacity.
      for (int32_t disabled : agent.disabled_slots) {
        if (disabled >= 0 && disabled < agent.slot_count) {
          slots.slots[disabled] = kDisabled;
          --total_slots_;
        }
      }
      slots.zero_slot_used = agent.zero_slot_containers;
    }
    slots.zero_slot_max = pool.max_aux_containers_per_agent();
    total_slots_ += agent.slot_count;
    agents_.push_back(std::move(slots));
  }
  if (!now) {
    Recompute();
    return;
  }
  // Slots of allocations on their way out are free for reservations, not yet for starts.
  for (size_t at = 0; at < agents_.size(); ++at) {
    const std::string& agent_id = agents_[at].agent->agent_id;
    for (const auto& allocation_id : agents_[at].agent->allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      if (!task.preempting && !task.kill_requested) continue;
      for (const auto& part : task.where().parts) {
        if (part.agent_id() != agent_id) continue;
        for (int32_t slot : part.slot_ids()) {
          if (slot >= 0 && slot < static_cast<int32_t>(agents_[at].slots.size()) &&
              agents_[at].slots[slot] != kDisabled) {
            agents_[at].slots[slot] = kReleasing;
          }
        }
      }
    }
  }
  Recompute();
}

void PoolCapacity::Recompute() {
  for (auto& agent : agents_) {
    agent.free = 0;
    agent.releasing = 0;
    for (uint8_t state : agent.slots) {
      agent.free += state == kFree;
      agent.releasing += state == kReleasing;
    }
  }
  RecomputeMaxima();
}

void PoolCapacity::RecomputeMaxima() {
  max_agent_slots_ = 0;
  max_available_ = 0;
  max_zero_slot_free_ = 0;
  for (const auto& agent : agents_) {
    max_agent_slots_ = std::max(max_agent_slots_, static_cast<int32_t>(agent.slots.size()));
    max_available_ = std::max(max_available_, agent.available(true));
    max_zero_slot_free_ = std::max(max_zero_slot_free_, agent.zero_slot_max - agent.zero_slot_used);
  }
}

PoolCapacity::AgentSlots* PoolCapacity::AgentById(const std::string& agent_id) {
  auto it = std::lower_bound(
      agents_.begin(), agents_.end(), agent_id,
      [](const AgentSlots& agent, const std::string& id) { return agent.agent->agent_id < id; });
  return it == agents_.end() || it->agent->agent_id != agent_id ? nullptr : &*it;
}

int32_t PoolCapacity::idle_slots() const {
  int32_t idle = 0;
  for (const auto& agent : agents_) idle += agent.free;
  return idle;
}

int32_t PoolCapacity::largest_free_on_one_agent() const {
  int32_t largest = 0;
  for (const auto& agent : agents_) largest = std::max(largest, agent.free);
  return largest;
}

events::AllocationPart PoolCapacity::ChooseSlots(const AgentSlots& agent, int32_t count) {
  events::AllocationPart part;
  part.set_agent_id(agent.agent->agent_id);
  part.set_agent_incarnation(agent.agent->incarnation);
  // Free slots first; releasing ones only when the free ones do not suffice.
  for (uint8_t wanted : {kFree, kReleasing}) {
    for (size_t slot = 0; slot < agent.slots.size() && part.slot_ids_size() < count; ++slot) {
      if (agent.slots[slot] == wanted) part.add_slot_ids(static_cast<int32_t>(slot));
    }
  }
  return part;
}

std::optional<Fit> PoolCapacity::FindFit(int32_t slots, bool allow_releasing) const {
  if (slots == 0) return FindZeroSlotFit();
  if (slots <= max_agent_slots_) {
    if (slots <= max_available_) {
      const AgentSlots* best = nullptr;
      double best_score = 0;
      for (const auto& agent : agents_) {
        int32_t available = agent.available(allow_releasing);
        if (available < slots) continue;
        // Best fit packs (fewest slots left over); worst fit spreads (largest free share).
        double score =
            policy_ == events::FITTING_POLICY_WORST
                ? static_cast<double>(available) / static_cast<double>(agent.slots.size())
                : -static_cast<double>(available - slots);
        if (best == nullptr || score > best_score) {
          best = &agent;
          best_score = score;
        }
      }
      if (best != nullptr) {
        Fit fit;
        fit.parts.push_back(ChooseSlots(*best, slots));
        fit.free_before = best->free;
        for (int32_t slot : fit.parts[0].slot_ids()) {
          fit.uses_releasing_slots |= best->slots[slot] == kReleasing;
        }
        fit.how = std::string(policy_ == events::FITTING_POLICY_WORST ? "worst" : "best") +
                  " fit on agent " + best->agent->agent_id + " (" + std::to_string(best->free) +
                  " of " + std::to_string(best->slots.size()) + " slots free, needs " +
                  std::to_string(slots) + ")";
        return fit;
      }
    }
    if (slots <= 1) return std::nullopt;
  }
  return FindGangFit(slots, allow_releasing);
}

// Determined's rule for a task bigger than one agent: only agents with no slot in use, all of
// one size, and a task size that is a multiple of it; each chosen agent gives all its slots.
std::optional<Fit> PoolCapacity::FindGangFit(int32_t slots, bool allow_releasing) const {
  auto& failed = failed_gang_sizes_[allow_releasing ? 1 : 0];
  if (failed.count(slots)) return std::nullopt;
  std::map<int32_t, std::vector<const AgentSlots*>, std::greater<>> idle_by_size;
  for (const auto& agent : agents_) {
    int32_t size = static_cast<int32_t>(agent.slots.size());
    if (size == 0 || agent.available(allow_releasing) != size) continue;
    idle_by_size[size].push_back(&agent);
  }
  for (const auto& [size, agents] : idle_by_size) {
    if (slots % size != 0) continue;
    size_t needed = static_cast<size_t>(slots / size);
    if (agents.size() < needed) continue;
    Fit fit;
    fit.free_before = size;
    for (size_t i = 0; i < needed; ++i) {
      fit.parts.push_back(ChooseSlots(*agents[i], size));
      fit.uses_releasing_slots |= agents[i]->releasing > 0;
    }
    fit.how = "gang of " + std::to_string(needed) + " whole idle agents of " +
              std::to_string(size) + " slots (";
    for (size_t i = 0; i < needed; ++i) fit.how += (i ? ", " : "") + agents[i]->agent->agent_id;
    fit.how += ")";
    return fit;
  }
  failed.insert(slots);
  return std::nullopt;
}

std::optional<Fit> PoolCapacity::FindZeroSlotFit() const {
  if (max_zero_slot_free_ <= 0) return std::nullopt;
  const AgentSlots* best = nullptr;
  for (const auto& agent : agents_) {
    int32_t places = agent.zero_slot_max - agent.zero_slot_used;
    if (places <= 0) continue;
    int32_t best_places = best ? best->zero_slot_max - best->zero_slot_used : 0;
    bool better =
        policy_ == events::FITTING_POLICY_WORST ? places > best_places : places < best_places;
    if (best == nullptr || better) best = &agent;
  }
  if (best == nullptr) return std::nullopt;
  Fit fit;
  fit.parts.push_back(ChooseSlots(*best, 0));
  fit.free_before = best->zero_slot_max - best->zero_slot_used;
  fit.how = std::string(policy_ == events::FITTING_POLICY_WORST ? "worst" : "best") +
            " fit on agent " + best->agent->agent_id + " (" + std::to_string(fit.free_before) +
            " free zero-slot places)";
  return fit;
}

void PoolCapacity::SetSlot(AgentSlots& agent, int32_t slot, uint8_t state) {
  uint8_t& current = agent.slots[slot];
  if (current == state) return;
  if (recording_) undo_.push_back({static_cast<size_t>(&agent - agents_.data()), slot, current});
  agent.free += (state == kFree) - (current == kFree);
  agent.releasing += (state == kReleasing) - (current == kReleasing);
  current = state;
}

void PoolCapacity::BeginTrial() {
  recording_ = true;
  undo_.clear();
}

void PoolCapacity::Commit() {
  recording_ = false;
  undo_.clear();
}

void PoolCapacity::Rollback() {
  recording_ = false;
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    AgentSlots& agent = agents_[it->agent];
    if (it->slot < 0) {
      agent.zero_slot_used--;
    } else {
      SetSlot(agent, it->slot, it->before);
    }
  }
  undo_.clear();
  RecomputeMaxima();
}

void PoolCapacity::Take(const Fit& fit) {
  // Taking only lowers an agent's room: the maxima need a rescan only when that agent held one.
  bool rescan = false;
  for (const auto& part : fit.parts) {
    AgentSlots* agent = AgentById(part.agent_id());
    if (agent == nullptr) continue;
    rescan |= agent->available(true) == max_available_ ||
              agent->zero_slot_max - agent->zero_slot_used == max_zero_slot_free_;
    if (part.slot_ids().empty()) {
      agent->zero_slot_used++;
      if (recording_) undo_.push_back({static_cast<size_t>(agent - agents_.data()), -1, 0});
    }
    for (int32_t slot : part.slot_ids()) SetSlot(*agent, slot, kUsed);
  }
  if (rescan) RecomputeMaxima();
}

void PoolCapacity::Exclude(const std::string& agent_id) {
  AgentSlots* agent = AgentById(agent_id);
  if (agent == nullptr) return;
  for (int32_t slot = 0; slot < static_cast<int32_t>(agent->slots.size()); ++slot) {
    SetSlot(*agent, slot, kUsed);
  }
  agent->zero_slot_used = std::max(agent->zero_slot_used, agent->zero_slot_max);
  failed_gang_sizes_[0].clear();
  failed_gang_sizes_[1].clear();
  RecomputeMaxima();
}

void PoolCapacity::MarkReleasing(const TaskRecord& task) {
  for (const auto& part : task.where().parts) {
    if (task.where().parts_exited.count(part.agent_id())) continue;
    AgentSlots* agent = AgentById(part.agent_id());
    if (agent == nullptr) continue;
    for (int32_t slot : part.slot_ids()) {
      if (slot >= 0 && slot < static_cast<int32_t>(agent->slots.size()) &&
          agent->slots[slot] == kUsed) {
        SetSlot(*agent, slot, kReleasing);
      }
    }
  }
  failed_gang_sizes_[0].clear();
  failed_gang_sizes_[1].clear();
  RecomputeMaxima();
}

}  // namespace cairn::commands
