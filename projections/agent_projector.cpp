#include "projections/agent_projector.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kAgentPrefix = "agent/";

void OnRegistered(const Envelope& event, bool exists, views::AgentView& agent) {
  const auto& registered = event.agent_registered();
  if (!exists) {
    agent.set_enabled(true);
    agent.set_draining(false);
  }
  // A new incarnation is a new process: it runs nothing yet (the decider ended the old
  // process's tasks with TaskExited events before registering it). An operator's
  // enable/disable outlives both reconnects and restarts, as in the decision state.
  if (!exists || agent.incarnation() != registered.incarnation()) {
    agent.set_incarnation(registered.incarnation());
    agent.set_registered_time_unix_micros(event.time_unix_micros());
    agent.clear_allocations();
  }
  agent.set_agent_id(registered.agent_id());
  agent.set_resource_pool(registered.resource_pool());
  agent.set_slot_count(registered.slot_count());
  agent.mutable_devices()->CopyFrom(registered.devices());
  agent.set_hostname(registered.hostname());
  agent.set_version(registered.version());
  agent.set_connected(true);
}

// Returns whether the event changed the agent.
bool OnLaterEvent(const Envelope& event, views::AgentView& agent) {
  switch (event.payload_case()) {
    case Envelope::kAgentDisconnected: {
      const std::string& incarnation = event.agent_disconnected().incarnation();
      if (!incarnation.empty() && incarnation != agent.incarnation()) return false;
      agent.set_connected(false);
      return true;
    }
    case Envelope::kAgentEnabled:
      agent.set_enabled(true);
      agent.set_draining(false);
      return true;
    case Envelope::kAgentDisabled:
      agent.set_enabled(false);
      agent.set_draining(event.agent_disabled().drain());
      return true;
    case Envelope::kAllocationAssigned: {
      const auto& assigned = event.allocation_assigned();
      if (!assigned.agent_incarnation().empty() &&
          assigned.agent_incarnation() != agent.incarnation()) {
        return false;
      }
      auto* allocation = agent.add_allocations();
      allocation->set_allocation_id(assigned.allocation_id());
      allocation->set_task_id(assigned.task_id());
      allocation->mutable_slot_ids()->CopyFrom(assigned.slot_ids());
      return true;
    }
    case Envelope::kTaskExited: {
      const std::string& allocation_id = event.task_exited().allocation_id();
      auto* allocations = agent.mutable_allocations();
      for (int i = 0; i < allocations->size(); ++i) {
        if (allocations->Get(i).allocation_id() == allocation_id) {
          allocations->erase(allocations->begin() + i);
          return true;
        }
      }
      return false;
    }
    default:
      return false;
  }
}

}  // namespace

std::string AgentKey(const std::string& agent_id) {
  std::string key(kAgentPrefix);
  key += agent_id;
  return key;
}

Status AgentProjector::Apply(const Envelope& event, ViewStore& store) const {
  std::string agent_id;
  switch (event.payload_case()) {
    case Envelope::kAgentRegistered:
      agent_id = event.agent_registered().agent_id();
      break;
    case Envelope::kAgentDisconnected:
      agent_id = event.agent_disconnected().agent_id();
      break;
    case Envelope::kAgentEnabled:
      agent_id = event.agent_enabled().agent_id();
      break;
    case Envelope::kAgentDisabled:
      agent_id = event.agent_disabled().agent_id();
      break;
    case Envelope::kAllocationAssigned:
      agent_id = event.allocation_assigned().agent_id();
      break;
    case Envelope::kTaskExited:
      if (event.task_exited().allocation_id().empty()) return Status::Ok();
      agent_id = event.task_exited().agent_id();
      break;
    default:
      return Status::Ok();
  }
  if (agent_id.empty()) return Status::Ok();
  const std::string key = AgentKey(agent_id);
  ScratchArena scratch;
  views::AgentView& agent = *scratch.Create<views::AgentView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(key, &agent));
  if (event.has_agent_registered()) {
    OnRegistered(event, exists, agent);
  } else if (!exists || !OnLaterEvent(event, agent)) {
    return Status::Ok();
  }
  return store.PutMessage(key, agent);
}

Result<std::vector<views::AgentView>> ReadAgents(ViewReader& reader) {
  std::vector<views::AgentView> agents;
  Status parse_error;
  CAIRN_RETURN_IF_ERROR(reader.Scan(kAgentPrefix, [&](std::string_view key,
                                                      std::string_view value) {
    views::AgentView& agent = agents.emplace_back();
    if (!agent.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      parse_error = Status::Corruption("unparsable AgentView at key '" + std::string(key) + "'");
      return false;
    }
    return true;
  }));
  CAIRN_RETURN_IF_ERROR(parse_error);
  return agents;
}

}  // namespace cairn::projections
