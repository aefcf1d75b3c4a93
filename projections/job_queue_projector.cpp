#include "projections/job_queue_projector.h"

#include <algorithm>

#include "events/envelope_util.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kJobPrefix = "job/";
constexpr std::string_view kTaskIndexPrefix = "task/";
constexpr std::string_view kQueuePrefix = "queue/";
constexpr std::string_view kPositionOrderPrefix = "order/";
constexpr std::string_view kPoolCountPrefix = "count/";
constexpr std::string_view kPoolsKey = "config/pools";

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
  // Flipping the sign bits makes unsigned byte order match signed order.
  AppendBigEndian32(&key, static_cast<uint32_t>(job.priority()) ^ 0x80000000u);
  AppendBigEndian64(&key, static_cast<uint64_t>(job.queue_position()) ^ (uint64_t{1} << 63));
  key += job.job_id();
  return key;
}

std::string PositionOrderPoolPrefix(const std::string& pool) {
  std::string key(kPositionOrderPrefix);
  key += pool;
  key.push_back('\0');
  return key;
}

std::string PositionOrderKey(const views::JobView& job) {
  std::string key = PositionOrderPoolPrefix(job.resource_pool());
  AppendBigEndian64(&key, static_cast<uint64_t>(job.queue_position()) ^ (uint64_t{1} << 63));
  key += job.job_id();
  return key;
}

std::string PoolCountKey(const std::string& pool) {
  std::string key(kPoolCountPrefix);
  key += pool;
  key.push_back('\0');
  return key;
}

Status AddToPoolCount(ViewStore& store, const std::string& pool, int64_t delta) {
  const std::string key = PoolCountKey(pool);
  CAIRN_ASSIGN_OR_RETURN(auto stored, store.Get(key));
  int64_t count = stored ? std::stoll(*stored) : 0;
  count += delta;
  if (count <= 0) return store.Delete(key);
  return store.Put(key, std::to_string(count));
}

// A job with live tasks is in its pool's queue under both orders, and counted, so that a page
// of the queue is read from where it starts instead of sorting the whole queue.
Status ListJob(const views::JobView& job, ViewStore& store) {
  CAIRN_RETURN_IF_ERROR(store.Put(QueueKey(job), job.job_id()));
  CAIRN_RETURN_IF_ERROR(store.Put(PositionOrderKey(job), job.job_id()));
  return AddToPoolCount(store, job.resource_pool(), 1);
}

Status UnlistJob(const views::JobView& job, ViewStore& store) {
  CAIRN_RETURN_IF_ERROR(store.Delete(QueueKey(job)));
  CAIRN_RETURN_IF_ERROR(store.Delete(PositionOrderKey(job)));
  return AddToPoolCount(store, job.resource_pool(), -1);
}

// A held (paused) task asks for nothing once its allocation is released; until then it still
// holds its slots.
bool Asking(const views::JobTask& task) { return !task.held() || !task.allocation_id().empty(); }

// Whether the job is in its pool's queue: a live task of it asks for slots or holds some.
bool Listed(const views::JobView& job) {
  return std::any_of(job.tasks().begin(), job.tasks().end(), Asking);
}

// Requested and allocated slots and the state follow from the live tasks that ask or hold.
void Summarize(views::JobView& job) {
  int32_t requested = 0;
  int32_t allocated = 0;
  int running = 0;
  int backfilled = 0;
  for (const auto& task : job.tasks()) {
    if (!Asking(task)) continue;
    requested += task.slots();
    if (task.allocation_id().empty()) continue;
    allocated += task.allocated_slots();
    running++;
    backfilled += task.backfilled();
  }
  job.set_requested_slots(requested);
  job.set_allocated_slots(allocated);
  job.set_state(running == 0            ? views::JOB_STATE_QUEUED
                : backfilled == running ? views::JOB_STATE_SCHEDULED_BACKFILLED
                                        : views::JOB_STATE_SCHEDULED);
}

// The index of the task among the job's live tasks, or -1.
int FindTask(const views::JobView& job, const std::string& task_id) {
  for (int i = 0; i < job.tasks_size(); ++i) {
    if (job.tasks(i).task_id() == task_id) return i;
  }
  return -1;
}

