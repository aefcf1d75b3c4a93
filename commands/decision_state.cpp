#include "commands/decision_state.h"

#include <algorithm>
#include <stdexcept>

#include "commands/agents/agent_state.h"
#include "commands/experiments/experiment_state.h"
#include "commands/pai/pai_state.h"
#include "commands/tasks/task_state.h"
#include "commands/templates/template_state.h"
#include "commands/webhooks/webhook_state.h"
#include "events/envelope_util.h"
#include "events/epoch_fence.h"

namespace cairn::commands {

const TaskRecord* DecisionState::FindTask(std::string_view task_id) const {
  auto it = tasks.find(task_id);
  return it == tasks.end() ? nullptr : &it->second;
}

const JobRecord* DecisionState::FindJob(std::string_view job_id) const {
  auto it = jobs.find(job_id);
  return it == jobs.end() ? nullptr : &it->second;
}

const AgentRecord* DecisionState::FindAgent(const std::string& agent_id) const {
  auto it = agents.find(agent_id);
  return it == agents.end() ? nullptr : &it->second;
}

const events::ResourcePoolConfig* DecisionState::FindPool(const std::string& pool_name) const {
  for (const auto& pool : pools_config.pools()) {
    if (pool.pool_name() == pool_name) return &pool;
  }
  return nullptr;
}

double DecisionState::PreemptionGraceSeconds(const std::string& pool_name) const {
  const events::ResourcePoolConfig* pool = FindPool(pool_name);
  return pool != nullptr && pool->preemption_grace_seconds() > 0
             ? pool->preemption_grace_seconds()
             : pools_config.preemption_grace_seconds();
}

Status DecisionState::NoSuchPool(const std::string& pool) const {
  return Status::InvalidArgument("resource pool " + pool +
                                 " does not exist (configured pools: " + PoolNames() + ")");
}

std::vector<const TaskRecord*> ExpiredPreemptions(const DecisionState& state, int64_t now) {
  std::vector<const TaskRecord*> expired;
  std::set<std::string> seen;  // a gang is on several agents
  // Through the agents: the task table holds all of history.
  for (const auto& [agent_id, agent] : state.agents) {
    for (const auto& allocation_id : agent.allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      if (task.preempting && !task.kill_requested && task.where().preemption_deadline <= now &&
          seen.insert(task.task_id).second) {
        expired.push_back(&task);
      }
    }
  }
  return expired;
}

const ExperimentRecord* DecisionState::FindExperiment(int64_t experiment_id) const {
  auto it = experiments.find(experiment_id);
  return it == experiments.end() ? nullptr : &it->second;
}

const PaiJobRecord* DecisionState::FindPaiJob(const std::string& job_id) const {
  auto it = pai_jobs.find(job_id);
  return it == pai_jobs.end() ? nullptr : &it->second;
}

const TrialRecord* DecisionState::FindTrial(int64_t trial_id) const {
  auto it = trials.find(trial_id);
  return it == trials.end() ? nullptr : &it->second;
}

const TaskRecord* DecisionState::FindAllocation(std::string_view allocation_id) const {
  if (auto other = other_allocations.find(allocation_id); other != other_allocations.end()) {
    return FindTask(other->second.task_id);
  }
  // "<task_id>.<n>": the task's latest allocation, or not an allocation at all.
  const TaskRecord* task = FindTask(TaskIdOfAllocation(allocation_id));
  return task != nullptr && task->allocation_id == allocation_id ? task : nullptr;
}

std::vector<std::string> DecisionState::AllocationAgents(std::string_view allocation_id) const {
  if (auto other = other_allocations.find(allocation_id);
      other != other_allocations.end() && !other->second.agent_ids.empty()) {
    return other->second.agent_ids;
  }
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr || task->agent_id.empty()) return {};
  std::vector<std::string> agents = {task->agent_id};
  agents.insert(agents.end(), task->more_agents.begin(), task->more_agents.end());
  return agents;
}

Result<const TaskRecord*> DecisionState::AllocationNamed(std::string_view allocation_id) const {
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr) {
    return Status::NotFound("allocation " + std::string(allocation_id) + " not found");
  }
  return task;
}

const TaskRecord& DecisionState::TaskOfLiveAllocation(const std::string& allocation_id) const {
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr) throw std::out_of_range("no allocation " + allocation_id);
  return *task;
}

const TrialRecord* DecisionState::FindTrialByAllocation(const std::string& allocation_id) const {
  const TaskRecord* task = FindAllocation(allocation_id);
  if (task == nullptr || task->trial_id == 0) return nullptr;
  return FindTrial(task->trial_id);
}

QueueKey DecisionState::QueueKeyOf(const TaskRecord& task) const {
  return {task.resources.priority(), task.job ? task.job->queue_position : 0,
          task.submitted_offset};
}

size_t DecisionState::QueuedTaskCount() const {
  size_t count = 0;
  for (const auto& [pool, queue] : queues) {
    count += queue.slot_tasks.size() + queue.zero_slot_tasks.size();
  }
  return count;
}

int64_t DecisionState::ExperimentWarmStartingFrom(std::string_view uuid) const {
  for (const auto& [id, experiment] : experiments) {
    if (!experiment.deleted && experiment.warm_start_checkpoint == uuid) return id;
  }
  return 0;
}

