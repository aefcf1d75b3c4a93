#include "commands/pai/pai_decider.h"

#include "commands/pai/pai_job.h"
#include "commands/scheduler/capacity.h"
#include "commands/scheduler/scheduler.h"
#include "commands/tasks/task_events.h"
#include "commands/tenancy/tenancy_decider.h"
#include "events/limits.h"

namespace cairn::commands {
namespace {

// Each task of an attempt runs as its job's owner's (or workspace's) linked account.
Status SetRunAsOf(const DecisionState& state, int32_t workspace_id,
                  std::vector<events::Envelope>& submissions) {
  for (auto& submission : submissions) {
    CAIRN_RETURN_IF_ERROR(SetRunAs(state.identity, state.tenancy.WorkspaceAgentUser(workspace_id),
                                   *submission.mutable_task_submitted()->mutable_spec()));
  }
  return Status::Ok();
}

events::Envelope AttemptStarted(const std::string& job_id, int32_t attempt,
                                const std::vector<events::Envelope>& submissions,
                                const std::string& reason) {
  events::Envelope event;
  auto* started = event.mutable_pai_job_attempt_started();
  started->set_job_id(job_id);
  started->set_attempt(attempt);
  for (const auto& submission : submissions) {
    started->add_task_ids(submission.task_submitted().task_id());
  }
  started->set_reason(reason);
  return event;
}

// Every task of the job must fit on one agent of the pool (a task of an OpenPAI job is one
// container); the gang as a whole must fit the pool with every agent idle.
Status CheckJobCanEverFit(const DecisionState& state, const events::PaiJobSubmitted& job) {
  const events::ResourcePoolConfig* pool = state.FindPool(job.resource_pool());
  if (pool == nullptr) return state.NoSuchPool(job.resource_pool());
  PoolCapacity capacity = PoolCapacity::AllIdle(state, *pool);
  if (capacity.agent_count() == 0) return Status::Ok();  // it waits for agents to join
  for (const auto& role : job.task_roles()) {
    auto fit = capacity.FindFit(role.gpu_number(), false);
    if (!fit || fit->parts.size() > 1) {
      return Status::FailedPrecondition(
          "task role " + role.name() + " asks for " + std::to_string(role.gpu_number()) +
          " GPU(s) per task, more than any agent of virtual cluster " + job.virtual_cluster() +
          " has" + (role.gpu_number() == 0 ? " (it takes no zero-slot tasks)" : ""));
    }
  }
  capacity.BeginTrial();
  for (const auto& role : job.task_roles()) {
    for (int32_t i = 0; i < role.task_number(); ++i) {
      auto fit = capacity.FindFit(role.gpu_number(), false);
      if (!fit) {
        capacity.Rollback();
        return Status::FailedPrecondition(
            "the job's tasks together need more than virtual cluster " + job.virtual_cluster() +
            " has (" + std::to_string(capacity.total_slots()) +
            " slots in all); all tasks of a job run at the same time");
      }
      capacity.Take(*fit);
    }
  }
  capacity.Rollback();
  return Status::Ok();
}

}  // namespace

Result<Decision> DecideCommand(const DecisionState& state, const SubmitPaiJob& command,
                               const CommandMeta&) {
  events::PaiJobSubmitted job = command.job;
  // The read side tells an OpenPAI task by its id alone: "pai-<no dot>.<attempt>.<role>.<index>".
  if (!IsSafeId(job.job_id()) || job.job_id().rfind("pai-", 0) != 0 ||
      job.job_id().find('.') != std::string::npos) {
    return Status::InvalidArgument("bad OpenPAI job id '" + job.job_id() + "'");
  }
  if (state.FindJob(job.job_id()) != nullptr || state.FindPaiJob(job.job_id()) != nullptr) {
    return Status::AlreadyExists("job id " + job.job_id() + " already exists");
  }
  if (state.pai_job_by_name.count(job.username() + "/" + job.job_name())) {
    return Status::AlreadyExists("job " + job.job_name() + " already exists for user " +
                                 job.username() + " (job names are unique per user)");
  }
  if (job.task_roles_size() == 0) return Status::InvalidArgument("the job has no task role");
  CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, job.workspace_id()));
  // "default" is the workspace's (or cluster's) default compute pool; any other name is a pool.
  const std::string requested = job.virtual_cluster() == "default" ? "" : job.virtual_cluster();
  if (!requested.empty() && state.FindPool(requested) == nullptr) {
    return Status::NotFound("virtual cluster " + requested + " does not exist");
  }
  CAIRN_ASSIGN_OR_RETURN(std::string pool,
                         ResolveWorkspacePool(state, job.workspace_id(), requested, false));
  job.set_resource_pool(pool);
  CAIRN_RETURN_IF_ERROR(CheckJobCanEverFit(state, job));
  const events::ResourcePoolConfig* config = state.FindPool(pool);
  if (config == nullptr) return state.NoSuchPool(pool);
  events::Resources resources;
  resources.set_resource_pool(pool);
  const int32_t pool_default = config->scheduler().default_priority();
  resources.set_priority(pool_default > 0 ? pool_default : kDefaultPriority);
  resources.set_weight(1);
  auto submissions = pai::AttemptSubmissions(job, 0, resources);
  CAIRN_RETURN_IF_ERROR(SetRunAsOf(state, job.workspace_id(), submissions));
  for (const auto& submission : submissions) {
    if (!IsSafeId(submission.task_submitted().task_id())) {
      return Status::InvalidArgument("bad task id '" + submission.task_submitted().task_id() + "'");
    }
  }
  Decision decision;
  decision.entity_id = job.job_id();
  decision.events.emplace_back().mutable_pai_job_submitted()->CopyFrom(job);
  decision.events.push_back(AttemptStarted(job.job_id(), 0, submissions, "submitted"));
  for (auto& submission : submissions) decision.events.push_back(std::move(submission));
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const StopPaiJob& command,
                               const CommandMeta&) {
  const PaiJobRecord* job = state.FindPaiJob(command.job_id);
  if (job == nullptr) return Status::NotFound("job " + command.job_id + " not found");
  if (job->ended() || job->stop_requested) return NoChange(command.job_id);
  Decision decision;
  decision.entity_id = command.job_id;
  decision.events.emplace_back().mutable_pai_job_stop_requested()->set_job_id(command.job_id);
  for (const auto& member : job->members) {
    const TaskRecord* task = state.FindTask(member.task_id);
    if (task == nullptr || member.exited) continue;
    for (auto& event : KillEventsFor(*task, "the OpenPAI job was stopped", KillBy::kUser)) {
      decision.events.push_back(std::move(event));
    }
  }
  return decision;
}

