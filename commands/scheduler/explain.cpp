#include "commands/scheduler/explain.h"

#include "base/clock.h"
#include "commands/scheduler/policies.h"
#include "commands/scheduler/scheduler.h"
#include "events/envelope_util.h"

namespace cairn::commands {

JobsAhead JobsAheadOf(const DecisionState& state, const JobRecord& job, size_t limit) {
  const events::ResourcePoolConfig* pool = state.FindPool(job.resource_pool);
  const bool by_priority =
      pool != nullptr && pool->scheduler().type() == events::SCHEDULER_TYPE_PRIORITY;
  JobsAhead ahead;
  ahead.count =
      state.live_jobs.CountAhead(job.resource_pool, by_priority, job.priority, job.queue_position);
  for (const std::string& job_id : state.live_jobs.FirstAhead(
           job.resource_pool, by_priority, job.priority, job.queue_position, limit)) {
    const JobRecord& other = state.jobs.at(job_id);
    JobAhead entry{job_id, other.priority, 0, false};
    for (const TaskRecord* task : other.tasks) {
      if (task->state == TaskState::kExited) continue;
      entry.slots += task->slots_asked();
      entry.running |= task->holds_allocation();
    }
    ahead.first.push_back(std::move(entry));
  }
  return ahead;
}

Result<TaskExplanation> ExplainTask(const DecisionState& state, const std::string& task_id,
                                    int64_t now_unix_micros, ExplainedPasses* passes) {
  const TaskRecord* task = state.FindTask(task_id);
  if (task == nullptr) return Status::NotFound("task " + task_id + " not found");
  TaskExplanation explanation;
  explanation.state = TaskStateName(task->state);
  const JobRecord* job = state.FindJob(task->job_id());
  const events::ResourcePoolConfig* pool = state.FindPool(task->pool());
  std::string scheduler =
      pool == nullptr
          ? "unknown pool"
          : std::string(SchedulerTypeName(pool->scheduler().type())) + " scheduler" +
                (pool->scheduler().type() == events::SCHEDULER_TYPE_PRIORITY
                     ? (pool->scheduler().preemption() ? ", preemption on" : ", preemption off")
                     : "");
  std::string& reason = explanation.reason;
  switch (task->state) {
    case TaskState::kQueued: {
      if (task->held) {
        reason = "PAUSED: held out of pool " + task->pool() + "'s queue until unpaused" +
                 (task->last_reason.empty() ? "" : " (" + task->last_reason + ")");
        break;
      }
      reason = "QUEUED in pool " + task->pool() + " (" + scheduler + "), priority " +
               std::to_string(task->resources.priority()) + ", needs " +
               SlotsText(task->slots_asked());
      if (!task->last_reason.empty()) reason += "; last decision: " + task->last_reason;
      const QueuedTaskOutlook outlook = ExplainQueuedTask(state, now_unix_micros, *task, passes);
      switch (outlook.kind) {
        case QueuedTaskOutlook::kWaits:
          reason += "; waiting because " + outlook.waiting_reason;
          break;
        case QueuedTaskOutlook::kPlaced:
          reason += "; the next scheduling pass places it";
          break;
        case QueuedTaskOutlook::kNotConsidered:
          reason += "; not considered by the scheduler (its pool has no agent yet)";
          break;
      }
      break;
    }
    case TaskState::kAssigned:
    case TaskState::kRunning:
    case TaskState::kTerminating: {
      std::string where;
      for (const auto& part : task->where().parts) {
        where += (where.empty() ? "" : ", ") + part.agent_id() + " slots [";
        for (int i = 0; i < part.slot_ids_size(); ++i) {
          where += (i ? "," : "") + std::to_string(part.slot_ids(i));
        }
        where += "]";
      }
      reason = std::string(TaskStateName(task->state)) + " on " + where + " in pool " +
               task->where().allocation_pool + " (" + scheduler + ")";
      if (task->preempting) {
        reason += "; being preempted (a kill is forced at " +
                  FormatRfc3339(task->where().preemption_deadline) +
                  " if it has not released by then): " + task->last_reason;
      } else {
        reason += ": " + task->last_reason;
      }
      break;
    }
    case TaskState::kExited:
      reason = "EXITED: " + task->last_reason;
      break;
  }
  if (job != nullptr && task->state != TaskState::kExited) {
    JobsAhead jobs_ahead = JobsAheadOf(state, *job, kJobsAheadListed);
    explanation.jobs_ahead_count = jobs_ahead.count;
    explanation.jobs_ahead = std::move(jobs_ahead.first);
    if (!explanation.jobs_ahead.empty()) {
      reason += ". " + std::to_string(explanation.jobs_ahead_count) + " job(s) ahead of job " +
                job->job_id + ": ";
      size_t shown = 0;
      for (const auto& ahead : explanation.jobs_ahead) {
        if (shown++ == 5) {
          reason += ", ...";
          break;
        }
        reason += (shown > 1 ? ", " : "") + ahead.job_id + " (priority " +
                  std::to_string(ahead.priority) + ", " + SlotsText(ahead.slots) + ", " +
                  (ahead.running ? "running" : "queued") + ")";
      }
    }
  }
  return explanation;
}

}  // namespace cairn::commands
