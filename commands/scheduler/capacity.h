// What a scheduling pass may still hand out in one resource pool: every schedulable agent's
// slots (free, used, or held by an allocation that is being preempted or killed) and zero-slot
// places, and the fitting rules that choose where a task goes. Pure and value-copyable, so a
// policy can try a preemption on a copy and throw it away.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

struct Fit {
  std::vector<events::AllocationPart> parts;  // one per agent; several for a gang
  bool uses_releasing_slots = false;          // some slots are still held by a departing allocation
  int32_t free_before = 0;                    // free slots (or zero-slot places) of the first agent
  std::string how;                            // "best fit on agent a1 (3 free slots)", in words
  // A gang's fit (FitTask): parts[i] is members[i]'s, on one agent each (several may share one),
  // and member_ports[i] its ports there (OpenPAI's portList).
  std::vector<const TaskRecord*> members;
  std::vector<std::vector<events::PaiPorts>> member_ports;
};

class PoolCapacity {
 public:
  // The pool's schedulable agents (connected, enabled, not draining), with the slots of
  // allocations that are being preempted or killed marked as releasing.
  PoolCapacity(const DecisionState& state, const events::ResourcePoolConfig& pool);
  // The pool as if every agent that ever joined it were connected and idle: what could ever fit.
  static PoolCapacity AllIdle(const DecisionState& state, const events::ResourcePoolConfig& pool);

  // Where a task needing `slots` would go now, by the pool's fitting policy. A task that fits on
  // no single agent takes whole idle agents of one size (a gang), all or nothing. With
  // `allow_releasing`, slots still held by departing allocations count as free (a reservation).
  std::optional<Fit> FindFit(int32_t slots, bool allow_releasing) const;
  void Take(const Fit& fit);
  // A departing allocation's slots become releasing (used in preemption what-ifs).
  void MarkReleasing(const TaskRecord& task);
  // Nothing more goes to `agent_id` (a what-if on a copy: a gang member's fixed ports are taken
  // there, so it must go elsewhere).
  void Exclude(const std::string& agent_id);

  // What-ifs without copies: after BeginTrial, Take and MarkReleasing are logged; Rollback
  // undoes them, Commit keeps them.
  void BeginTrial();
  void Commit();
  void Rollback();

  int32_t total_slots() const { return total_slots_; }
  int32_t idle_slots() const;  // free now, not counting releasing ones
  int32_t largest_free_on_one_agent() const;
  // The most slots one agent could give now counting releasing ones, and whether any agent has
  // a zero-slot place: 0 and false mean no task can be placed or reserved at all.
  int32_t largest_available_on_one_agent() const { return max_available_; }
  bool has_zero_slot_place() const { return max_zero_slot_free_ > 0; }
  size_t agent_count() const { return agents_.size(); }

 private:
  enum SlotState : uint8_t { kFree = 0, kUsed = 1, kReleasing = 2, kDisabled = 3 };
  enum class View { kNow, kAllIdle };
  PoolCapacity(const DecisionState& state, const events::ResourcePoolConfig& pool, View view);
  struct AgentSlots {
    const AgentRecord* agent;
    std::vector<uint8_t> slots;  // SlotState per slot id
    int32_t free = 0;
    int32_t releasing = 0;
    int32_t zero_slot_used = 0;
    int32_t zero_slot_max = 0;
    int32_t available(bool allow_releasing) const {
      return free + (allow_releasing ? releasing : 0);
    }
  };
  void Recompute();        // every agent's counts and the pool's maxima
  void RecomputeMaxima();  // the pool's maxima only
  AgentSlots* AgentById(const std::string& agent_id);
  void SetSlot(AgentSlots& agent, int32_t slot, uint8_t state);
  std::optional<Fit> FindGangFit(int32_t slots, bool allow_releasing) const;
  std::optional<Fit> FindZeroSlotFit() const;
  static events::AllocationPart ChooseSlots(const AgentSlots& agent, int32_t count);

  events::FittingPolicy policy_;
  std::vector<AgentSlots> agents_;  // in agent-id order (found by binary search)
  // Gang sizes that found no fit: taking slots never makes one appear, releasing may.
  mutable std::set<int32_t> failed_gang_sizes_[2];
  struct Undo {
    size_t agent;
    int32_t slot;  // -1: a zero-slot container
    uint8_t before;
  };
  bool recording_ = false;
  std::vector<Undo> undo_;
  int32_t total_slots_ = 0;
  int32_t max_agent_slots_ = 0;
  int32_t max_available_ = 0;  // counting releasing slots
  int32_t max_zero_slot_free_ = 0;
};

}  // namespace cairn::commands
