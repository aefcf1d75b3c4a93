#include "projections/agent_projector.h"

#include <algorithm>

#include "events/envelope_util.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kAgentPrefix = "agent/";
// "allocation/<allocation_id>" -> the agents holding it, for the allocations whose end does not
// name them all: a gang (TaskExited names its first agent), and an allocation that may be
// released (AllocationReleased names none) — a trial's, or one asked to give its slots back.
constexpr std::string_view kAllocationPrefix = "allocation/";

std::string AllocationKey(const std::string& allocation_id) {
  std::string key(kAllocationPrefix);
  key += allocation_id;
  return key;
}

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
    case Envelope::kAgentSlotEnabled:
    case Envelope::kAgentSlotDisabled: {
      const bool disable = event.has_agent_slot_disabled();
      const int32_t slot_id =
          disable ? event.agent_slot_disabled().slot_id() : event.agent_slot_enabled().slot_id();
      auto* disabled = agent.mutable_disabled_slots();
      auto at = std::lower_bound(disabled->begin(), disabled->end(), slot_id);
      const bool present = at != disabled->end() && *at == slot_id;
      if (disable == present) return false;
      if (disable) {
        disabled->Add(slot_id);
        std::sort(disabled->begin(), disabled->end());
      } else {
        disabled->erase(at);
      }
      return true;
    }
    default:
      return false;
  }
}

// Returns whether the agent ran the allocation (and no longer does).
bool RemoveAllocation(views::AgentView& agent, const std::string& allocation_id) {
  auto* allocations = agent.mutable_allocations();
  for (int i = 0; i < allocations->size(); ++i) {
    if (allocations->Get(i).allocation_id() == allocation_id) {
      allocations->erase(allocations->begin() + i);
      return true;
    }
  }
  return false;
}

// Every part of the allocation goes to its agent (several for a gang).
Status OnAssigned(const events::AllocationAssigned& assigned, ViewStore& store) {
  const bool indexed =
      assigned.parts_size() > 1 || assigned.spec().task_type() == events::TASK_TYPE_TRIAL;
  std::vector<std::string> holders;
  ScratchArena scratch;
  views::AgentView* scratch_agent = scratch.Create<views::AgentView>();
  for (const auto& part : AllocationPartsOf(assigned)) {
    if (part.agent_id().empty()) continue;
    const std::string key = AgentKey(part.agent_id());
    CAIRN_ASSIGN_OR_RETURN(views::AgentView * found, OpenView(store, key, scratch_agent));
    // An assignment addressed to an older process of the agent is stale.
    if (found == nullptr ||
        (!part.agent_incarnation().empty() && part.agent_incarnation() != found->incarnation())) {
      continue;
    }
    views::AgentView& agent = *found;
    auto* allocation = agent.add_allocations();
    allocation->set_allocation_id(assigned.allocation_id());
    allocation->set_task_id(assigned.task_id());
    allocation->mutable_slot_ids()->CopyFrom(part.slot_ids());
    allocation->set_indexed(indexed);
    CAIRN_RETURN_IF_ERROR(store.PutMessage(key, agent));
    holders.push_back(part.agent_id());
  }
  if (holders.empty() || !indexed) return Status::Ok();
  return store.Put(AllocationKey(assigned.allocation_id()), JoinIds(holders));
}

// A preempted allocation ends by AllocationReleased, which names no agent: index it now.
Status OnPreemptionRequested(const events::PreemptionRequested& preemption, ViewStore& store) {
  std::vector<std::string> named;
  for (const auto& part : preemption.parts()) named.push_back(part.agent_id());
  if (named.empty()) named.push_back(preemption.agent_id());
  std::vector<std::string> holders;
  ScratchArena scratch;
  views::AgentView* scratch_agent = scratch.Create<views::AgentView>();
  for (const auto& agent_id : named) {
    const std::string key = AgentKey(agent_id);
    CAIRN_ASSIGN_OR_RETURN(views::AgentView * agent, OpenView(store, key, scratch_agent));
    if (agent == nullptr) continue;
    for (auto& allocation : *agent->mutable_allocations()) {
      if (allocation.allocation_id() != preemption.allocation_id()) continue;
      holders.push_back(agent_id);
      if (allocation.indexed()) return Status::Ok();  // a gang's or a trial's: indexed already
      allocation.set_indexed(true);
      CAIRN_RETURN_IF_ERROR(store.PutMessage(key, *agent));
    }
  }
  if (holders.empty()) return Status::Ok();
  return store.Put(AllocationKey(preemption.allocation_id()), JoinIds(holders));
}