Status OnSubmitted(const Envelope& event, ViewStore& store) {
  const auto& submitted = event.task_submitted();
  if (submitted.task_id().empty()) return Status::Ok();
  // A task submitted without a job is its own job, as in the decision state.
  const std::string& job_id = submitted.job_id().empty() ? submitted.task_id() : submitted.job_id();
  const std::string job_key = JobKey(job_id);
  ScratchArena scratch;
  views::JobView* absent = scratch.Create<views::JobView>();
  CAIRN_ASSIGN_OR_RETURN(views::JobView * found, OpenView(store, job_key, absent));
  const bool exists = found != nullptr;
  views::JobView& job = exists ? *found : *absent;
  if (!exists) {
    // The job's first task sets its parameters and names it; later tasks follow the job.
    const auto& resources = submitted.resources();
    job.set_job_id(job_id);
    job.set_task_id(submitted.task_id());
    job.set_task_type(submitted.spec().task_type());
    job.set_name(submitted.job_name().empty() ? submitted.spec().description()
                                              : submitted.job_name());
    job.set_user(submitted.spec().user());
    job.set_resource_pool(resources.resource_pool());
    job.set_priority(resources.priority());
    job.set_weight(resources.weight());
    job.set_max_slots(resources.max_slots());
    job.set_submission_time_unix_micros(event.time_unix_micros());
    job.set_submitted_offset(event.offset());
    job.set_queue_position(static_cast<int64_t>(event.offset()) * kQueuePositionSpacing);
    job.set_workspace_id(submitted.workspace_id());  // 0: Uncategorized (older events)
  } else if (FindTask(job, submitted.task_id()) >= 0) {
    return Status::Ok();  // a task is submitted once; a repeat changes nothing
  }
  const bool was_listed = Listed(job);
  views::JobTask* task = job.add_tasks();
  task->set_task_id(submitted.task_id());
  task->set_slots(submitted.resources().slots());
  Summarize(job);
  CAIRN_RETURN_IF_ERROR(store.PutMessage(job_key, job));
  CAIRN_RETURN_IF_ERROR(store.Put(TaskIndexKey(submitted.task_id()), job_id));
  if (was_listed) return Status::Ok();
  return ListJob(job, store);
}

// Folds an allocation event of one of the job's tasks; returns whether the job changed.
bool OnTaskEvent(const Envelope& event, views::JobView& job, views::JobTask& task) {
  switch (event.payload_case()) {
    case Envelope::kAllocationAssigned: {
      const auto& assigned = event.allocation_assigned();
      if (!task.allocation_id().empty()) return false;  // only a queued task gets placed
      task.set_allocation_id(assigned.allocation_id());
      task.set_backfilled(assigned.backfilled());
      int32_t allocated = 0;
      for (const auto& part : AllocationPartsOf(assigned)) {
        allocated += part.slot_ids_size();
        if (assigned.parts_size() > 1) {
          task.add_part_agents(part.agent_id());
          task.add_part_slots(part.slot_ids_size());
        }
      }
      task.set_allocated_slots(allocated);
      break;
    }
    case Envelope::kAllocationPartExited: {
      const auto& exited = event.allocation_part_exited();
      if (task.allocation_id().empty() || exited.allocation_id() != task.allocation_id()) {
        return false;
      }
      auto* agents = task.mutable_part_agents();
      auto* slots = task.mutable_part_slots();
      for (int i = 0; i < agents->size(); ++i) {
        if (agents->Get(i) != exited.agent_id()) continue;
        task.set_allocated_slots(task.allocated_slots() - slots->Get(i));
        agents->erase(agents->begin() + i);
        slots->erase(slots->begin() + i);
        Summarize(job);
        return true;
      }
      return false;
    }
    case Envelope::kAllocationReleased: {
      if (task.allocation_id().empty() ||
          event.allocation_released().allocation_id() != task.allocation_id()) {
        return false;
      }
      // Back in the queue, at the job's old position.
      task.clear_allocation_id();
      task.clear_allocated_slots();
      task.clear_backfilled();
      task.clear_part_agents();
      task.clear_part_slots();
      break;
    }
    default:
      return false;
  }
  Summarize(job);
  return true;
}

Status OnJobQueueChanged(const events::JobQueueChanged& changed, ViewStore& store) {
  const std::string job_key = JobKey(changed.job_id());
  ScratchArena scratch;
  CAIRN_ASSIGN_OR_RETURN(views::JobView * found,
                         OpenView(store, job_key, scratch.Create<views::JobView>()));
  if (found == nullptr) return Status::Ok();
  views::JobView& job = *found;
  const bool listed = Listed(job);
  if (listed) CAIRN_RETURN_IF_ERROR(UnlistJob(job, store));
  job.set_priority(changed.priority());
  job.set_weight(changed.weight());
  job.set_resource_pool(changed.resource_pool());
  job.set_queue_position(changed.queue_position());
  job.set_max_slots(changed.max_slots());
  job.set_queue_change_reason(changed.reason());
  CAIRN_RETURN_IF_ERROR(store.PutMessage(job_key, job));
  if (!listed) return Status::Ok();
  return ListJob(job, store);
}

}  // namespace

