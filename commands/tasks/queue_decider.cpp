#include <map>
#include <optional>
#include <set>

#include "base/encoding.h"
#include "commands/scheduler/scheduler.h"
#include "commands/tasks/task_decider.h"  // the job queue's commands of the tasks domain
#include "commands/tasks/task_events.h"
#include "commands/tenancy/tenancy_decider.h"
#include "events/limits.h"

namespace cairn::commands {

namespace {

// The jobs as the entries of one request decided so far left them: each entry of UpdateJobs is
// decided as if the ones before it were applied, without changing the state.
class QueueChanges {
 public:
  explicit QueueChanges(const DecisionState& state) : state_(state) {}

  const JobRecord* Find(const std::string& job_id) const {
    auto changed = changed_.find(job_id);
    return changed != changed_.end() ? &changed->second : state_.FindJob(job_id);
  }
  // Every job, as changed.
  template <typename Visit>
  void ForEachJob(const Visit& visit) const {
    for (const auto& [job_id, job] : state_.jobs) {
      auto changed = changed_.empty() ? changed_.end() : changed_.find(job_id);
      visit(changed != changed_.end() ? changed->second : job);
    }
  }
  // What ApplyJobQueueChanged (commands/tasks/task_state.cpp) changes of the job.
  void Record(const events::JobQueueChanged& change) {
    const JobRecord* job = Find(change.job_id());
    if (job == nullptr) return;
    JobRecord changed = *job;
    changed.priority = change.priority();
    changed.weight = change.weight();
    changed.resource_pool = change.resource_pool();
    changed.queue_position = change.queue_position();
    changed.max_slots = change.max_slots();
    changed_.insert_or_assign(change.job_id(), std::move(changed));
  }

 private:
  const DecisionState& state_;
  std::map<std::string, JobRecord, std::less<>> changed_;
};

// Where a job lands when moved ahead of or behind `anchor`: halfway to the anchor's neighbour of
// the same priority in the same pool, or one spacing past the anchor when it has none.
Result<int64_t> PositionNextTo(const QueueChanges& jobs, const JobRecord& moving,
                               const JobRecord& anchor, bool ahead) {
  std::optional<int64_t> neighbour;
  jobs.ForEachJob([&](const JobRecord& job) {
    if (job.job_id == moving.job_id || job.job_id == anchor.job_id || !job.accepts_changes() ||
        job.resource_pool != anchor.resource_pool || job.priority != anchor.priority) {
      return;
    }
    if (ahead && job.queue_position < anchor.queue_position &&
        (!neighbour || job.queue_position > *neighbour)) {
      neighbour = job.queue_position;
    }
    if (!ahead && job.queue_position > anchor.queue_position &&
        (!neighbour || job.queue_position < *neighbour)) {
      neighbour = job.queue_position;
    }
  });
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

// An UpdateJob decided against the jobs as `jobs` has them.
Result<Decision> DecideUpdate(const DecisionState& state, const QueueChanges& jobs,
                              const UpdateJob& update) {
  const JobRecord* job = jobs.Find(update.job_id);
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
    if (*update.priority < kMinPriority || *update.priority > kMaxPriority) {
      return Status::InvalidArgument("priority must be " + PriorityRangeText());
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
    if (state.FindPool(pool) == nullptr) return state.NoSuchPool(pool);
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
    const JobRecord* anchor = jobs.Find(anchor_id);
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
                           PositionNextTo(jobs, moving, *anchor, !update.ahead_of.empty()));
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

}  // namespace

Result<Decision> DecideCommand(const DecisionState& state, const UpdateJob& update,
                               const CommandMeta&) {
  return DecideUpdate(state, QueueChanges(state), update);
}

Result<Decision> DecideCommand(const DecisionState& state, const ExpirePreemptions&,
                               const CommandMeta& meta) {
  const int64_t now = meta.time_unix_micros;
  Decision decision{{}, "preemptions"};
  for (const TaskRecord* task : ExpiredPreemptions(state, now)) {
    events::Envelope kill = KillOrderFor(
        *task, "the preemption's grace period of " +
                   FormatNumber(state.PreemptionGraceSeconds(task->resources.resource_pool())) +
                   " s ended before the task released its slots; forcing the kill");
    kill.mutable_kill_requested()->set_preemption_expired(true);
    decision.events.push_back(std::move(kill));
  }
  return decision;
}

Status CombinedJobUpdateErrors(const std::vector<Status>& errors) {
  std::string message = "encountered the following errors: ";
  bool all_not_found = true;
  for (size_t i = 0; i < errors.size(); ++i) {
    message += (i ? "; " : "") + errors[i].message();
    all_not_found &= errors[i].code() == StatusCode::kNotFound;
  }
  return all_not_found ? Status::NotFound(message) : Status::InvalidArgument(message);
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateJobs& command,
                               const CommandMeta&) {
  if (command.updates.empty()) return NoChange("job-queue");
  Decision decision;
  decision.entity_id = command.updates.size() == 1 ? command.updates[0].job_id : "job-queue";
  QueueChanges jobs(state);
  std::vector<Status> errors;
  for (const UpdateJob& update : command.updates) {
    auto one = DecideUpdate(state, jobs, update);
    if (!one.ok()) {
      errors.push_back(one.status());
      continue;
    }
    for (auto& event : one->events) {
      jobs.Record(event.job_queue_changed());
      decision.events.push_back(std::move(event));
    }
  }
  if (!errors.empty()) return CombinedJobUpdateErrors(errors);
  return decision;
}

}  // namespace cairn::commands
