#include "projections/job_queue_projector.h"

#include "events/envelope_util.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kJobPrefix = "job/";
constexpr std::string_view kTaskIndexPrefix = "task/";
constexpr std::string_view kQueuePrefix = "queue/";

std::string JobKey(const std::string& job_id) {
  std::string key(kJobPrefix);
  key += job_id;
  return key;
}

std::string TaskIndexKey(const std::string& task_id) {
  std::string key(kTaskIndexPrefix);
  key += task_id;
  return key;
}

std::string QueuePoolPrefix(const std::string& pool) {
  std::string key(kQueuePrefix);
  key += pool;
  key.push_back('\0');
  return key;
}

std::string QueueKey(const views::JobView& job) {
  std::string key = QueuePoolPrefix(job.resource_pool());
  // Flipping the sign bit makes unsigned byte order match signed priority order.
  AppendBigEndian32(&key, static_cast<uint32_t>(job.priority()) ^ 0x80000000u);
  AppendBigEndian64(&key, job.submitted_offset());
  return key;
}

Status OnSubmitted(const Envelope& event, ViewStore& store) {
  const auto& submitted = event.task_submitted();
  if (submitted.job_id().empty() || submitted.task_id().empty()) return Status::Ok();
  const std::string job_key = JobKey(submitted.job_id());
  CAIRN_ASSIGN_OR_RETURN(auto existing, store.Get(job_key));
  if (existing) return Status::Ok();  // the job's first task stands for it in the queue
  ScratchArena scratch;
  views::JobView& job = *scratch.Create<views::JobView>();
  job.set_job_id(submitted.job_id());
  job.set_task_id(submitted.task_id());
  job.set_task_type(submitted.spec().task_type());
  job.set_name(submitted.spec().description());
  job.set_user(submitted.spec().user());
  job.set_resource_pool(submitted.resources().resource_pool());
  job.set_priority(submitted.resources().priority());
  job.set_weight(submitted.resources().weight());
  job.set_submission_time_unix_micros(event.time_unix_micros());
  job.set_submitted_offset(event.offset());
  job.set_requested_slots(submitted.resources().slots());
  job.set_state(views::JOB_STATE_QUEUED);
  CAIRN_RETURN_IF_ERROR(store.PutMessage(job_key, job));
  CAIRN_RETURN_IF_ERROR(store.Put(TaskIndexKey(submitted.task_id()), submitted.job_id()));
  return store.Put(QueueKey(job), submitted.job_id());
}

}  // namespace

Status JobQueueProjector::Apply(const Envelope& event, ViewStore& store) const {
  if (event.has_task_submitted()) return OnSubmitted(event, store);
  // Only a placement or an exit moves a job; other task events leave the queue as it is.
  if (!event.has_allocation_assigned() && !event.has_task_exited()) return Status::Ok();
  const std::string task_id = TaskIdOf(event);
  const std::string index_key = TaskIndexKey(task_id);
  CAIRN_ASSIGN_OR_RETURN(auto job_id, store.Get(index_key));
  if (!job_id) return Status::Ok();
  const std::string job_key = JobKey(*job_id);
  ScratchArena scratch;
  views::JobView& job = *scratch.Create<views::JobView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(job_key, &job));
  if (!exists) return Status::Corruption("job_queue: task index names missing job " + *job_id);
  if (event.has_allocation_assigned()) {
    job.set_state(views::JOB_STATE_SCHEDULED);
    job.set_allocated_slots(event.allocation_assigned().slot_ids_size());
    return store.PutMessage(job_key, job);
  }
  CAIRN_RETURN_IF_ERROR(store.Delete(QueueKey(job)));
  CAIRN_RETURN_IF_ERROR(store.Delete(index_key));
  return store.Delete(job_key);
}

Result<std::vector<views::JobView>> ReadJobQueue(ViewReader& reader, const std::string& pool) {
  std::vector<std::string> job_ids;
  std::vector<std::string> pools;
  const std::string prefix = pool.empty() ? std::string(kQueuePrefix) : QueuePoolPrefix(pool);
  CAIRN_RETURN_IF_ERROR(reader.Scan(prefix, [&](std::string_view key, std::string_view value) {
    std::string_view rest = key.substr(kQueuePrefix.size());
    pools.emplace_back(rest.substr(0, rest.find('\0')));
    job_ids.emplace_back(value);
    return true;
  }));
  std::vector<views::JobView> jobs;
  jobs.reserve(job_ids.size());
  int32_t jobs_ahead = 0;
  for (size_t i = 0; i < job_ids.size(); ++i) {
    if (i > 0 && pools[i] != pools[i - 1]) jobs_ahead = 0;
    views::JobView& job = jobs.emplace_back();
    CAIRN_ASSIGN_OR_RETURN(bool exists, GetMessage(reader, JobKey(job_ids[i]), &job));
    if (!exists)
      return Status::Corruption("job_queue: queue entry names missing job " + job_ids[i]);
    job.set_jobs_ahead(jobs_ahead++);
  }
  return jobs;
}

}  // namespace cairn::projections