Status JobQueueProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kTaskSubmitted:
      return OnSubmitted(event, store);
    case Envelope::kJobQueueChanged:
      return OnJobQueueChanged(event.job_queue_changed(), store);
    case Envelope::kExperimentMoved:
    case Envelope::kExperimentUpdated: {
      const bool moved = event.has_experiment_moved();
      if (!moved && !event.experiment_updated().has_name()) return Status::Ok();
      const std::string job_key =
          JobKey(moved ? event.experiment_moved().job_id() : event.experiment_updated().job_id());
      ScratchArena scratch;
      CAIRN_ASSIGN_OR_RETURN(views::JobView * found,
                             OpenView(store, job_key, scratch.Create<views::JobView>()));
      if (found == nullptr) return Status::Ok();
      views::JobView& job = *found;
      if (moved) {
        job.set_workspace_id(event.experiment_moved().workspace_id());
      } else {
        job.set_name(event.experiment_updated().name());
      }
      return store.PutMessage(job_key, job);
    }
    case Envelope::kResourcePoolsConfigured: {
      std::string bytes;
      SerializeDeterministic(event.resource_pools_configured(), &bytes);
      return store.Put(kPoolsKey, bytes);
    }
    case Envelope::kAllocationAssigned:
    case Envelope::kAllocationPartExited:
    case Envelope::kAllocationReleased:
    case Envelope::kTaskExited:
    case Envelope::kTaskHeld:
      break;
    default:
      return Status::Ok();  // starts, kills and preemption requests leave the queue as it is
  }
  const std::string& task_id = TaskIdOf(event);
  const std::string index_key = TaskIndexKey(task_id);
  CAIRN_ASSIGN_OR_RETURN(auto job_id, store.Get(index_key));
  if (!job_id) return Status::Ok();
  const std::string job_key = JobKey(*job_id);
  ScratchArena scratch;
  CAIRN_ASSIGN_OR_RETURN(views::JobView * found,
                         OpenView(store, job_key, scratch.Create<views::JobView>()));
  if (found == nullptr)
    return Status::Corruption("job_queue: task index names missing job " + *job_id);
  views::JobView& job = *found;
  const int task = FindTask(job, task_id);
  if (task < 0) {
    return Status::Corruption("job_queue: job " + *job_id + " lacks its task " + task_id);
  }
  const bool was_listed = Listed(job);
  if (event.has_task_exited()) {
    // The task ended: it leaves its job.
    CAIRN_RETURN_IF_ERROR(store.Delete(index_key));
    job.mutable_tasks()->erase(job.mutable_tasks()->begin() + task);
  } else if (event.has_task_held()) {
    views::JobTask& held = *job.mutable_tasks(task);
    if (held.held() == event.task_held().held()) return Status::Ok();
    held.set_held(event.task_held().held());
  } else if (!OnTaskEvent(event, job, *job.mutable_tasks(task))) {
    return Status::Ok();
  }
  // A job without live tasks that are not held leaves the queue, and comes back with one.
  const bool listed = Listed(job);
  if (was_listed && !listed) CAIRN_RETURN_IF_ERROR(UnlistJob(job, store));
  if (!was_listed && listed) CAIRN_RETURN_IF_ERROR(ListJob(job, store));
  // An experiment may submit more trials later: its job keeps its priority and position. Any
  // other job has exactly one task, so nothing of it is kept once it ended.
  if (job.tasks_size() == 0 && job.task_type() != events::TASK_TYPE_TRIAL) {
    return store.Delete(job_key);
  }
  Summarize(job);
  return store.PutMessage(job_key, job);
}

namespace {

// Which pools order their queue by priority first: those whose recorded scheduler is `priority`.
class PriorityPools {
 public:
  static Result<PriorityPools> Read(ViewReader& reader) {
    PriorityPools read;
    CAIRN_RETURN_IF_ERROR(GetMessage(reader, kPoolsKey, &read.pools_).status());
    return read;
  }
  bool Contains(const std::string& name) const {
    for (const auto& configured : pools_.pools()) {
      if (configured.pool_name() == name) {
        return configured.scheduler().type() == events::SCHEDULER_TYPE_PRIORITY;
      }
    }
    return false;  // no recorded configuration: the default pool is fair share
  }

 private:
  events::ResourcePoolsConfigured pools_;
};

}  // namespace