std::set<std::string> DecisionState::WarmStartSources() const {
  std::set<std::string> sources;
  for (const auto& [id, experiment] : experiments) {
    if (!experiment.deleted && !experiment.warm_start_checkpoint.empty()) {
      sources.insert(experiment.warm_start_checkpoint);
    }
  }
  // A pbt clone's parent's checkpoint, until the clone has one of its own (clones live only in
  // experiments that have not ended).
  for (const auto& [id, experiment] : experiments) {
    if (experiment.terminal()) continue;
    for (int64_t trial_id : experiment.trial_ids) {
      auto found = trials.find(trial_id);
      if (found == trials.end()) continue;
      const TrialRecord& trial = found->second;
      if (trial.cloned_from_trial != 0 && !trial.ended() && trial.latest_checkpoint.empty() &&
          !trial.warm_start_checkpoint.empty()) {
        sources.insert(trial.warm_start_checkpoint);
      }
    }
  }
  return sources;
}

void DecisionState::Enqueue(const TaskRecord& task) {
  if (task.follows_gang() || task.held) return;
  PoolQueue& pool = queues[task.pool()];
  auto& tasks_of_kind = task.slots_asked() == 0 ? pool.zero_slot_tasks : pool.slot_tasks;
  tasks_of_kind.emplace(QueueKeyOf(task), &task);
}

void DecisionState::Dequeue(const TaskRecord& task) {
  if (task.follows_gang()) return;
  auto pool = queues.find(task.pool());
  if (pool == queues.end()) return;
  auto& tasks_of_kind =
      task.slots_asked() == 0 ? pool->second.zero_slot_tasks : pool->second.slot_tasks;
  tasks_of_kind.erase(QueueKeyOf(task));
  if (pool->second.empty()) queues.erase(pool);
}

void Apply(DecisionState& state, const events::Envelope& event) {
  state.next_offset = event.offset() + 1;
  EpochFence fence(state.writer_epoch);
  switch (fence.Admit(event)) {
    case EpochFence::Verdict::kClaim:
      state.writer_epoch = fence.newest_epoch();
      return;
    case EpochFence::Verdict::kFenced:
      return;
    case EpochFence::Verdict::kFact:
      break;
  }
  // Keys older than the window are forgotten (by event time, so a rebuild forgets the same).
  const int64_t horizon = event.time_unix_micros() - kIdempotencyWindowMicros;
  while (!state.idempotency_by_time.empty() && state.idempotency_by_time.begin()->first < horizon) {
    auto oldest = state.idempotency_by_time.begin();
    auto entry = state.idempotency.find(oldest->second);
    if (entry != state.idempotency.end() && entry->second.time_unix_micros == oldest->first) {
      state.idempotency.erase(entry);
    }
    state.idempotency_by_time.erase(oldest);
  }
  if (!event.idempotency_key().empty()) {
    // A command's first event names it; its later events carry the same key.
    auto [entry, inserted] = state.idempotency.try_emplace(event.idempotency_key());
    if (inserted) {
      entry->second =
          DecisionState::IdempotentCommand{PayloadTypeName(event), event.actor(), EntityIdOf(event),
                                           event.request_fingerprint(), event.time_unix_micros()};
      state.idempotency_by_time.emplace(event.time_unix_micros(), event.idempotency_key());
    }
  }
  ApplyIdentity(state.identity, event);
  ApplyTenancy(state.tenancy, event);
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted:
      ApplyTaskEvent(state, event);
      ApplyTrialTaskEvent(state, event);
      ApplyPaiEvent(state, event);
      break;
    case events::Envelope::kAllocationAssigned:
      ApplyTaskEvent(state, event);
      ApplyPaiEvent(state, event);
      break;
    case events::Envelope::kTaskExited:
      ApplyTrialTaskEvent(state, event);  // first: it reads how the task ended
      ApplyPaiEvent(state, event);
      ApplyTaskEvent(state, event);
      break;
    case events::Envelope::kAllocationReleased:
      ApplyTrialTaskEvent(state, event);
      ApplyTaskEvent(state, event);
      break;
    case events::Envelope::kTaskStarted:
    case events::Envelope::kTaskReady:
    case events::Envelope::kTaskHeld:
    case events::Envelope::kKillRequested:
    case events::Envelope::kAllocationPartExited:
    case events::Envelope::kPreemptionRequested:
    case events::Envelope::kJobQueueChanged:
      ApplyTaskEvent(state, event);
      break;
    case events::Envelope::kResourcePoolsConfigured:
    case events::Envelope::kAgentRegistered:
    case events::Envelope::kAgentDisconnected:
    case events::Envelope::kAgentEnabled:
    case events::Envelope::kAgentDisabled:
    case events::Envelope::kAgentSlotEnabled:
    case events::Envelope::kAgentSlotDisabled:
      ApplyAgentEvent(state, event);
      break;
    case events::Envelope::kTemplateSaved:
    case events::Envelope::kTemplateDeleted:
      ApplyTemplateEvent(state, event);
      break;
    case events::Envelope::kExperimentStateChanged:
      ApplyExperimentEvent(state, event);
      ApplyWebhookEvent(state, event);  // after: a trigger reads the experiment's new state
      break;
    case events::Envelope::kWebhookCreated:
    case events::Envelope::kWebhookUpdated:
    case events::Envelope::kWebhookDeleted:
    case events::Envelope::kWebhookAlertRaised:
    case events::Envelope::kWebhookDeliveriesRecorded:
      ApplyWebhookEvent(state, event);
      break;
    case events::Envelope::kPaiJobSubmitted:
    case events::Envelope::kPaiJobAttemptStarted:
    case events::Envelope::kPaiJobStopRequested:
    case events::Envelope::kPaiJobAttemptEnded:
      ApplyPaiEvent(state, event);
      break;
    default:
      // Experiments, trials, checkpoints, the model registry; unknown or future
      // payloads are skipped.
      if (!ApplyExperimentEvent(state, event)) ApplyRegistryEvent(state.registry, event);
      break;
  }
}

}  // namespace cairn::commands