Status MayRun(const DecisionState& state, const UserRecord& user, const SubmitPaiJob& command) {
  return Authorize(state.tenancy, user, Permission::kCreateNsc, command.job.workspace_id(),
                   "submit an OpenPAI job");
}

Status MayRun(const DecisionState& state, const UserRecord& user, const StopPaiJob& command) {
  const PaiJobRecord* pai_job = state.FindPaiJob(command.job_id);
  if (pai_job == nullptr) return Status::Ok();
  const JobRecord* job = state.FindJob(command.job_id);
  if (job == nullptr) return Status::Ok();
  return AuthorizeJobChange(state, user, *job, "stop OpenPAI job " + pai_job->submitted.job_name());
}

std::vector<events::Envelope> ReactToPaiJobs(const DecisionState& state) {
  std::vector<events::Envelope> reactions;
  for (const std::string& job_id : state.dirty_pai_jobs) {
    const PaiJobRecord* job = state.FindPaiJob(job_id);
    if (job == nullptr || job->ended() || job->outcome.empty()) continue;
    if (!job->all_exited()) {
      const std::string reason = "the attempt ended: " + job->outcome_reason;
      for (const auto& member : job->members) {
        const TaskRecord* task = state.FindTask(member.task_id);
        if (task == nullptr || member.exited || task->kill_requested) continue;
        for (auto& event : KillEventsFor(*task, reason, KillBy::kSystem)) {
          reactions.push_back(std::move(event));
        }
      }
      continue;
    }
    bool retrying = job->outcome == "FAILED" && !job->stop_requested &&
                    job->attempt < job->submitted.retry_count();
    std::string reason = job->outcome_reason;
    std::vector<events::Envelope> submissions;
    if (retrying) {
      const JobRecord* queue_job = state.FindJob(job_id);
      events::Resources resources;
      resources.set_resource_pool(queue_job ? queue_job->resource_pool
                                            : job->submitted.resource_pool());
      resources.set_priority(queue_job ? queue_job->priority : kDefaultPriority);
      resources.set_weight(queue_job ? queue_job->weight : 1);
      resources.set_max_slots(queue_job ? queue_job->max_slots : 0);
      submissions = pai::AttemptSubmissions(job->submitted, job->attempt + 1, resources);
      // The workspace's link may have changed since the job was submitted.
      if (Status run_as = SetRunAsOf(state, job->submitted.workspace_id(), submissions);
          !run_as.ok()) {
        retrying = false;
        reason += "; not retried: " + run_as.message();
      }
    }
    events::Envelope ended_event;
    auto* ended = ended_event.mutable_pai_job_attempt_ended();
    ended->set_job_id(job_id);
    ended->set_attempt(job->attempt);
    ended->set_state(job->outcome);
    ended->set_retrying(retrying);
    ended->set_reason(reason);
    ended->set_trigger_task_role(job->trigger_role);
    ended->set_trigger_task_index(job->trigger_index);
    if (job->trigger_exit_code) ended->set_exit_code(*job->trigger_exit_code);
    reactions.push_back(std::move(ended_event));
    if (!retrying) continue;
    const int32_t next = job->attempt + 1;
    reactions.push_back(AttemptStarted(job_id, next, submissions,
                                       "retry " + std::to_string(next) + " of " +
                                           std::to_string(job->submitted.retry_count()) +
                                           " after: " + job->outcome_reason));
    for (auto& submission : submissions) reactions.push_back(std::move(submission));
  }
  return reactions;
}

}  // namespace cairn::commands
