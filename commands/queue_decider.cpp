#include "commands/queue_decider.h"

#include <optional>
#include <set>

#include "base/encoding.h"
#include "commands/scheduler/scheduler.h"
#include "commands/task_events.h"
#include "commands/tenancy_decider.h"

namespace cairn::commands {

std::string PoolNames(const DecisionState& state) {
  std::string names;
  for (const auto& pool : state.pools_config.pools()) {
    names += (names.empty() ? "" : ", ") + pool.pool_name();
  }
  return names;
}

Status NoSuchPool(const DecisionState& state, const std::string& pool) {
  return Status::InvalidArgument("resource pool " + pool +
                                 " does not exist (configured pools: " + PoolNames(state) + ")");
}

namespace {

// Where a job lands when moved ahead of or behind `anchor`: halfway to the anchor's neighbour of
// the same priority in the same pool, or one spacing past the anchor when it has none.
Result<int64_t> PositionNextTo(const DecisionState& state, const JobRecord& moving,
                               const JobRecord& anchor, bool ahead) {
  std::optional<int64_t> neighbour;
  for (const auto& [job_id, job] : state.jobs) {
    if (job_id == moving.job_id || job_id == anchor.job_id || !job.accepts_changes() ||
        job.resource_pool != anchor.resource_pool || job.priority != anchor.priority) {
      continue;
    }
    if (ahead && job.queue_position < anchor.queue_position &&
        (!neighbour || job.queue_position > *neighbour)) {
      neighbour = job.queue_position;
    }
    if (!ahead && job.queue_position > anchor.queue_position &&
        (!neighbour || job.queue_position < *neighbour)) {
      neighbour = job.queue_position;
    }
  }
  if (!neighbour) {
    return anchor.queue_position + (ahead ? -kQueuePositionSpacing : kQueuePositionSpacing);
  }
  if (moving.priority == anchor.priority &&
      ((ahead && moving.queue_position < anchor.queue_position &&
        moving.queue_position > *neighbour) ||
       (!ahead && moving.queue_position > anchor.queue_position &&
        moving.queue_position < *neighbour))) {
    return moving.queue_position;  // already there
  }
  int64_t middle = anchor.queue_position + (*neighbour - anchor.queue_position) / 2;
  if (middle == anchor.queue_position || middle == *neighbour) {
    return Status::FailedPrecondition("no room left between job " + anchor.job_id +
                                      " and its neighbour; move that neighbour first");
  }
  return middle;
}

}  // namespace

Result<Decision> DecideConfigurePools(const DecisionState& state, const ConfigurePools& command) {
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

Result<Decision> DecideUpdateJob(const DecisionState& state, const UpdateJob& update) {
  const JobRecord* job = state.FindJob(update.job_id);
  if (job == nullptr) return Status::NotFound("job " + update.job_id + " not found");
  if (!job->accepts_changes()) {
    return Status::FailedPrecondition("job " + update.job_id + " has already ended");
  }
  if (!update.ahead_of.empty() && !update.behind_of.empty()) {
    return Status::InvalidArgument("give aheadOf or behindOf, not both");
  }
  events::JobQueueChanged changed;
  changed.set_job_id(job->job_id);
  changed.set_priority(job->priority);
  changed.set_weight(job->weight);
  changed.set_resource_pool(job->resource_pool);
  changed.set_queue_position(job->queue_position);
  changed.set_max_slots(job->max_slots);
  std::vector<std::string> what;
  if (update.priority) {
    if (*update.priority < 1 || *update.priority > 99) {
      return Status::InvalidArgument("priority must be between 1 and 99");
    }
    if (*update.priority != job->priority) {
      what.push_back("priority " + std::to_string(job->priority) + " -> " +
                     std::to_string(*update.priority));
      changed.set_priority(*update.priority);
    }
  }
  if (update.weight) {
    if (!(*update.weight > 0) || !std::isfinite(*update.weight)) {
      return Status::InvalidArgument("weight must be a positive number");
    }
    if (*update.weight != job->weight) {
      what.push_back("weight " + FormatNumber(job->weight) + " -> " + FormatNumber(*update.weight));
      changed.set_weight(*update.weight);
    }
  }
  if (update.max_slots) {
    if (*update.max_slots < 0) return Status::InvalidArgument("maxSlots must not be negative");
    if (*update.max_slots != job->max_slots) {
      what.push_back("max_slots " + std::to_string(job->max_slots) + " -> " +
                     std::to_string(*update.max_slots));
      changed.set_max_slots(*update.max_slots);
    }
  }
  if (update.resource_pool && *update.resource_pool != job->resource_pool) {
    const std::string& pool = *update.resource_pool;
    if (state.FindPool(pool) == nullptr) return NoSuchPool(state, pool);
    if (std::string refusal = PoolRefusal(state, pool, job->workspace_id); !refusal.empty()) {
      return Status::InvalidArgument(refusal);
    }
    for (const TaskRecord* task : job->tasks) {
      if (task->state == TaskState::kExited) continue;
      if (task->holds_allocation() && !task->preemptible()) {
        return Status::FailedPrecondition("job " + job->job_id +
                                          " is running; a running command, notebook, shell or "
                                          "TensorBoard cannot move to another resource pool");
      }
      CAIRN_RETURN_IF_ERROR(CheckCanEverFit(state, pool, task->resources.slots()));
    }
    what.push_back("resource pool " + job->resource_pool + " -> " + pool);
    changed.set_resource_pool(pool);
  }
  const std::string& anchor_id = update.ahead_of.empty() ? update.behind_of : update.ahead_of;
  if (!anchor_id.empty()) {
    if (anchor_id == job->job_id) {
      return Status::InvalidArgument("cannot move job " + job->job_id + " relative to itself");
    }
    const JobRecord* anchor = state.FindJob(anchor_id);
    if (anchor == nullptr || !anchor->accepts_changes()) {
      return Status::NotFound("job " + anchor_id + " not found in the queue");
    }
    if (anchor->resource_pool != changed.resource_pool()) {
      return Status::FailedPrecondition("job " + anchor_id + " is in resource pool " +
                                        anchor->resource_pool + ", job " + job->job_id + " in " +
                                        changed.resource_pool());
    }
    // As in Determined: a job moved next to one of another priority takes that priority.
    if (changed.priority() != anchor->priority) {
      what.push_back("priority " + std::to_string(changed.priority()) + " -> " +
                     std::to_string(anchor->priority) + " (that of job " + anchor_id + ")");
      changed.set_priority(anchor->priority);
    }
    JobRecord moving = *job;
    moving.priority = changed.priority();
    CAIRN_ASSIGN_OR_RETURN(int64_t position,
                           PositionNextTo(state, moving, *anchor, !update.ahead_of.empty()));
    if (position != job->queue_position) {
      what.push_back(std::string("moved ") + (update.ahead_of.empty() ? "behind" : "ahead of") +
                     " job " + anchor_id);
      changed.set_queue_position(position);
    }
  }
  if (what.empty()) return NoChange(job->job_id);
  std::string reason;
  for (const auto& part : what) reason += (reason.empty() ? "" : "; ") + part;
  bool running = false;
  for (const TaskRecord* task : job->tasks) {
    running |= task->holds_allocation() && !task->preemptible();
  }
  if (running && update.priority) {
    reason += " (its running tasks are not preemptible: the change affects only what it queues)";
  }
  changed.set_reason(reason);
  events::Envelope event;
  *event.mutable_job_queue_changed() = std::move(changed);
  return Decision{{std::move(event)}, job->job_id};
}

Result<Decision> DecideExpirePreemptions(const DecisionState& state, int64_t now) {
  Decision decision{{}, "preemptions"};
  for (const TaskRecord* task : ExpiredPreemptions(state, now)) {
    events::Envelope kill =
        KillOrderFor(*task, "the preemption's grace period of " +
                                FormatNumber(state.pools_config.preemption_grace_seconds()) +
                                " s ended before the task released its slots; forcing the kill");
    kill.mutable_kill_requested()->set_preemption_expired(true);
    decision.events.push_back(std::move(kill));
  }
  return decision;
}

}  // namespace cairn::commands