// Takes the allocation off the agent `only_agent` (a gang's part that ended), or off every agent
// the index lists.
Status OnAllocationEnded(const std::string& allocation_id, const std::string& only_agent,
                         ViewStore& store) {
  if (allocation_id.empty()) return Status::Ok();
  const std::string index_key = AllocationKey(allocation_id);
  CAIRN_ASSIGN_OR_RETURN(auto index, store.Get(index_key));
  std::vector<std::string> holders = index ? SplitIds(*index) : std::vector<std::string>();
  std::vector<std::string> ending =
      only_agent.empty() ? holders : std::vector<std::string>{only_agent};
  ScratchArena scratch;
  views::AgentView* scratch_agent = scratch.Create<views::AgentView>();
  for (const auto& agent_id : ending) {
    const std::string key = AgentKey(agent_id);
    CAIRN_ASSIGN_OR_RETURN(views::AgentView * agent, OpenView(store, key, scratch_agent));
    if (agent != nullptr && RemoveAllocation(*agent, allocation_id)) {
      CAIRN_RETURN_IF_ERROR(store.PutMessage(key, *agent));
    }
    holders.erase(std::remove(holders.begin(), holders.end(), agent_id), holders.end());
  }
  if (!index) return Status::Ok();
  return holders.empty() ? store.Delete(index_key) : store.Put(index_key, JoinIds(holders));
}

// The exit names the allocation's first agent; the index has the others, when there are any.
Status OnTaskExited(const events::TaskExited& exited, ViewStore& store) {
  if (exited.allocation_id().empty()) return Status::Ok();
  bool indexed = true;  // an exit naming no agent: the index knows, if anyone does
  if (!exited.agent_id().empty()) {
    const std::string key = AgentKey(exited.agent_id());
    ScratchArena scratch;
    CAIRN_ASSIGN_OR_RETURN(views::AgentView * agent,
                           OpenView(store, key, scratch.Create<views::AgentView>()));
    indexed = false;
    if (agent != nullptr) {
      for (const auto& allocation : agent->allocations()) {
        if (allocation.allocation_id() == exited.allocation_id()) indexed = allocation.indexed();
      }
      if (RemoveAllocation(*agent, exited.allocation_id())) {
        CAIRN_RETURN_IF_ERROR(store.PutMessage(key, *agent));
      }
    }
  }
  return indexed ? OnAllocationEnded(exited.allocation_id(), "", store) : Status::Ok();
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
    case Envelope::kAgentSlotEnabled:
      agent_id = event.agent_slot_enabled().agent_id();
      break;
    case Envelope::kAgentSlotDisabled:
      agent_id = event.agent_slot_disabled().agent_id();
      break;
    case Envelope::kAllocationAssigned:
      return OnAssigned(event.allocation_assigned(), store);
    case Envelope::kTaskExited:
      return OnTaskExited(event.task_exited(), store);
    case Envelope::kPreemptionRequested:
      return OnPreemptionRequested(event.preemption_requested(), store);
    case Envelope::kAllocationReleased:
      return OnAllocationEnded(event.allocation_released().allocation_id(), "", store);
    case Envelope::kAllocationPartExited: {
      const auto& exited = event.allocation_part_exited();
      if (exited.agent_id().empty()) return Status::Ok();
      return OnAllocationEnded(exited.allocation_id(), exited.agent_id(), store);
    }
    default:
      return Status::Ok();
  }
  if (agent_id.empty()) return Status::Ok();
  const std::string key = AgentKey(agent_id);
  ScratchArena scratch;
  views::AgentView* scratch_agent = scratch.Create<views::AgentView>();
  CAIRN_ASSIGN_OR_RETURN(views::AgentView * found, OpenView(store, key, scratch_agent));
  const bool exists = found != nullptr;
  views::AgentView& agent = exists ? *found : *scratch_agent;
  if (event.has_agent_registered()) {
    OnRegistered(event, exists, agent);
  } else if (!exists || !OnLaterEvent(event, agent)) {
    return Status::Ok();
  }
  return store.PutMessage(key, agent);
}

Result<std::optional<views::AgentView>> ReadAgent(ViewReader& reader, const std::string& agent_id) {
  views::AgentView agent;
  CAIRN_ASSIGN_OR_RETURN(bool found, GetMessage(reader, AgentKey(agent_id), &agent));
  if (!found) return std::optional<views::AgentView>();
  return std::optional<views::AgentView>(std::move(agent));
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
