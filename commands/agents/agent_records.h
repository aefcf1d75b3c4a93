// The agents and pools domain's part of the decision state (commands/decision_state.h): an
// agent's record. Pure data; folded by commands/agents/agent_state.h.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace cairn::commands {

struct AgentRecord {
  std::string agent_id;
  std::string incarnation;
  std::string resource_pool;
  int32_t slot_count = 0;
  bool connected = false;
  bool enabled = true;
  bool draining = false;
  std::set<int32_t> used_slots;
  int32_t zero_slot_containers = 0;
  std::set<std::string> allocations;  // allocation ids running or assigned here
  uint64_t registered_offset = 0;     // the AgentRegistered that began this incarnation
  std::string address;                // where other tasks reach its tasks (AgentRegistered)
  std::set<int32_t> disabled_slots;    // det slot disable: no new work on these
  bool runs_containers = false;        // applies images and bind mounts (AgentRegistered)

  int32_t free_slots() const { return slot_count - static_cast<int32_t>(used_slots.size()); }
  bool schedulable() const { return connected && enabled && !draining; }
};

}  // namespace cairn::commands
