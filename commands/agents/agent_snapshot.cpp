#include "commands/agents/agent_snapshot.h"

#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(AgentRecord, 14);

void EncodeAgent(const AgentRecord& agent, snapshot::Agent& out) {
  out.set_agent_id(agent.agent_id);
  out.set_incarnation(agent.incarnation);
  out.set_resource_pool(agent.resource_pool);
  out.set_slot_count(agent.slot_count);
  out.set_connected(agent.connected);
  out.set_enabled(agent.enabled);
  out.set_draining(agent.draining);
  for (int32_t slot : agent.used_slots) out.add_used_slots(slot);
  out.set_zero_slot_containers(agent.zero_slot_containers);
  for (const auto& allocation : agent.allocations) out.add_allocations(allocation);
  out.set_registered_offset(agent.registered_offset);
  out.set_address(agent.address);
  for (int32_t slot : agent.disabled_slots) out.add_disabled_slots(slot);
  out.set_runs_containers(agent.runs_containers);
}

AgentRecord DecodeAgent(const snapshot::Agent& in) {
  AgentRecord agent;
  agent.agent_id = in.agent_id();
  agent.incarnation = in.incarnation();
  agent.resource_pool = in.resource_pool();
  agent.slot_count = in.slot_count();
  agent.connected = in.connected();
  agent.enabled = in.enabled();
  agent.draining = in.draining();
  agent.used_slots.insert(in.used_slots().begin(), in.used_slots().end());
  agent.zero_slot_containers = in.zero_slot_containers();
  agent.allocations.insert(in.allocations().begin(), in.allocations().end());
  agent.registered_offset = in.registered_offset();
  agent.address = in.address();
  agent.disabled_slots.insert(in.disabled_slots().begin(), in.disabled_slots().end());
  agent.runs_containers = in.runs_containers();
  return agent;
}

}  // namespace cairn::commands
