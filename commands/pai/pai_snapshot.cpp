#include "commands/pai/pai_snapshot.h"

#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(PaiMember, 6);
CAIRN_SNAPSHOT_COVERS(PaiJobRecord, 12);

void EncodePaiJob(const PaiJobRecord& job, snapshot::PaiJob& out) {
  *out.mutable_submitted() = job.submitted;
  out.set_attempt(job.attempt);
  for (const auto& member : job.members) {
    auto* stored = out.add_members();
    stored->set_task_id(member.task_id);
    stored->set_role(member.role);
    stored->set_index(member.index);
    stored->set_agent_id(member.agent_id);
    for (const auto& ports : member.ports) *stored->add_ports() = ports;
    stored->set_exited(member.exited);
  }
  out.set_completed(job.completed);
  out.set_outcome(job.outcome);
  out.set_outcome_reason(job.outcome_reason);
  out.set_trigger_role(job.trigger_role);
  out.set_trigger_index(job.trigger_index);
  if (job.trigger_exit_code) out.set_trigger_exit_code(*job.trigger_exit_code);
  out.set_stop_requested(job.stop_requested);
  out.set_final_state(job.final_state);
  out.set_retries(job.retries);
}

PaiJobRecord DecodePaiJob(const snapshot::PaiJob& in) {
  PaiJobRecord job;
  job.submitted = in.submitted();
  job.attempt = in.attempt();
  for (const auto& stored : in.members()) {
    PaiMember member;
    member.task_id = stored.task_id();
    member.role = stored.role();
    member.index = stored.index();
    member.agent_id = stored.agent_id();
    member.ports.assign(stored.ports().begin(), stored.ports().end());
    member.exited = stored.exited();
    job.members.push_back(std::move(member));
  }
  job.completed = in.completed();
  job.outcome = in.outcome();
  job.outcome_reason = in.outcome_reason();
  job.trigger_role = in.trigger_role();
  job.trigger_index = in.trigger_index();
  if (in.has_trigger_exit_code()) job.trigger_exit_code = in.trigger_exit_code();
  job.stop_requested = in.stop_requested();
  job.final_state = in.final_state();
  job.retries = in.retries();
  return job;
}

}  // namespace cairn::commands
