#include "commands/tasks/task_snapshot.h"

#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(TaskRecord, 24);
CAIRN_SNAPSHOT_COVERS(Placement, 6);
CAIRN_SNAPSHOT_COVERS(JobRecord, 15);

void EncodeTask(const TaskRecord& task, RecordScratch& scratch) {
  using Task = snapshot::Task;
  scratch.bytes.clear();
  WireAppender out(scratch.bytes);
  out.String(Task::kTaskIdFieldNumber, task.task_id);
  out.String(Task::kJobIdFieldNumber, task.job_id());
  // The spec as submitted is a TaskSpec's bytes already, its kind and preemptibility included
  // (ApplyTaskSubmitted and DecodeTask keep them so); an exited task keeps only those two.
  if (!task.packed_spec.empty()) {
    out.Delimited(Task::kSpecFieldNumber, task.packed_spec);
  } else {
    std::string spec;
    WireAppender spec_out(spec);
    spec_out.Int64(events::TaskSpec::kTaskTypeFieldNumber, task.task_type);
    spec_out.Bool(events::TaskSpec::kPreemptibleFieldNumber, task.spec_preemptible);
    out.Delimited(Task::kSpecFieldNumber, spec);
  }
  out.SubMessage(Task::kResourcesFieldNumber, task.resources, scratch.resources);
  out.Int64(Task::kStateFieldNumber, static_cast<int32_t>(task.state));
  out.UInt64(Task::kSubmittedOffsetFieldNumber, task.submitted_offset);
  out.Int64(Task::kSubmittedTimeFieldNumber, task.submitted_time);
  out.Int64(Task::kAllocationCountFieldNumber, task.allocation_count);
  out.String(Task::kAllocationIdFieldNumber, task.allocation_id);
  const Placement& where = task.where();
  out.String(Task::kAllocationPoolFieldNumber, where.allocation_pool);
  for (const auto& part : where.parts) out.SubMessage(Task::kPartsFieldNumber, part, scratch.part);
  for (const auto& agent : where.parts_exited) {
    out.Delimited(Task::kPartsExitedFieldNumber, agent);
  }
  out.String(Task::kAgentIdFieldNumber, task.agent_id);
  out.String(Task::kAgentIncarnationFieldNumber, where.agent_incarnation);
  out.Packed(Task::kSlotIdsFieldNumber, where.slot_ids);
  out.Bool(Task::kStartedFieldNumber, task.started);
  out.Bool(Task::kKillRequestedFieldNumber, task.kill_requested);
  out.Bool(Task::kKillByUserFieldNumber, task.kill_by_user);
  out.Bool(Task::kBackfilledFieldNumber, task.backfilled);
  out.Bool(Task::kPreemptingFieldNumber, task.preempting);
  out.Int64(Task::kPreemptionDeadlineFieldNumber, where.preemption_deadline);
  out.String(Task::kLastReasonFieldNumber, task.last_reason);
  out.Int64(Task::kTrialIdFieldNumber, task.trial_id);
  out.Bool(Task::kReadyFieldNumber, task.ready);
  out.Bool(Task::kHeldFieldNumber, task.held);
  for (const auto& agent : task.more_agents) out.Delimited(Task::kMoreAgentsFieldNumber, agent);
}

TaskRecord DecodeTask(snapshot::Task& in) {
  TaskRecord task;
  task.task_id = Take(in.mutable_task_id());
  task.resources.Swap(in.mutable_resources());
  task.state = static_cast<TaskState>(in.state());
  task.task_type = in.spec().task_type();
  task.spec_preemptible = in.spec().preemptible();
  // An exited task's spec is what ForgetLiveDetails kept: its kind and preemptibility.
  if (task.state != TaskState::kExited) in.spec().SerializeToString(&task.packed_spec);
  task.submitted_offset = in.submitted_offset();
  task.submitted_time = in.submitted_time();
  task.allocation_count = in.allocation_count();
  task.allocation_id = Take(in.mutable_allocation_id());
  // Only live work has a placement: history's tasks decode without one, as they folded.
  if (!in.allocation_pool().empty() || in.parts_size() > 0 || in.parts_exited_size() > 0 ||
      !in.agent_incarnation().empty() || in.slot_ids_size() > 0 || in.preemption_deadline() != 0) {
    Placement& placement = task.place();
    placement.allocation_pool = Take(in.mutable_allocation_pool());
    placement.parts.resize(static_cast<size_t>(in.parts_size()));
    for (int i = 0; i < in.parts_size(); ++i) placement.parts[i].Swap(in.mutable_parts(i));
    placement.parts_exited.insert(in.parts_exited().begin(), in.parts_exited().end());
    placement.agent_incarnation = Take(in.mutable_agent_incarnation());
    placement.slot_ids.assign(in.slot_ids().begin(), in.slot_ids().end());
    placement.preemption_deadline = in.preemption_deadline();
  }
  task.more_agents.assign(in.more_agents().begin(), in.more_agents().end());
  task.agent_id = Take(in.mutable_agent_id());
  task.started = in.started();
  task.ready = in.ready();
  task.held = in.held();
  task.kill_requested = in.kill_requested();
  task.kill_by_user = in.kill_by_user();
  task.backfilled = in.backfilled();
  task.preempting = in.preempting();
  task.last_reason = Take(in.mutable_last_reason());
  task.trial_id = in.trial_id();
  return task;
}

void EncodeJob(const JobRecord& job, TasksNamed named, const std::vector<uint32_t>& task_indexes,
               RecordScratch& scratch) {
  using Job = snapshot::Job;
  scratch.bytes.clear();
  WireAppender out(scratch.bytes);
  out.String(Job::kJobIdFieldNumber, job.job_id);
  out.Int64(Job::kTypeFieldNumber, job.type);
  out.String(Job::kResourcePoolFieldNumber, job.resource_pool);
  out.Int64(Job::kPriorityFieldNumber, job.priority);
  out.Double(Job::kWeightFieldNumber, job.weight);
  out.Int64(Job::kMaxSlotsFieldNumber, job.max_slots);
  out.Int64(Job::kQueuePositionFieldNumber, job.queue_position);
  out.UInt64(Job::kSubmittedOffsetFieldNumber, job.submitted_offset);
  out.Int64(Job::kSubmittedTimeFieldNumber, job.submitted_time);
  out.String(Job::kUserFieldNumber, job.user);
  out.Int64(Job::kWorkspaceIdFieldNumber, job.workspace_id);
  out.Bool(Job::kOpenFieldNumber, job.open);
  out.Packed(Job::kTasksFieldNumber, task_indexes);
  if (named == TasksNamed::kById) {
    for (const TaskRecord* task : job.tasks) out.Delimited(Job::kTaskIdsFieldNumber, task->task_id);
  }
}

JobRecord DecodeJob(snapshot::Job& in) {
  JobRecord job;
  job.job_id = Take(in.mutable_job_id());
  job.type = in.type();
  job.resource_pool = Take(in.mutable_resource_pool());
  job.priority = in.priority();
  job.weight = in.weight();
  job.max_slots = in.max_slots();
  job.queue_position = in.queue_position();
  job.submitted_offset = in.submitted_offset();
  job.submitted_time = in.submitted_time();
  job.user = Take(in.mutable_user());
  job.workspace_id = in.workspace_id();
  job.open = in.open();
  return job;
}

}  // namespace cairn::commands
