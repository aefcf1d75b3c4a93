#include "commands/scheduler/scheduler.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "commands/scheduler/gang_hooks.h"
#include "commands/scheduler/policies.h"

namespace cairn::commands {

const char* SchedulerTypeName(events::SchedulerType type) {
  switch (type) {
    case events::SCHEDULER_TYPE_PRIORITY:
      return "priority";
    case events::SCHEDULER_TYPE_ROUND_ROBIN:
      return "round_robin";
    case events::SCHEDULER_TYPE_FAIR_SHARE:
    case events::SCHEDULER_TYPE_UNSPECIFIED:
    default:
      return "fair_share";
  }
}

std::string SlotsText(int32_t slots) {
  return std::to_string(slots) + (slots == 1 ? " slot" : " slots");
}

std::vector<const TaskRecord*> InJobOrder(std::vector<const TaskRecord*> tasks) {
  std::vector<std::tuple<int64_t, uint64_t, const TaskRecord*>> keyed;
  keyed.reserve(tasks.size());
  for (const TaskRecord* task : tasks) {
    keyed.emplace_back(task->job->queue_position, task->submitted_offset, task);
  }
  std::sort(keyed.begin(), keyed.end());
  for (size_t i = 0; i < keyed.size(); ++i) tasks[i] = std::get<2>(keyed[i]);
  return tasks;
}

PoolPass::PoolPass(const DecisionState& state, const events::ResourcePoolConfig& pool,
                   PoolCapacity capacity, int64_t now, SchedulingPass* out, bool explain)
    : state(state),
      pool(pool),
      capacity(std::move(capacity)),
      now(now),
      out(out),
      explain(explain) {}

namespace {

// The leader's gang: its job's tasks from the leader on, in submission order.
std::vector<const TaskRecord*> GangOf(const TaskRecord& leader) {
  std::vector<const TaskRecord*> members;
  const auto& tasks = leader.job->tasks;
  auto at = std::find(tasks.begin(), tasks.end(), &leader);
  for (; at != tasks.end() && members.size() < static_cast<size_t>(leader.resources.gang_size());
       ++at) {
    members.push_back(*at);
  }
  return members;
}

// The ports held on `agent_id`: by live work, and those this pass gave.
std::set<int32_t> PortsInUse(const PoolPass& pass, const GangHooks& hooks,
                             const std::string& agent_id) {
  std::set<int32_t> ports = hooks.PortsHeld(pass.state, agent_id);
  auto given = pass.ports_given.find(agent_id);
  if (given != pass.ports_given.end()) ports.insert(given->second.begin(), given->second.end());
  return ports;
}

}  // namespace

std::optional<Fit> FitTask(const PoolPass& pass, const PoolCapacity& capacity,
                           const TaskRecord& task, bool allow_releasing) {
  if (!task.leads_gang()) {
    if (task.resources.excluded_agents().empty()) {
      return capacity.FindFit(task.resources.slots(), allow_releasing);
    }
    // A trial's log policy keeps it off agents where its logs matched (exclude_node).
    PoolCapacity elsewhere = capacity;
    for (const auto& agent_id : task.resources.excluded_agents()) elsewhere.Exclude(agent_id);
    return elsewhere.FindFit(task.resources.slots(), allow_releasing);
  }
  const std::vector<const TaskRecord*> members = GangOf(task);
  if (members.size() != static_cast<size_t>(task.resources.gang_size())) return std::nullopt;
  const GangHooks* hooks = GangHooksOf(pass.state, task.job_id());
  // Each member by the pool's fitting policy on what the members before it left.
  PoolCapacity trial = capacity;
  std::map<std::string, std::set<int32_t>> ports_in_use;
  Fit gang;
  for (const TaskRecord* member : members) {
    auto fit = trial.FindFit(member->resources.slots(), allow_releasing);
    std::vector<events::PaiPorts> ports;
    const bool holds_ports = hooks != nullptr && hooks->HoldsPorts(pass.state, *member);
    // An agent where the member's fixed ports are taken is passed over: the member tries the
    // next one the fitting policy gives, on a copy that excludes the agents tried.
    std::optional<PoolCapacity> elsewhere;
    while (fit && fit->parts.size() == 1 && holds_ports) {
      const std::string& agent_id = fit->parts[0].agent_id();
      auto [in_use, fresh] = ports_in_use.try_emplace(agent_id);
      if (fresh) in_use->second = PortsInUse(pass, *hooks, agent_id);
      std::set<int32_t> taken = in_use->second;
      auto chosen = hooks->ChoosePorts(pass.state, *member, taken);
      if (chosen.ok()) {
        in_use->second = std::move(taken);
        ports = std::move(*chosen);
        break;
      }
      if (!elsewhere) elsewhere.emplace(trial);
      elsewhere->Exclude(agent_id);
      fit = elsewhere->FindFit(member->resources.slots(), allow_releasing);
    }
    if (!fit || fit->parts.size() != 1) return std::nullopt;
    trial.Take(*fit);
    if (gang.parts.empty()) gang.free_before = fit->free_before;
    gang.uses_releasing_slots |= fit->uses_releasing_slots;
    gang.parts.push_back(fit->parts[0]);
    gang.members.push_back(member);
    gang.member_ports.push_back(std::move(ports));
  }
  std::map<std::string, int> per_agent;
  for (const auto& part : gang.parts) per_agent[part.agent_id()]++;
  gang.how = "all " + std::to_string(members.size()) + " tasks of the gang placed together (";
  bool first = true;
  for (const auto& [agent_id, count] : per_agent) {
    gang.how += (first ? "" : ", ") + std::to_string(count) + " on agent " + agent_id;
    first = false;
  }
  gang.how += ")";
  return gang;
}

std::optional<Fit> PoolPass::FitFor(const TaskRecord& task, bool allow_releasing) const {
  return FitTask(*this, capacity, task, allow_releasing);
}

void PoolPass::Assign(const TaskRecord& task, const Fit& fit, const std::string& reason,
                      bool backfilled) {
  if (!fit.members.empty()) {
    AssignGang(fit, reason, backfilled);
    return;
  }
  capacity.Take(fit);
  events::Envelope event;
  auto* assigned = event.mutable_allocation_assigned();
  assigned->set_task_id(task.task_id);
  assigned->set_allocation_id(task.task_id + "." + std::to_string(task.allocation_count + 1));
  assigned->set_agent_id(fit.parts[0].agent_id());
  assigned->set_agent_incarnation(fit.parts[0].agent_incarnation());
  *assigned->mutable_slot_ids() = fit.parts[0].slot_ids();
  if (fit.parts.size() > 1) {
    for (const auto& part : fit.parts) *assigned->add_parts() = part;
  }
  assigned->set_resource_pool(pool.pool_name());
  assigned->set_backfilled(backfilled);
  assigned->set_reason(reason + "; " + fit.how);
  *assigned->mutable_spec() = task.Spec();
  out->decisions.push_back(std::move(event));
}

void PoolPass::AssignGang(const Fit& fit, const std::string& reason, bool backfilled) {
  capacity.Take(fit);
  const GangHooks* hooks = GangHooksOf(state, fit.members.front()->job_id());
  std::vector<GangHooks::PlacedMember> placed;
  for (size_t i = 0; i < fit.members.size(); ++i) {
    GangHooks::PlacedMember member;
    member.task = fit.members[i];
    const AgentRecord* agent = state.FindAgent(fit.parts[i].agent_id());
    member.host_ip = agent != nullptr && !agent->address.empty() ? agent->address : "127.0.0.1";
    member.ports = fit.member_ports[i];
    for (const auto& ports : member.ports) {
      ports_given[fit.parts[i].agent_id()].insert(ports.ports().begin(), ports.ports().end());
    }
    placed.push_back(std::move(member));
  }
  std::vector<std::vector<std::string>> variables;
  if (hooks != nullptr) variables = hooks->PlacementVariables(state, placed);
  for (size_t i = 0; i < fit.members.size(); ++i) {
    const TaskRecord& member = *fit.members[i];
    events::Envelope event;
    auto* assigned = event.mutable_allocation_assigned();
    assigned->set_task_id(member.task_id);
    assigned->set_allocation_id(member.task_id + "." + std::to_string(member.allocation_count + 1));
    assigned->set_agent_id(fit.parts[i].agent_id());
    assigned->set_agent_incarnation(fit.parts[i].agent_incarnation());
    *assigned->mutable_slot_ids() = fit.parts[i].slot_ids();
    assigned->set_resource_pool(pool.pool_name());
    assigned->set_backfilled(backfilled);
    assigned->set_reason(reason + "; " + fit.how);
    *assigned->mutable_spec() = member.Spec();
    if (hooks != nullptr) {
      for (auto& variable : variables[i]) {
        assigned->mutable_spec()->add_environment_variables(std::move(variable));
      }
      for (const auto& ports : fit.member_ports[i]) *assigned->add_ports() = ports;
    }
    out->decisions.push_back(std::move(event));
  }
}

void PoolPass::Preempt(const TaskRecord& victim, const std::string& reason,
                       const TaskRecord* for_task) {
  capacity.MarkReleasing(victim);
  events::Envelope event;
  auto* preemption = event.mutable_preemption_requested();
  preemption->set_task_id(victim.task_id);
  preemption->set_allocation_id(victim.allocation_id);
  preemption->set_agent_id(victim.agent_id);
  preemption->set_agent_incarnation(victim.where().agent_incarnation);
  for (const auto& part : victim.where().parts) *preemption->add_parts() = part;
  preemption->set_reason(reason);
  if (for_task != nullptr) preemption->set_for_task_id(for_task->task_id);
  const double grace = state.PreemptionGraceSeconds(pool.pool_name());
  preemption->set_deadline_unix_micros(now + static_cast<int64_t>(std::llround(grace * 1e6)));
  out->decisions.push_back(std::move(event));
}

void RunZeroSlot(PoolPass& pass, bool by_priority) {
  auto tasks = by_priority ? pass.queued_zero_slot_tasks : InJobOrder(pass.queued_zero_slot_tasks);
  size_t position = 0;
  for (const TaskRecord* task : tasks) {
    ++position;
    auto fit = pass.FitFor(*task, false);
    if (!fit) {
      pass.Wait(*task, [&] {
        return "needs a zero-slot place; every agent of pool " + pass.PoolName() +
               " already runs its limit of " +
               std::to_string(pass.pool.max_aux_containers_per_agent()) +
               " zero-slot containers (or the pool has no agent)";
      });
      continue;
    }
    pass.Assign(*task, *fit,
                std::string("zero-slot task, ") +
                    (by_priority ? "by priority" : "first in, first out") + " (position " +
                    std::to_string(position) + " among zero-slot tasks of pool " + pass.PoolName() +
                    ")",
                false);
  }
}

namespace {

// The tasks holding an allocation with slots in `pool_name`, found through the agents: the task
// table holds all of history.
std::vector<const TaskRecord*> RunningSlotTasks(const DecisionState& state,
                                                const std::string& pool_name) {
  std::vector<const TaskRecord*> tasks;
  std::set<std::string> seen;
  for (const auto& [agent_id, agent] : state.agents) {
    if (agent.resource_pool != pool_name) continue;
    for (const auto& allocation_id : agent.allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      if (task.holds_allocation() && task.resources.slots() > 0 &&
          seen.insert(task.task_id).second) {
        tasks.push_back(&task);
      }
    }
  }
  return tasks;
}

// Whether a pass over `pool` could place, reserve or preempt anything. It cannot when no agent
// has a free or releasing slot (nor a zero-slot place, for zero-slot work) and the policy could
// take nothing back: round robin and priority without preemption never do; priority with
// preemption only takes from preemptible tasks at least as unimportant as the queue's head;
// fair share only from preemptible tasks. Costs O(agents + running tasks), never O(queue).
bool PoolCanChange(const events::ResourcePoolConfig& pool, const PoolQueue& queue,
                   const PoolCapacity& capacity, const std::vector<const TaskRecord*>& running) {
  if (capacity.agent_count() == 0) return false;
  if (!queue.zero_slot_tasks.empty() && capacity.has_zero_slot_place()) return true;
  if (queue.slot_tasks.empty()) return false;
  if (capacity.largest_available_on_one_agent() > 0) return true;
  const auto type = pool.scheduler().type();
  const bool by_priority = type == events::SCHEDULER_TYPE_PRIORITY;
  if (type == events::SCHEDULER_TYPE_ROUND_ROBIN || (by_priority && !pool.scheduler().preemption()))
    return false;
  const int32_t head_priority = queue.slot_tasks.begin()->second->resources.priority();
  for (const TaskRecord* task : running) {
    if (!task->preemptible() || task->preempting || task->kill_requested) continue;
    if (!by_priority || task->resources.priority() >= head_priority) return true;
  }
  return false;
}

// Schedule, and ExplainQueuedTask when `only` is set: then only `only`'s pool is passed over,
// only `only`'s reason is put in words (every waiting task's of the pool with `word_pool`), and
// in a pool without a schedulable agent `only` alone is walked.
SchedulingPass RunPass(const DecisionState& state, int64_t now_unix_micros, bool explain_waiting,
                       const TaskRecord* only, bool word_pool = false) {
  const TaskRecord* worded = word_pool ? nullptr : only;
  SchedulingPass result;
  if (state.queues.empty() && !explain_waiting) {
    // Nothing waits: only fair share could still want to move slots, and it only does that for
    // queued work.
    return result;
  }
  std::set<std::string> pools_with_agents;
  for (const auto& [agent_id, agent] : state.agents) {
    if (agent.schedulable()) pools_with_agents.insert(agent.resource_pool);
  }
  // Without a schedulable agent nothing can be placed or preempted anywhere: skip the walk of
  // the queue (a cluster whose agents are all down would otherwise pay it on every batch).
  if (pools_with_agents.empty() && !explain_waiting) return result;
  // Each pool's queue, in queue order. Nothing can be placed or preempted in a pool without a
  // schedulable agent, so its tasks are only listed when asked why they wait.
  struct Queued {
    std::vector<const TaskRecord*> slot_tasks;
    std::vector<const TaskRecord*> zero_slot_tasks;
    // The pool's capacity and running tasks when the check for a change already built them.
    std::optional<PoolCapacity> capacity;
    std::vector<const TaskRecord*> running_slot_tasks;
  };
  std::map<std::string, Queued> queued;
  const bool any_bindings = !state.tenancy.pool_bindings.empty();
  // A pool's bindings changed after the work was queued: the pool no longer takes it.
  auto refused_by_bindings = [&](const std::string& pool, const TaskRecord& task) {
    if (!any_bindings) return false;
    const int32_t workspace_id = task.job->workspace_id;
    if (state.tenancy.PoolAllows(pool, workspace_id)) return false;
    if (explain_waiting && (worded == nullptr || &task == worded)) {
      result.waiting_reasons[task.task_id] =
          "resource pool " + pool + " is no longer available to workspace id " +
          std::to_string(workspace_id) +
          " (its bindings changed); move the job to a pool the workspace may use";
    }
    return true;
  };
  auto list = [&](const std::string& pool, const PoolQueue::Tasks& from,
                  std::vector<const TaskRecord*>& to) {
    result.queued_tasks_walked += from.size();
    to.reserve(from.size());
    for (const auto& [key, task] : from) {
      if (!refused_by_bindings(pool, *task)) to.push_back(task);
    }
  };
  if (only != nullptr && !pools_with_agents.count(only->pool())) {
    // The others of its pool cannot change why it waits.
    const std::string& pool = only->pool();
    if (!refused_by_bindings(pool, *only)) {
      Queued& lists = queued[pool];
      (only->slots_asked() == 0 ? lists.zero_slot_tasks : lists.slot_tasks).push_back(only);
    }
  } else {
    for (const auto& [pool, pool_queue] : state.queues) {
      if (only != nullptr && pool != only->pool()) continue;
      std::optional<PoolCapacity> capacity;
      std::vector<const TaskRecord*> running;
      if (!explain_waiting) {
        if (!pools_with_agents.count(pool)) continue;
        const events::ResourcePoolConfig* config = state.FindPool(pool);
        if (config == nullptr) continue;
        capacity.emplace(state, *config);
        running = RunningSlotTasks(state, pool);
        if (!PoolCanChange(*config, pool_queue, *capacity, running)) continue;
      }
      Queued& lists = queued[pool];
      lists.capacity = std::move(capacity);
      lists.running_slot_tasks = std::move(running);
      list(pool, pool_queue.slot_tasks, lists.slot_tasks);
      list(pool, pool_queue.zero_slot_tasks, lists.zero_slot_tasks);
    }
  }
  for (const auto& pool : state.pools_config.pools()) {
    auto lists = queued.find(pool.pool_name());
    if (lists == queued.end()) continue;
    Queued& listed = lists->second;
    const bool prepared = listed.capacity.has_value();
    PoolPass pass(state, pool, prepared ? std::move(*listed.capacity) : PoolCapacity(state, pool),
                  now_unix_micros, &result, explain_waiting);
    pass.explain_only = worded;
    pass.queued_slot_tasks = std::move(listed.slot_tasks);
    pass.queued_zero_slot_tasks = std::move(listed.zero_slot_tasks);
    pass.running_slot_tasks =
        prepared ? std::move(listed.running_slot_tasks) : RunningSlotTasks(state, pool.pool_name());
    const auto type = pool.scheduler().type();
    if (!pass.queued_slot_tasks.empty()) {
      if (pass.capacity.agent_count() == 0) {
        for (const TaskRecord* task : pass.queued_slot_tasks) {
          pass.Wait(*task,
                    [&] { return "pool " + pool.pool_name() + " has no schedulable agent"; });
        }
      } else if (type == events::SCHEDULER_TYPE_PRIORITY) {
        RunPriority(pass);
      } else if (type == events::SCHEDULER_TYPE_ROUND_ROBIN) {
        RunRoundRobin(pass);
      } else {
        RunFairShare(pass);
      }
    }
    if (!pass.queued_zero_slot_tasks.empty()) {
      RunZeroSlot(pass, type == events::SCHEDULER_TYPE_PRIORITY);
    }
  }
  return result;
}

}  // namespace

SchedulingPass Schedule(const DecisionState& state, int64_t now_unix_micros, bool explain_waiting) {
  return RunPass(state, now_unix_micros, explain_waiting, nullptr);
}

namespace {

QueuedTaskOutlook OutlookIn(const SchedulingPass& pass, const TaskRecord& task) {
  QueuedTaskOutlook outlook;
  auto waiting = pass.waiting_reasons.find(task.task_id);
  if (waiting != pass.waiting_reasons.end()) {
    outlook.kind = QueuedTaskOutlook::kWaits;
    outlook.waiting_reason = waiting->second;
    return outlook;
  }
  for (const auto& decision : pass.decisions) {
    if (decision.has_allocation_assigned() &&
        decision.allocation_assigned().task_id() == task.task_id) {
      outlook.kind = QueuedTaskOutlook::kPlaced;
    }
  }
  return outlook;
}

}  // namespace

QueuedTaskOutlook ExplainQueuedTask(const DecisionState& state, int64_t now_unix_micros,
                                    const TaskRecord& task, ExplainedPasses* passes) {
  const std::string& pool = task.pool();
  const bool pool_has_agent =
      std::any_of(state.agents.begin(), state.agents.end(), [&](const auto& entry) {
        return entry.second.schedulable() && entry.second.resource_pool == pool;
      });
  // Without a schedulable agent the task is walked alone, which costs less than a lookup.
  if (passes == nullptr || !pool_has_agent) {
    return OutlookIn(RunPass(state, now_unix_micros, true, &task), task);
  }
  if (passes->state_offset != state.next_offset) {
    passes->by_pool.clear();
    passes->state_offset = state.next_offset;
  }
  auto cached = passes->by_pool.find(pool);
  if (cached == passes->by_pool.end()) {
    cached =
        passes->by_pool.emplace(pool, RunPass(state, now_unix_micros, true, &task, true)).first;
  }
  return OutlookIn(cached->second, task);
}

Status CheckCanEverFit(const DecisionState& state, const std::string& pool_name, int32_t slots) {
  const events::ResourcePoolConfig* pool = state.FindPool(pool_name);
  if (pool == nullptr)
    return Status::InvalidArgument("resource pool " + pool_name + " does not exist");
  PoolCapacity capacity = PoolCapacity::AllIdle(state, *pool);
  // A pool no agent has joined yet says nothing about what fits: the task waits for agents
  // (the explanation says so) rather than being refused while a cluster comes up.
  if (capacity.agent_count() == 0) return Status::Ok();
  if (capacity.FindFit(slots, false)) return Status::Ok();
  if (slots == 0) {
    return Status::FailedPrecondition(
        "resource pool " + pool_name +
        " takes no zero-slot tasks (max_aux_containers_per_agent is 0, or it has no agents)");
  }
  std::vector<std::string> sizes;
  for (const auto& [agent_id, agent] : state.agents) {
    if (agent.resource_pool == pool_name) sizes.push_back(std::to_string(agent.slot_count));
  }
  std::string agents_text;
  for (size_t i = 0; i < sizes.size() && i < 8; ++i) agents_text += (i ? ", " : "") + sizes[i];
  if (sizes.size() > 8) agents_text += ", ...";
  // Determined's words first: tools match them.
  return Status::FailedPrecondition(
      "request unfulfillable, please try requesting less slots: the task needs " +
      SlotsText(slots) + " but can never fit in resource pool " + pool_name + " (" +
      std::to_string(sizes.size()) + (sizes.size() == 1 ? " agent" : " agents") +
      (sizes.empty() ? "" : " with " + agents_text + " slots") + ", " +
      std::to_string(capacity.total_slots()) +
      " slots in all; a task larger than one agent needs whole agents of one size and a "
      "multiple of it); set force to queue it anyway");
}

}  // namespace cairn::commands
