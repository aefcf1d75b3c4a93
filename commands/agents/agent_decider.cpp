#include "commands/agents/agent_decider.h"

#include <set>

#include "commands/tasks/task_events.h"
#include "events/limits.h"

namespace cairn::commands {

Result<Decision> DecideCommand(const DecisionState& state, const ConfigurePools& command,
                               const CommandMeta&) {
  const auto& config = command.config;
  if (config.pools_size() == 0) return Status::InvalidArgument("at least one resource pool");
  std::set<std::string> names;
  for (const auto& pool : config.pools()) {
    if (!IsSafeId(pool.pool_name())) {
      return Status::InvalidArgument("bad resource pool name '" + pool.pool_name() + "'");
    }
    if (!names.insert(pool.pool_name()).second) {
      return Status::InvalidArgument("resource pool " + pool.pool_name() + " is defined twice");
    }
  }
  for (const auto* name : {&config.default_compute_pool(), &config.default_aux_pool()}) {
    if (!names.count(*name)) {
      return Status::InvalidArgument("default resource pool '" + *name + "' is not defined");
    }
  }
  // A pool may only go away once nothing waits or runs in it.
  for (const auto& [job_id, job] : state.jobs) {
    if (job.accepts_changes() && !names.count(job.resource_pool)) {
      return Status::FailedPrecondition("resource pool " + job.resource_pool +
                                        " still has live work (job " + std::string(job_id) +
                                        "); keep it in the configuration until that ends");
    }
  }
  if (state.pools_config.SerializeAsString() == config.SerializeAsString()) {
    return NoChange("resource-pools");
  }
  events::Envelope event;
  *event.mutable_resource_pools_configured() = config;
  return Decision{{std::move(event)}, "resource-pools"};
}

Result<Decision> DecideCommand(const DecisionState& state, const RegisterAgent& command,
                               const CommandMeta&) {
  const auto& registration = command.registration;
  if (!IsSafeId(registration.agent_id())) {
    return Status::InvalidArgument("bad agent id '" + registration.agent_id() + "' (" +
                                   SafeIdRuleText() + ")");
  }
  if (registration.incarnation().empty()) return Status::InvalidArgument("incarnation is required");
  if (registration.slot_count() < 0 || registration.slot_count() > kMaxSlotsPerAgent) {
    return Status::InvalidArgument("slots must be between 0 and " +
                                   std::to_string(kMaxSlotsPerAgent));
  }
  if (!registration.resource_pool().empty() && !IsSafeId(registration.resource_pool())) {
    return Status::InvalidArgument("bad resource pool name '" + registration.resource_pool() + "'");
  }
  const std::string pool_name =
      registration.resource_pool().empty() ? kDefaultPool : registration.resource_pool();
  if (state.FindPool(pool_name) == nullptr) {
    return Status::InvalidArgument("resource pool " + pool_name +
                                   " is not configured on this master (configured pools: " +
                                   state.PoolNames() + "); start the agent with --pool NAME");
  }
  Decision decision;
  decision.entity_id = registration.agent_id();
  events::Envelope event;
  *event.mutable_agent_registered() = registration;
  auto* registered = event.mutable_agent_registered();
  if (registered->resource_pool().empty()) registered->set_resource_pool(kDefaultPool);
  registered->set_reconnect(false);
  registered->set_reason("first registration");

  const AgentRecord* known = state.FindAgent(registration.agent_id());
  if (known && known->incarnation == registration.incarnation()) {
    bool unchanged = known->connected && known->slot_count == registered->slot_count() &&
                     known->resource_pool == registered->resource_pool();
    if (unchanged) return decision;
    if (known->resource_pool != registered->resource_pool() && !known->allocations.empty()) {
      return Status::FailedPrecondition("agent " + known->agent_id +
                                        " cannot change resource pool while it runs tasks");
    }
    // The same process cannot lose slots its tasks run on (found by the slot property test).
    if (known->slot_count != registered->slot_count() && !known->allocations.empty()) {
      return Status::FailedPrecondition(
          "agent " + known->agent_id + " cannot change its slot count (" +
          std::to_string(known->slot_count) + " to " + std::to_string(registered->slot_count()) +
          ") while it runs tasks; a new process registers with a new incarnation");
    }
    registered->set_reconnect(true);
    registered->set_reason("reconnected with the same incarnation");
  } else if (known) {
    registered->set_reason("a new process (incarnation " + registration.incarnation() +
                           ") replaced incarnation " + known->incarnation + "; its " +
                           std::to_string(known->allocations.size()) +
                           " running allocation(s) ended with it");
    // A new process replaced the old one: its tasks are gone with it.
    for (const auto& allocation_id : known->allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      if (task.held && task.allocation_id == allocation_id) {
        // A paused task was stopping anyway: it stays paused, released from the lost allocation.
        auto* released = decision.events.emplace_back().mutable_allocation_released();
        released->set_task_id(task.task_id);
        released->set_allocation_id(allocation_id);
        released->set_reason("paused; agent " + known->agent_id +
                             " restarted and its allocation was lost; held until unpaused");
        continue;
      }
      decision.events.push_back(
          ExitOf(task, "agent " + known->agent_id + " restarted; the task was lost"));
    }
  }
  decision.events.push_back(std::move(event));
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const DisconnectAgent& command,
                               const CommandMeta&) {
  const AgentRecord* agent = state.FindAgent(command.agent_id);
  if (!agent) return Status::NotFound("agent " + command.agent_id + " not found");
  if (!agent->connected || agent->incarnation != command.incarnation) {
    return NoChange(agent->agent_id);
  }
  events::Envelope event;
  auto* disconnected = event.mutable_agent_disconnected();
  disconnected->set_agent_id(agent->agent_id);
  disconnected->set_incarnation(agent->incarnation);
  disconnected->set_reason(command.reason);
  return Decision{{std::move(event)}, agent->agent_id};
}

Result<Decision> DecideCommand(const DecisionState& state, const EnableAgent& command,
                               const CommandMeta&) {
  const AgentRecord* agent = state.FindAgent(command.agent_id);
  if (!agent) return Status::NotFound("agent " + command.agent_id + " not found");
  if (agent->enabled && !agent->draining) return NoChange(agent->agent_id);
  events::Envelope event;
  event.mutable_agent_enabled()->set_agent_id(agent->agent_id);
  return Decision{{std::move(event)}, agent->agent_id};
}

Result<Decision> DecideCommand(const DecisionState& state, const DisableAgent& command,
                               const CommandMeta&) {
  const AgentRecord* agent = state.FindAgent(command.agent_id);
  if (!agent) return Status::NotFound("agent " + command.agent_id + " not found");
  if (!agent->enabled && agent->draining == command.drain) return NoChange(agent->agent_id);
  Decision decision;
  decision.entity_id = agent->agent_id;
  events::Envelope event;
  event.mutable_agent_disabled()->set_agent_id(agent->agent_id);
  event.mutable_agent_disabled()->set_drain(command.drain);
  decision.events.push_back(std::move(event));
  if (!command.drain) {
    for (const auto& allocation_id : agent->allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      if (!task.kill_requested) {
        decision.events.push_back(KillOrderFor(task, "agent " + agent->agent_id + " disabled"));
      }
    }
  }
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const SetSlotEnabled& command,
                               const CommandMeta&) {
  const AgentRecord* agent = state.FindAgent(command.agent_id);
  if (!agent) return Status::NotFound("agent " + command.agent_id + " not found");
  if (command.slot_id < 0 || command.slot_id >= agent->slot_count) {
    return Status::InvalidArgument("slot " + std::to_string(command.slot_id) + " of agent " +
                                   agent->agent_id + " does not exist: it has " +
                                   std::to_string(agent->slot_count) + " slots");
  }
  bool disabled = agent->disabled_slots.count(command.slot_id) > 0;
  if (disabled != command.enabled) return NoChange(agent->agent_id);
  Decision decision;
  decision.entity_id = agent->agent_id;
  events::Envelope event;
  if (command.enabled) {
    event.mutable_agent_slot_enabled()->set_agent_id(agent->agent_id);
    event.mutable_agent_slot_enabled()->set_slot_id(command.slot_id);
    decision.events.push_back(std::move(event));
    return decision;
  }
  event.mutable_agent_slot_disabled()->set_agent_id(agent->agent_id);
  event.mutable_agent_slot_disabled()->set_slot_id(command.slot_id);
  event.mutable_agent_slot_disabled()->set_drain(command.drain);
  decision.events.push_back(std::move(event));
  if (command.drain || !agent->used_slots.count(command.slot_id)) return decision;
  for (const auto& allocation_id : agent->allocations) {
    const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
    if (task.kill_requested) continue;
    for (const auto& part : task.where().parts) {
      if (part.agent_id() != agent->agent_id) continue;
      for (int32_t slot : part.slot_ids()) {
        if (slot != command.slot_id) continue;
        decision.events.push_back(KillOrderFor(
            task, "slot " + std::to_string(slot) + " of agent " + agent->agent_id + " disabled"));
        return decision;
      }
    }
  }
  return decision;
}

Status MayRun(const DecisionState& state, const UserRecord& user, const SetSlotEnabled& command) {
  return Authorize(state.tenancy, user, Permission::kUpdateAgents, kEveryWorkspace,
                   "enable or disable a slot of agent " + command.agent_id);
}
Status MayRun(const DecisionState& state, const UserRecord& user, const EnableAgent& command) {
  return Authorize(state.tenancy, user, Permission::kUpdateAgents, kEveryWorkspace,
                   "enable or disable agent " + command.agent_id);
}
Status MayRun(const DecisionState& state, const UserRecord& user, const DisableAgent& command) {
  return Authorize(state.tenancy, user, Permission::kUpdateAgents, kEveryWorkspace,
                   "enable or disable agent " + command.agent_id);
}
// Agents register and disconnect through their own routes; the master records its pools.
Status MayRun(const DecisionState&, const UserRecord&, const RegisterAgent&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const DisconnectAgent&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const ConfigurePools&) {
  return Status::Ok();
}

}  // namespace cairn::commands
