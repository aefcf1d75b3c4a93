#include "commands/pai/pai_state.h"

namespace cairn::commands {
namespace {

PaiJobRecord* JobOfTask(DecisionState& state, const std::string& task_id) {
  auto job_id = state.pai_task_to_job.find(task_id);
  if (job_id == state.pai_task_to_job.end()) return nullptr;
  auto job = state.pai_jobs.find(job_id->second);
  return job == state.pai_jobs.end() ? nullptr : &job->second;
}

PaiMember* MemberOf(PaiJobRecord& job, const std::string& task_id) {
  return const_cast<PaiMember*>(FindPaiMember(&job, task_id));
}

void Decide(PaiJobRecord& job, const std::string& outcome, const std::string& reason,
            const PaiMember* trigger, std::optional<int32_t> exit_code) {
  job.outcome = outcome;
  job.outcome_reason = reason;
  if (trigger != nullptr) {
    job.trigger_role = job.submitted.task_roles(trigger->role).name();
    job.trigger_index = trigger->index;
  }
  job.trigger_exit_code = exit_code;
}

void ApplyMemberExit(DecisionState& state, const events::TaskExited& exited) {
  PaiJobRecord* job = JobOfTask(state, exited.task_id());
  if (job == nullptr) return;
  PaiMember* member = MemberOf(*job, exited.task_id());
  if (member == nullptr || member->exited) return;
  member->exited = true;
  member->ports.clear();
  state.dirty_pai_jobs.insert(job->submitted.job_id());
  if (!job->outcome.empty()) return;  // the attempt's end was already decided
  const std::string name =
      job->submitted.task_roles(member->role).name() + "[" + std::to_string(member->index) + "]";
  std::optional<int32_t> code;
  if (exited.has_exit_code()) code = exited.exit_code();
  if (!code || *code != 0) {
    Decide(*job, "FAILED", "task " + name + " failed: " + exited.reason(), member, code);
    return;
  }
  job->completed++;
  const int32_t kill_all = job->submitted.kill_all_on_completed_task_number();
  if (kill_all > 0 && job->completed >= kill_all) {
    Decide(*job, "SUCCEEDED",
           std::to_string(job->completed) +
               " task(s) completed, as killAllOnCompletedTaskNumber (" + std::to_string(kill_all) +
               ") asks; the others are stopped",
           member, code);
  } else if (job->all_exited()) {
    Decide(*job, "SUCCEEDED", "every task succeeded", member, code);
  }
}

}  // namespace

const PaiMember* FindPaiMember(const PaiJobRecord* job, const std::string& task_id) {
  if (job == nullptr) return nullptr;
  for (const auto& member : job->members) {
    if (member.task_id == task_id) return &member;
  }
  return nullptr;
}

void ApplyPaiEvent(DecisionState& state, const events::Envelope& event) {
  switch (event.payload_case()) {
    case events::Envelope::kPaiJobSubmitted: {
      const auto& submitted = event.pai_job_submitted();
      auto [it, inserted] = state.pai_jobs.try_emplace(submitted.job_id());
      if (!inserted) return;
      it->second.submitted = submitted;
      state.pai_job_by_name[submitted.username() + "/" + submitted.job_name()] = submitted.job_id();
      state.dirty_pai_jobs.insert(submitted.job_id());
      return;
    }
    case events::Envelope::kPaiJobAttemptStarted: {
      auto it = state.pai_jobs.find(event.pai_job_attempt_started().job_id());
      if (it == state.pai_jobs.end()) return;
      PaiJobRecord& job = it->second;
      job.attempt = event.pai_job_attempt_started().attempt();
      job.members.clear();
      job.completed = 0;
      job.outcome.clear();
      job.outcome_reason.clear();
      job.trigger_role.clear();
      job.trigger_index = -1;
      job.trigger_exit_code.reset();
      // A stop asked for while the previous attempt ended still holds.
      if (job.stop_requested) job.outcome = "STOPPED";
      return;
    }
    case events::Envelope::kTaskSubmitted: {
      const auto& submitted = event.task_submitted();
      if (!submitted.has_pai()) return;
      auto it = state.pai_jobs.find(submitted.pai().job_id());
      if (it == state.pai_jobs.end() || it->second.attempt != submitted.pai().attempt()) return;
      PaiJobRecord& job = it->second;
      PaiMember member;
      member.task_id = submitted.task_id();
      member.index = submitted.pai().task_index();
      for (int32_t role = 0; role < job.submitted.task_roles_size(); ++role) {
        if (job.submitted.task_roles(role).name() == submitted.pai().task_role()) {
          member.role = role;
        }
      }
      job.members.push_back(std::move(member));
      state.pai_task_to_job[submitted.task_id()] = job.submitted.job_id();
      return;
    }
    case events::Envelope::kAllocationAssigned: {
      const auto& assigned = event.allocation_assigned();
      PaiJobRecord* job = JobOfTask(state, assigned.task_id());
      if (job == nullptr) return;
      PaiMember* member = MemberOf(*job, assigned.task_id());
      if (member == nullptr) return;
      member->agent_id = assigned.agent_id();
      member->ports.assign(assigned.ports().begin(), assigned.ports().end());
      state.dirty_pai_jobs.insert(job->submitted.job_id());
      return;
    }
    case events::Envelope::kTaskExited:
      ApplyMemberExit(state, event.task_exited());
      return;
    case events::Envelope::kPaiJobStopRequested: {
      auto it = state.pai_jobs.find(event.pai_job_stop_requested().job_id());
      if (it == state.pai_jobs.end()) return;
      it->second.stop_requested = true;
      if (it->second.outcome.empty()) {
        Decide(it->second, "STOPPED", "stopped by a user", nullptr, std::nullopt);
      }
      state.dirty_pai_jobs.insert(it->first);
      return;
    }
    case events::Envelope::kPaiJobAttemptEnded: {
      const auto& ended = event.pai_job_attempt_ended();
      auto it = state.pai_jobs.find(ended.job_id());
      if (it == state.pai_jobs.end()) return;
      PaiJobRecord& job = it->second;
      for (const auto& member : job.members) state.pai_task_to_job.erase(member.task_id);
      if (ended.retrying()) {
        job.retries++;
      } else {
        job.final_state = ended.state();
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace cairn::commands
