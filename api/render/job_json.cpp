#include "api/render/job_json.h"

#include "api/auth.h"
#include "base/clock.h"
#include "commands/tenancy/tenancy.h"
#include "events/envelope_util.h"

namespace cairn::api {

using nlohmann::json;

// Determined's job types: a trial's job is its experiment.
std::string JobTypeName(events::TaskType type) {
  return type == events::TASK_TYPE_TRIAL ? "TYPE_EXPERIMENT" : "TYPE_" + TaskTypeName(type);
}

std::string JobStateName(views::JobState state) {
  switch (state) {
    case views::JOB_STATE_SCHEDULED:
      return "STATE_SCHEDULED";
    case views::JOB_STATE_SCHEDULED_BACKFILLED:
      return "STATE_SCHEDULED_BACKFILLED";
    default:
      return "STATE_QUEUED";
  }
}

// What the job runs, as Determined names it: an experiment's job is its experiment's id
// (job "experiment-7" -> "7"), any other job its task.
std::string JobEntityId(const views::JobView& job) {
  constexpr std::string_view kExperimentJob = "experiment-";
  if (job.task_type() == events::TASK_TYPE_TRIAL && job.job_id().rfind(kExperimentJob, 0) == 0) {
    return job.job_id().substr(kExperimentJob.size());
  }
  return job.task_id();
}

// Determined's v1Job, with Cairn's queue facts under "cairn".
json JobJson(const views::JobView& job, int user_id) {
  json task_ids = json::array();
  for (const auto& task : job.tasks()) task_ids.push_back(task.task_id());
  return {{"jobId", job.job_id()},
          {"type", JobTypeName(job.task_type())},
          {"name", job.name()},
          {"entityId", JobEntityId(job)},
          {"submissionTime", FormatRfc3339(job.submission_time_unix_micros())},
          {"username", job.user()},
          {"userId", user_id},
          {"resourcePool", job.resource_pool()},
          // Only experiments' trials give their slots back when asked (the seeds' rule).
          {"isPreemptible", job.task_type() == events::TASK_TYPE_TRIAL},
          {"priority", job.priority()},
          {"weight", job.weight()},
          {"requestedSlots", job.requested_slots()},
          {"allocatedSlots", job.allocated_slots()},
          {"workspaceId", WorkspaceOrUncategorized(job.workspace_id())},
          {"progress", 0},
          {"summary", {{"state", JobStateName(job.state())}, {"jobsAhead", job.jobs_ahead()}}},
          {"cairn",
           {{"queuePosition", std::to_string(job.queue_position())},
            {"maxSlots", job.max_slots()},
            {"taskIds", task_ids},
            {"lastQueueChange", job.queue_change_reason()}}}};
}

}  // namespace cairn::api
