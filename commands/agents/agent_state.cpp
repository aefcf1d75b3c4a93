#include "commands/agents/agent_state.h"

namespace cairn::commands {
namespace {

void ApplyAgentRegistered(DecisionState& state, const events::Envelope& event) {
  const events::AgentRegistered& registered = event.agent_registered();
  AgentRecord& agent = state.agents[registered.agent_id()];
  bool same_incarnation = agent.incarnation == registered.incarnation();
  agent.agent_id = registered.agent_id();
  agent.resource_pool = registered.resource_pool();
  agent.slot_count = registered.slot_count();
  agent.address = registered.address();
  agent.runs_containers = registered.runs_containers();
  agent.connected = true;
  if (!same_incarnation) {
    // A new process: whatever the old one ran was ended by TaskExited events before this one.
    agent.incarnation = registered.incarnation();
    agent.registered_offset = event.offset();
    agent.used_slots.clear();
    agent.zero_slot_containers = 0;
    agent.allocations.clear();
  }
}

}  // namespace

void ApplyAgentEvent(DecisionState& state, const events::Envelope& event) {
  switch (event.payload_case()) {
    case events::Envelope::kResourcePoolsConfigured:
      state.pools_config = event.resource_pools_configured();
      break;
    case events::Envelope::kAgentRegistered:
      ApplyAgentRegistered(state, event);
      break;
    case events::Envelope::kAgentDisconnected: {
      auto it = state.agents.find(event.agent_disconnected().agent_id());
      if (it != state.agents.end() &&
          it->second.incarnation == event.agent_disconnected().incarnation()) {
        it->second.connected = false;
      }
      break;
    }
    case events::Envelope::kAgentEnabled: {
      auto it = state.agents.find(event.agent_enabled().agent_id());
      if (it != state.agents.end()) {
        it->second.enabled = true;
        it->second.draining = false;
      }
      break;
    }
    case events::Envelope::kAgentSlotEnabled: {
      auto it = state.agents.find(event.agent_slot_enabled().agent_id());
      if (it != state.agents.end()) it->second.disabled_slots.erase(event.agent_slot_enabled().slot_id());
      break;
    }
    case events::Envelope::kAgentSlotDisabled: {
      auto it = state.agents.find(event.agent_slot_disabled().agent_id());
      if (it != state.agents.end()) it->second.disabled_slots.insert(event.agent_slot_disabled().slot_id());
      break;
    }
    case events::Envelope::kAgentDisabled: {
      auto it = state.agents.find(event.agent_disabled().agent_id());
      if (it != state.agents.end()) {
        it->second.enabled = false;
        it->second.draining = event.agent_disabled().drain();
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace cairn::commands