Result<std::vector<std::pair<std::string, size_t>>> ReadJobQueueLengths(ViewReader& reader,
                                                                        const std::string& pool) {
  std::vector<std::pair<std::string, size_t>> counts;
  const std::string count_prefix =
      pool.empty() ? std::string(kPoolCountPrefix) : PoolCountKey(pool);
  Status bad_count;
  CAIRN_RETURN_IF_ERROR(reader.Scan(count_prefix, [&](std::string_view key,
                                                      std::string_view value) {
    std::string name(key.substr(kPoolCountPrefix.size()));
    name.pop_back();  // the '\0' that ends it
    size_t count = 0;
    for (char digit : value) {
      if (digit < '0' || digit > '9') {
        bad_count = Status::Corruption("job_queue: the count of pool " + name + " is not a number");
        return false;
      }
      count = count * 10 + static_cast<size_t>(digit - '0');
    }
    counts.emplace_back(std::move(name), count);
    return true;
  }));
  CAIRN_RETURN_IF_ERROR(bad_count);
  return counts;
}

Result<JobQueuePage> ReadJobQueuePage(ViewReader& reader, const std::string& pool, size_t offset,
                                      size_t limit, bool descending) {
  CAIRN_ASSIGN_OR_RETURN(PriorityPools priority_pools, PriorityPools::Read(reader));
  CAIRN_ASSIGN_OR_RETURN(auto counts, ReadJobQueueLengths(reader, pool));
  JobQueuePage page;
  for (const auto& [name, count] : counts) page.total += count;
  // Descending is ascending read from the other end, then reversed.
  size_t first = std::min(offset, page.total);
  size_t wanted = limit == 0 ? page.total - first : std::min(limit, page.total - first);
  if (descending) first = page.total - first - wanted;

  struct Entry {
    std::string job_id;
    int32_t jobs_ahead;
  };
  std::vector<Entry> entries;
  entries.reserve(wanted);
  size_t skip = first;
  for (const auto& [name, count] : counts) {
    if (entries.size() == wanted) break;
    if (skip >= count) {
      skip -= count;  // the whole pool is before the page
      continue;
    }
    const std::string prefix =
        priority_pools.Contains(name) ? QueuePoolPrefix(name) : PositionOrderPoolPrefix(name);
    size_t index = 0;
    CAIRN_RETURN_IF_ERROR(reader.Scan(prefix, [&](std::string_view, std::string_view job_id) {
      if (index++ < skip) return true;
      entries.push_back({std::string(job_id), static_cast<int32_t>(index - 1)});
      return entries.size() < wanted;
    }));
    skip = 0;
  }
  std::vector<std::string> keys;
  keys.reserve(entries.size());
  for (const auto& entry : entries) keys.push_back(JobKey(entry.job_id));
  std::vector<bool> found;
  CAIRN_RETURN_IF_ERROR(GetMessages(reader, keys, &page.jobs, &found));
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!found[i]) {
      return Status::Corruption("job_queue: queue entry names missing job " + entries[i].job_id);
    }
    page.jobs[i].set_jobs_ahead(entries[i].jobs_ahead);
  }
  if (descending) std::reverse(page.jobs.begin(), page.jobs.end());
  return page;
}

Result<std::vector<views::JobView>> ReadJobQueue(ViewReader& reader, const std::string& pool) {
  CAIRN_ASSIGN_OR_RETURN(PriorityPools priority_pools, PriorityPools::Read(reader));
  auto by_priority = [&](const std::string& name) { return priority_pools.Contains(name); };

  std::vector<std::string> job_ids;
  const std::string prefix = pool.empty() ? std::string(kQueuePrefix) : QueuePoolPrefix(pool);
  CAIRN_RETURN_IF_ERROR(reader.Scan(prefix, [&](std::string_view, std::string_view value) {
    job_ids.emplace_back(value);
    return true;
  }));
  std::vector<views::JobView> jobs(job_ids.size());
  for (size_t i = 0; i < job_ids.size(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(bool exists, GetMessage(reader, JobKey(job_ids[i]), &jobs[i]));
    if (!exists) {
      return Status::Corruption("job_queue: queue entry names missing job " + job_ids[i]);
    }
  }
  // Key order is (pool, priority, position, job id): right for priority pools; the others are
  // re-sorted without the priority, pool by pool.
  for (size_t begin = 0; begin < jobs.size();) {
    size_t end = begin;
    while (end < jobs.size() && jobs[end].resource_pool() == jobs[begin].resource_pool()) ++end;
    if (!by_priority(jobs[begin].resource_pool())) {
      std::sort(jobs.begin() + static_cast<std::ptrdiff_t>(begin),
                jobs.begin() + static_cast<std::ptrdiff_t>(end),
                [](const views::JobView& a, const views::JobView& b) {
                  if (a.queue_position() != b.queue_position()) {
                    return a.queue_position() < b.queue_position();
                  }
                  return a.job_id() < b.job_id();
                });
    }
    for (size_t i = begin; i < end; ++i) jobs[i].set_jobs_ahead(static_cast<int32_t>(i - begin));
    begin = end;
  }
  return jobs;
}

}  // namespace cairn::projections
