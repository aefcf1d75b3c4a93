// The write side's in-memory model of the cluster: everything the deciders need to validate a
// command and place tasks, folded from the log by Apply(). It is composed of each domain's part
// (commands/<domain>/*_records.h and identity, tenancy and registry states); each domain folds
// its own events, and Apply routes an event to them in the order the domains depend on. Every
// domain's decider reads the whole state (a submission checks its workspace, its pool and its
// job) but changes none of it: only Apply does. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/by_own_id.h"
#include "base/status.h"
#include "commands/agents/agent_records.h"
#include "commands/experiments/experiment_records.h"
#include "commands/identity/identity.h"
#include "commands/pai/pai_records.h"
#include "commands/registry/model_registry.h"
#include "commands/tasks/job_ranks.h"
#include "commands/tasks/task_records.h"
#include "commands/tenancy/tenancy.h"
#include "commands/webhooks/webhook_records.h"
#include "events.pb.h"
#include "events/pool_defaults.h"

namespace cairn::commands {

// How long an Idempotency-Key is remembered, by event time: retries come within minutes; a day
// covers a client retrying across a long master outage.
inline constexpr int64_t kIdempotencyWindowMicros = int64_t{24} * 3600 * 1'000'000;

struct DecisionState {
  uint64_t next_offset = 0;  // the offset the next event gets (= events applied)
  uint64_t writer_epoch = 0;
  ByOwnId<TaskRecord, &TaskRecord::task_id> tasks;
  ByOwnId<JobRecord, &JobRecord::job_id> jobs;
  std::map<std::string, AgentRecord> agents;
  events::ResourcePoolsConfigured pools_config = DefaultPoolsConfig();
  // Allocations their task's record no longer answers for (FindAllocation, AllocationAgents):
  // released ones (the task was re-queued), with the agents that held them; and ids not of the
  // scheduler's form "<task_id>.<n>" while they are their task's latest, with no agents (the
  // record answers). Most tasks have one allocation in their life, so this stays small, where
  // maps of every allocation ever made cost about 370 bytes a task of history.
  struct AllocationHolding {
    std::string task_id;
    std::vector<std::string> agent_ids;
  };
  std::map<std::string, AllocationHolding, std::less<>> other_allocations;
  std::map<std::string, PoolQueue> queues;  // queued tasks by pool; no entry for an empty one
  JobRanks live_jobs;                       // jobs with live tasks, in each pool's queue order
  // idempotency key -> what its command was and the entity it created or touched
  struct IdempotentCommand {
    std::string command;  // the payload type of the command's first event
    std::string actor;
    std::string entity_id;
    std::string request_fingerprint;
    int64_t time_unix_micros = 0;
  };
  std::map<std::string, IdempotentCommand> idempotency;
  // The keys by the time they were first used, to forget them after kIdempotencyWindow.
  std::multimap<int64_t, std::string> idempotency_by_time;
  std::map<int64_t, ExperimentRecord> experiments;
  std::map<int64_t, TrialRecord> trials;
  std::map<std::string, CheckpointRecord> checkpoints;
  std::vector<std::string> deleted_checkpoints;  // in the order garbage collection decided it
  // det experiment delete-tb-files requests in log order: the files written up to each request's
  // time go (master/checkpoint_collector.h).
  struct TensorboardDeletion {
    int64_t experiment_id = 0;
    int64_t time_unix_micros = 0;
    bool operator==(const TensorboardDeletion&) const = default;
  };
  std::vector<TensorboardDeletion> tensorboard_deletions;
  std::map<std::string, events::TemplateSaved> templates;
  IdentityState identity;  // users and live sessions (commands/identity/identity.h)
  TenancyState tenancy;  // workspaces, projects, roles, pool bindings (commands/tenancy/tenancy.h)
  RegistryState registry;  // models and their versions (commands/registry/model_registry.h)
  WebhookState webhooks;   // and the deliveries they owe (commands/webhooks/webhook_records.h)
  int64_t last_experiment_id = 0;
  int64_t last_trial_id = 0;
  // Experiments an event touched since the reactor last looked
  // (commands/experiments/experiment_reactor.h). Not part of the log's meaning: a replayed state
  // has them all, and the reactor is idempotent.
  std::set<int64_t> dirty_experiments;
  // OpenPAI jobs by job id; by "<username>/<jobName>" (names are unique per user); the live
  // attempts' task ids to their job; and the jobs an event touched since the job controller looked.
  std::map<std::string, PaiJobRecord> pai_jobs;
  std::map<std::string, std::string> pai_job_by_name;
  std::map<std::string, std::string> pai_task_to_job;
  std::set<std::string> dirty_pai_jobs;

