#include "projections/pai_projector.h"

#include "projections/view_reads.h"

namespace cairn::projections {
namespace {

constexpr std::string_view kPaiJobPrefix = "pai/job/";
constexpr std::string_view kNamePrefix = "pai/name/";

std::string JobKey(const std::string& job_id) { return std::string(kPaiJobPrefix) + job_id; }
std::string NameKey(const std::string& username, const std::string& job_name) {
  return std::string(kNamePrefix) + username + "/" + job_name;
}

// The job of an OpenPAI task id ("<job id>.<attempt>.<role>.<index>"), or "" for other tasks.
std::string JobOfTask(const std::string& task_id) {
  if (task_id.compare(0, kPaiJobIdPrefix.size(), kPaiJobIdPrefix) != 0) return "";
  const size_t dot = task_id.find('.');
  return dot == std::string::npos ? "" : task_id.substr(0, dot);
}

views::PaiTaskStatusView* TaskOf(views::PaiJobView& job, const std::string& task_id) {
  for (auto& task : *job.mutable_tasks()) {
    if (task.task_id() == task_id) return &task;
  }
  return nullptr;
}

std::string VariableOf(const events::TaskSpec& spec, std::string_view name) {
  for (const auto& entry : spec.environment_variables()) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return "";
}

// Reads the job `job_id`, lets `change` edit it, and stores it; nothing for an unknown job.
template <typename Change>
Status Update(ViewStore& store, const std::string& job_id, Change&& change) {
  if (job_id.empty()) return Status::Ok();
  views::PaiJobView job;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(JobKey(job_id), &job));
  if (!found) return Status::Ok();
  if (!change(job)) return Status::Ok();
  return store.PutMessage(JobKey(job_id), job);
}

}  // namespace

Status PaiProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kPaiJobSubmitted: {
      const auto& submitted = event.pai_job_submitted();
      views::PaiJobView job;
      *job.mutable_submitted() = submitted;
      job.set_state("WAITING");
      job.set_execution_type("START");
      job.set_created_time_unix_micros(event.time_unix_micros());
      job.set_submitted_offset(event.offset());
      job.set_exit_trigger_task_index(-1);
      CAIRN_RETURN_IF_ERROR(
          store.Put(NameKey(submitted.username(), submitted.job_name()), submitted.job_id()));
      return store.PutMessage(JobKey(submitted.job_id()), job);
    }
    case Envelope::kPaiJobAttemptStarted:
      return Update(store, event.pai_job_attempt_started().job_id(), [&](views::PaiJobView& job) {
        job.set_attempt(event.pai_job_attempt_started().attempt());
        job.clear_tasks();
        if (job.state() != "STOPPED") job.set_state("WAITING");
        return true;
      });
    case Envelope::kTaskSubmitted: {
      const auto& submitted = event.task_submitted();
      if (!submitted.has_pai()) return Status::Ok();
      return Update(store, submitted.pai().job_id(), [&](views::PaiJobView& job) {
        auto* task = job.add_tasks();
        task->set_task_id(submitted.task_id());
        task->set_task_role(submitted.pai().task_role());
        task->set_task_index(submitted.pai().task_index());
        task->set_state("WAITING");
        return true;
      });
    }
    case Envelope::kAllocationAssigned: {
      const auto& assigned = event.allocation_assigned();
      return Update(store, JobOfTask(assigned.task_id()), [&](views::PaiJobView& job) {
        auto* task = TaskOf(job, assigned.task_id());
        if (task == nullptr) return false;
        task->set_agent_id(assigned.agent_id());
        task->set_ip(VariableOf(assigned.spec(), "PAI_CONTAINER_HOST_IP"));
        *task->mutable_ports() = assigned.ports();
        *task->mutable_slot_ids() = assigned.slot_ids();
        return true;
      });
    }
    case Envelope::kTaskStarted: {
      const auto& started = event.task_started();
      return Update(store, JobOfTask(started.task_id()), [&](views::PaiJobView& job) {
        auto* task = TaskOf(job, started.task_id());
        if (task == nullptr) return false;
        task->set_state("RUNNING");
        task->set_started_time_unix_micros(event.time_unix_micros());
        if (job.state() == "WAITING") job.set_state("RUNNING");
        return true;
      });
    }
    case Envelope::kKillRequested: {
      const auto& kill = event.kill_requested();
      return Update(store, JobOfTask(kill.task_id()), [&](views::PaiJobView& job) {
        auto* task = TaskOf(job, kill.task_id());
        if (task == nullptr) return false;
        task->set_kill_requested(true);
        return true;
      });
    }
    case Envelope::kTaskExited: {
      const auto& exited = event.task_exited();
      return Update(store, JobOfTask(exited.task_id()), [&](views::PaiJobView& job) {
        auto* task = TaskOf(job, exited.task_id());
        if (task == nullptr) return false;
        const bool succeeded = exited.has_exit_code() && exited.exit_code() == 0;
        task->set_state(succeeded ? "SUCCEEDED" : task->kill_requested() ? "STOPPED" : "FAILED");
        if (exited.has_exit_code()) task->set_exit_code(exited.exit_code());
        task->set_exit_reason(exited.reason());
        task->set_completed_time_unix_micros(event.time_unix_micros());
        return true;
      });
    }
    case Envelope::kPaiJobStopRequested:
      return Update(store, event.pai_job_stop_requested().job_id(), [&](views::PaiJobView& job) {
        job.set_execution_type("STOP");
        return true;
      });
    case Envelope::kPaiJobAttemptEnded: {
      const auto& ended = event.pai_job_attempt_ended();
      return Update(store, ended.job_id(), [&](views::PaiJobView& job) {
        *job.add_attempts() = ended;
        job.set_exit_reason(ended.reason());
        job.set_exit_trigger_task_role(ended.trigger_task_role());
        job.set_exit_trigger_task_index(ended.trigger_task_index());
        if (ended.has_exit_code()) {
          job.set_exit_code(ended.exit_code());
        } else {
          job.clear_exit_code();
        }
        if (ended.retrying()) {
          job.set_retries(job.retries() + 1);
        } else {
          job.set_state(ended.state());
          job.set_completed_time_unix_micros(event.time_unix_micros());
        }
        return true;
      });
    }
    default:
      return Status::Ok();
  }
}

Result<std::optional<views::PaiJobView>> ReadPaiJob(ViewReader& reader, const std::string& job_id) {
  return ReadView<views::PaiJobView>(reader, JobKey(job_id));
}

Result<std::optional<views::PaiJobView>> ReadPaiJobByName(ViewReader& reader,
                                                          const std::string& username,
                                                          const std::string& job_name) {
  CAIRN_ASSIGN_OR_RETURN(auto job_id, reader.Get(NameKey(username, job_name)));
  if (!job_id) return std::optional<views::PaiJobView>();
  return ReadPaiJob(reader, *job_id);
}

Result<std::vector<views::PaiJobView>> ReadPaiJobs(ViewReader& reader) {
  return ScanViews<views::PaiJobView>(reader, kPaiJobPrefix);
}

}  // namespace cairn::projections