  const TaskRecord* FindTask(std::string_view task_id) const;
  const JobRecord* FindJob(std::string_view job_id) const;
  const AgentRecord* FindAgent(const std::string& agent_id) const;
  const events::ResourcePoolConfig* FindPool(const std::string& pool_name) const;
  // From a preemption request to a forced kill in `pool_name`: the pool's
  // task_container_defaults.preemption_timeout, else the cluster's.
  double PreemptionGraceSeconds(const std::string& pool_name) const;
  // "a, b, c": the configured pools, for messages.
  std::string PoolNames() const { return PoolNamesOf(pools_config); }
  // InvalidArgument naming `pool` and the configured pools.
  Status NoSuchPool(const std::string& pool) const;
  const ExperimentRecord* FindExperiment(int64_t experiment_id) const;
  const TrialRecord* FindTrial(int64_t trial_id) const;
  const PaiJobRecord* FindPaiJob(const std::string& job_id) const;
  // Whether a model version points at the checkpoint: garbage collection and experiment deletion
  // keep it.
  bool IsCheckpointRegistered(std::string_view uuid) const {
    return registry.IsCheckpointRegistered(uuid);
  }
  // An experiment (not deleted) whose trials warm-start from the checkpoint, or 0: such a
  // checkpoint is kept, as Determined keeps it.
  int64_t ExperimentWarmStartingFrom(std::string_view uuid) const;
  // Every checkpoint some experiment (not deleted) warm-starts from, and every checkpoint a live
  // pbt clone without a checkpoint of its own begins from: for a pass over many.
  std::set<std::string> WarmStartSources() const;
  // The task the allocation named `allocation_id` was made for, also after it ended; nullptr
  // when no allocation had that id.
  const TaskRecord* FindAllocation(std::string_view allocation_id) const;
  // FindAllocation for a caller that names it (an agent's report, a trial's workload): NotFound,
  // saying which, when no allocation had that id.
  Result<const TaskRecord*> AllocationNamed(std::string_view allocation_id) const;
  // The agents that held the allocation (several for a gang), also after it ended; none when no
  // allocation had that id.
  std::vector<std::string> AllocationAgents(std::string_view allocation_id) const;
  // The task of an allocation that is some agent's now (AgentRecord::allocations).
  const TaskRecord& TaskOfLiveAllocation(const std::string& allocation_id) const;
  // The trial whose run holds `allocation_id`, or nullptr.
  const TrialRecord* FindTrialByAllocation(const std::string& allocation_id) const;
  QueueKey QueueKeyOf(const TaskRecord& task) const;
  size_t QueuedTaskCount() const;  // over every pool's queue (a few pools)
  // Puts a queued task in its pool's queue, or takes it out: call Dequeue before changing what
  // QueueKeyOf or the pool reads (priority, pool, the job's position), Enqueue after.
  void Enqueue(const TaskRecord& task);
  void Dequeue(const TaskRecord& task);
};

// Running tasks whose preemption grace period ended by `now` and that no kill reached yet.
std::vector<const TaskRecord*> ExpiredPreemptions(const DecisionState& state, int64_t now);

// Folds one event into the state. Events of an epoch older than the newest claimed one are
// ignored (read-side fencing); unknown payloads are skipped.
void Apply(DecisionState& state, const events::Envelope& event);

}  // namespace cairn::commands
