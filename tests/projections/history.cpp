#include "tests/projections/history.h"

#include "events/envelope_util.h"

namespace cairn::testing {

events::Envelope& History::Stamp(events::Envelope event) {
  const uint64_t offset = events_.size();
  event.set_offset(offset);
  event.set_event_id(id_prefix_ + "-" + std::to_string(offset));
  event.set_time_unix_micros(kStartMicros + static_cast<int64_t>(offset) * 1'000'000);
  event.set_actor("system:test");
  event.set_writer_epoch(epoch_);
  event.set_schema_version(kSchemaVersion);
  events_.push_back(std::move(event));
  return events_.back();
}

events::Envelope& History::Claim(uint64_t epoch) {
  epoch_ = epoch;
  events::Envelope event;
  event.mutable_writer_epoch_claimed()->set_epoch(epoch);
  event.mutable_writer_epoch_claimed()->set_master_id("master-" + std::to_string(epoch));
  return Stamp(std::move(event));
}

events::Envelope& History::Register(const std::string& agent, const std::string& incarnation,
                                    const std::string& pool, int slot_count, bool reconnect) {
  events::Envelope event;
  auto* registered = event.mutable_agent_registered();
  registered->set_agent_id(agent);
  registered->set_incarnation(incarnation);
  registered->set_resource_pool(pool);
  registered->set_slot_count(slot_count);
  for (int i = 0; i < slot_count; ++i) {
    auto* device = registered->add_devices();
    device->set_id(i);
    device->set_brand("artificial");
    device->set_type("cpu");
  }
  registered->set_hostname(agent + ".local");
  registered->set_version("0.1.0");
  registered->set_reconnect(reconnect);
  return Stamp(std::move(event));
}

events::Envelope& History::Disconnect(const std::string& agent, const std::string& incarnation) {
  events::Envelope event;
  event.mutable_agent_disconnected()->set_agent_id(agent);
  event.mutable_agent_disconnected()->set_incarnation(incarnation);
  event.mutable_agent_disconnected()->set_reason("heartbeat missed");
  return Stamp(std::move(event));
}

events::Envelope& History::Enable(const std::string& agent) {
  events::Envelope event;
  event.mutable_agent_enabled()->set_agent_id(agent);
  return Stamp(std::move(event));
}

events::Envelope& History::Disable(const std::string& agent, bool drain) {
  events::Envelope event;
  event.mutable_agent_disabled()->set_agent_id(agent);
  event.mutable_agent_disabled()->set_drain(drain);
  return Stamp(std::move(event));
}

events::Envelope& History::Submit(const std::string& task, const std::string& job,
                                  const std::string& pool, int priority, int slots,
                                  const std::string& description, const std::string& user) {
  events::Envelope event;
  auto* submitted = event.mutable_task_submitted();
  submitted->set_task_id(task);
  submitted->set_job_id(job);
  submitted->mutable_spec()->set_task_type(events::TASK_TYPE_COMMAND);
  submitted->mutable_spec()->add_entrypoint("python3");
  submitted->mutable_spec()->add_entrypoint("train.py");
  submitted->mutable_spec()->set_user(user);
  submitted->mutable_spec()->set_description(description.empty() ? "task " + task : description);
  submitted->mutable_resources()->set_slots(slots);
  submitted->mutable_resources()->set_resource_pool(pool);
  submitted->mutable_resources()->set_priority(priority);
  submitted->mutable_resources()->set_weight(1.0);
  submitted->set_config_json(R"({"entrypoint":"python3 train.py"})");
  return Stamp(std::move(event));
}

events::Envelope& History::Assign(const std::string& task, const std::string& allocation,
                                  const std::string& agent, const std::string& incarnation,
                                  const std::vector<int>& slot_ids, const std::string& reason) {
  events::Envelope event;
  auto* assigned = event.mutable_allocation_assigned();
  assigned->set_task_id(task);
  assigned->set_allocation_id(allocation);
  assigned->set_agent_id(agent);
  assigned->set_agent_incarnation(incarnation);
  for (int slot : slot_ids) assigned->add_slot_ids(slot);
  assigned->set_reason(reason);
  return Stamp(std::move(event));
}

events::Envelope& History::Start(const std::string& task, const std::string& allocation,
                                 const std::string& agent, int pid) {
  events::Envelope event;
  event.mutable_task_started()->set_task_id(task);
  event.mutable_task_started()->set_allocation_id(allocation);
  event.mutable_task_started()->set_agent_id(agent);
  event.mutable_task_started()->set_pid(pid);
  return Stamp(std::move(event));
}

events::Envelope& History::Ready(const std::string& task, const std::string& allocation,
                                 const std::string& agent, const std::string& host, int port) {
  events::Envelope event;
  auto* ready = event.mutable_task_ready();
  ready->set_task_id(task);
  ready->set_allocation_id(allocation);
  ready->set_agent_id(agent);
  ready->set_service_host(host);
  ready->set_service_port(port);
  ready->set_service_user("alice");
  return Stamp(std::move(event));
}

events::Envelope& History::Hold(const std::string& task, bool held) {
  events::Envelope event;
  event.mutable_task_held()->set_task_id(task);
  event.mutable_task_held()->set_held(held);
  event.mutable_task_held()->set_reason(held ? "paused by alice" : "unpaused by alice");
  return Stamp(std::move(event));
}

events::Envelope& History::Kill(const std::string& task, const std::string& allocation,
                                const std::string& agent) {
  events::Envelope event;
  event.mutable_kill_requested()->set_task_id(task);
  event.mutable_kill_requested()->set_allocation_id(allocation);
  event.mutable_kill_requested()->set_agent_id(agent);
  event.mutable_kill_requested()->set_reason("user:alice asked");
  return Stamp(std::move(event));
}

events::Envelope& History::Exit(const std::string& task, const std::string& allocation,
                                const std::string& agent, std::optional<int> exit_code,
                                std::optional<int> signal, const std::string& reason) {
  events::Envelope event;
  auto* exited = event.mutable_task_exited();
  exited->set_task_id(task);
  exited->set_allocation_id(allocation);
  exited->set_agent_id(agent);
  if (exit_code) exited->set_exit_code(*exit_code);
  if (signal) exited->set_signal(*signal);
  exited->set_reason(reason);
  return Stamp(std::move(event));
}

events::Envelope& History::Unknown() {
  events::Envelope base;
  std::string bytes = base.SerializeAsString();
  // Field 1999, length-delimited: a payload added to the oneof after this build (far above the
  // numbers events.proto hands out, so a new event never takes its place).
  const std::string payload = "\x0a\x03new";
  bytes += "\xfa\x7c";
  bytes.push_back(static_cast<char>(payload.size()));
  bytes += payload;
  events::Envelope event;
  event.ParseFromString(bytes);
  return Stamp(std::move(event));
}

events::Envelope& History::SaveTemplate(const std::string& name, const std::string& config_yaml) {
  events::Envelope event;
  auto* saved = event.mutable_template_saved();
  saved->set_name(name);
  saved->set_config_yaml(config_yaml);
  saved->set_workspace_id(1);
  return Stamp(std::move(event));
}

events::Envelope& History::CreateModel(int32_t model_id, const std::string& name,
                                       const std::string& description, int32_t workspace_id) {
  events::Envelope event;
  auto* created = event.mutable_model_created();
  created->set_model_id(model_id);
  created->set_name(name);
  created->set_description(description);
  created->add_labels("production");
  created->set_metadata_json(R"({"framework":"torch"})");
  created->set_workspace_id(workspace_id);
  created->set_user_id(10);
  created->set_username("alice");
  return Stamp(std::move(event));
}

events::Envelope& History::RegisterVersion(int32_t model_id, int32_t version, int32_t version_id,
                                           const std::string& checkpoint_uuid) {
  events::Envelope event;
  auto* registered = event.mutable_model_version_registered();
  registered->set_model_id(model_id);
  registered->set_workspace_id(1);
  registered->set_version(version);
  registered->set_version_id(version_id);
  registered->set_checkpoint_uuid(checkpoint_uuid);
  registered->set_name("v" + std::to_string(version));
  registered->set_metadata_json("{}");
  registered->set_user_id(10);
  registered->set_username("alice");
  return Stamp(std::move(event));
}

events::Envelope& History::UpdateModel(const events::ModelUpdated& updated) {
  events::Envelope event;
  *event.mutable_model_updated() = updated;
  return Stamp(std::move(event));
}

events::Envelope& History::UpdateVersion(const events::ModelVersionUpdated& updated) {
  events::Envelope event;
  *event.mutable_model_version_updated() = updated;
  return Stamp(std::move(event));
}

events::Envelope& History::DeleteVersion(int32_t model_id, int32_t version) {
  events::Envelope event;
  event.mutable_model_version_deleted()->set_model_id(model_id);
  event.mutable_model_version_deleted()->set_version(version);
  return Stamp(std::move(event));
}

events::Envelope& History::DeleteModel(int32_t model_id) {
  events::Envelope event;
  event.mutable_model_deleted()->set_model_id(model_id);
  return Stamp(std::move(event));
}

events::Envelope& History::CreateUser(int32_t user_id, const std::string& username, bool admin) {
  events::Envelope event;
  auto* created = event.mutable_user_created();
  created->set_user_id(user_id);
  created->set_username(username);
  created->set_admin(admin);
  created->set_active(true);
  created->set_password_hash("$argon2id$fake-hash-of-" + username);
  return Stamp(std::move(event));
}

events::Envelope& History::RenameUser(int32_t user_id, const std::string& username) {
  events::Envelope event;
  event.mutable_user_updated()->set_user_id(user_id);
  event.mutable_user_updated()->set_username(username);
  return Stamp(std::move(event));
}

events::Envelope& History::SetUserActive(int32_t user_id, bool active) {
  events::Envelope event;
  event.mutable_user_updated()->set_user_id(user_id);
  event.mutable_user_updated()->set_active(active);
  return Stamp(std::move(event));
}

events::Envelope& History::ChangePassword(int32_t user_id, const std::string& password_hash) {
  events::Envelope event;
  event.mutable_user_password_changed()->set_user_id(user_id);
  event.mutable_user_password_changed()->set_password_hash(password_hash);
  return Stamp(std::move(event));
}

events::Envelope& History::StartSession(const std::string& token_sha256, int32_t user_id,
                                        int64_t expires_unix_micros) {
  events::Envelope event;
  auto* started = event.mutable_session_started();
  started->set_token_sha256(token_sha256);
  started->set_user_id(user_id);
  started->set_expires_unix_micros(expires_unix_micros);
  return Stamp(std::move(event));
}

events::Envelope& History::EndSession(const std::string& token_sha256, int32_t user_id,
                                      const std::string& reason) {
  events::Envelope event;
  auto* ended = event.mutable_session_ended();
  ended->set_token_sha256(token_sha256);
  ended->set_user_id(user_id);
  ended->set_reason(reason);
  return Stamp(std::move(event));
}

events::Envelope& History::FailLogin(const std::string& username) {
  events::Envelope event;
  event.mutable_login_failed()->set_username(username);
  event.mutable_login_failed()->set_reason("wrong password");
  return Stamp(std::move(event));
}

events::Envelope& History::DeleteTemplate(const std::string& name) {
  events::Envelope event;
  event.mutable_template_deleted()->set_name(name);
  return Stamp(std::move(event));
}

events::ResourcePoolsConfigured History::Pools(
    const std::vector<std::pair<std::string, events::SchedulerType>>& pools) {
  events::ResourcePoolsConfigured config;
  for (const auto& [name, type] : pools) {
    auto* pool = config.add_pools();
    pool->set_pool_name(name);
    pool->mutable_scheduler()->set_type(type);
    pool->mutable_scheduler()->set_fitting_policy(events::FITTING_POLICY_BEST);
    pool->mutable_scheduler()->set_preemption(type == events::SCHEDULER_TYPE_PRIORITY);
    pool->mutable_scheduler()->set_default_priority(42);
    pool->set_max_aux_containers_per_agent(100);
  }
  if (!pools.empty()) {
    config.set_default_compute_pool(pools.front().first);
    config.set_default_aux_pool(pools.front().first);
  }
  config.set_source("history");
  config.set_preemption_grace_seconds(60);
  return config;
}

events::Envelope& History::ConfigurePools(const events::ResourcePoolsConfigured& config) {
  events::Envelope event;
  *event.mutable_resource_pools_configured() = config;
  return Stamp(std::move(event));
}

events::Envelope& History::ChangeJob(const std::string& job, int priority, double weight,
                                     const std::string& pool, int64_t queue_position, int max_slots,
                                     const std::string& reason) {
  events::Envelope event;
  auto* changed = event.mutable_job_queue_changed();
  changed->set_job_id(job);
  changed->set_priority(priority);
  changed->set_weight(weight);
  changed->set_resource_pool(pool);
  changed->set_queue_position(queue_position);
  changed->set_max_slots(max_slots);
  changed->set_reason(reason);
  return Stamp(std::move(event));
}

events::AllocationPart History::Part(const std::string& agent, const std::string& incarnation,
                                     const std::vector<int>& slot_ids) {
  events::AllocationPart part;
  part.set_agent_id(agent);
  part.set_agent_incarnation(incarnation);
  for (int slot : slot_ids) part.add_slot_ids(slot);
  return part;
}

events::Envelope& History::AssignGang(const std::string& task, const std::string& allocation,
                                      const std::vector<events::AllocationPart>& parts,
                                      const std::string& reason) {
  events::Envelope event;
  auto* assigned = event.mutable_allocation_assigned();
  assigned->set_task_id(task);
  assigned->set_allocation_id(allocation);
  assigned->set_agent_id(parts.front().agent_id());
  assigned->set_agent_incarnation(parts.front().agent_incarnation());
  *assigned->mutable_slot_ids() = parts.front().slot_ids();
  for (const auto& part : parts) *assigned->add_parts() = part;
  assigned->set_reason(reason);
  return Stamp(std::move(event));
}

events::Envelope& History::Preempt(const std::string& task, const std::string& allocation,
                                   const std::string& agent, const std::string& incarnation,
                                   const std::string& reason, int64_t deadline_unix_micros) {
  events::Envelope event;
  auto* preemption = event.mutable_preemption_requested();
  preemption->set_task_id(task);
  preemption->set_allocation_id(allocation);
  preemption->set_agent_id(agent);
  preemption->set_agent_incarnation(incarnation);
  preemption->set_reason(reason);
  preemption->set_deadline_unix_micros(deadline_unix_micros);
  return Stamp(std::move(event));
}

events::Envelope& History::Release(const std::string& task, const std::string& allocation,
                                   const std::string& reason) {
  events::Envelope event;
  auto* released = event.mutable_allocation_released();
  released->set_task_id(task);
  released->set_allocation_id(allocation);
  released->set_exit_code(0);
  released->set_reason(reason);
  return Stamp(std::move(event));
}

events::Envelope& History::PartExit(const std::string& task, const std::string& allocation,
                                    const std::string& agent, int exit_code) {
  events::Envelope event;
  auto* exited = event.mutable_allocation_part_exited();
  exited->set_task_id(task);
  exited->set_allocation_id(allocation);
  exited->set_agent_id(agent);
  exited->set_exit_code(exit_code);
  return Stamp(std::move(event));
}

events::Envelope& History::CreateExperiment(int64_t experiment, const std::string& job,
                                            const std::string& config_json, bool activate,
                                            const std::string& pool, int priority,
                                            int slots_per_trial) {
  events::Envelope event;
  auto* created = event.mutable_experiment_created();
  created->set_experiment_id(experiment);
  created->set_job_id(job);
  created->set_name("experiment " + std::to_string(experiment));
  created->set_owner("alice");
  created->set_original_config("name: experiment\n");
  created->set_config_json(config_json);
  created->set_seed(static_cast<uint64_t>(experiment) * 7919);
  created->set_context_digest("sha256:" + std::to_string(experiment));
  created->set_context_bytes(1024);
  created->set_activate(activate);
  created->mutable_resources()->set_slots(slots_per_trial);
  created->mutable_resources()->set_resource_pool(pool);
  created->mutable_resources()->set_priority(priority);
  created->mutable_resources()->set_weight(1.0);
  return Stamp(std::move(event));
}

events::Envelope& History::CreateTrial(int64_t experiment, int64_t trial, int request_id,
                                       const std::string& hparams_json, double progress,
                                       const std::string& reason) {
  events::Envelope event;
  auto* created = event.mutable_trial_created();
  created->set_experiment_id(experiment);
  created->set_trial_id(trial);
  created->set_request_id(request_id);
  created->set_hparams_json(hparams_json);
  created->set_reason(reason);
  created->set_progress(progress);
  return Stamp(std::move(event));
}

events::Envelope& History::TrainTo(int64_t experiment, int64_t trial, int64_t length_batches,
                                   double progress, const std::string& reason) {
  events::Envelope event;
  auto* train = event.mutable_trial_train_to();
  train->set_experiment_id(experiment);
  train->set_trial_id(trial);
  train->set_length_batches(length_batches);
  train->set_reason(reason);
  train->set_progress(progress);
  return Stamp(std::move(event));
}

events::Envelope& History::CloseTrial(int64_t experiment, int64_t trial, double progress,
                                      const std::string& reason) {
  events::Envelope event;
  auto* closed = event.mutable_trial_closed();
  closed->set_experiment_id(experiment);
  closed->set_trial_id(trial);
  closed->set_reason(reason);
  closed->set_progress(progress);
  return Stamp(std::move(event));
}

events::Envelope& History::RestartTrial(int64_t experiment, int64_t trial, int restarts,
                                        const std::string& reason) {
  events::Envelope event;
  auto* restarted = event.mutable_trial_restarted();
  restarted->set_experiment_id(experiment);
  restarted->set_trial_id(trial);
  restarted->set_restarts(restarts);
  restarted->set_reason(reason);
  return Stamp(std::move(event));
}

events::Envelope& History::EndTrial(int64_t experiment, int64_t trial,
                                    events::ExperimentState state, double progress,
                                    const std::string& reason) {
  events::Envelope event;
  auto* ended = event.mutable_trial_ended();
  ended->set_experiment_id(experiment);
  ended->set_trial_id(trial);
  ended->set_state(state);
  ended->set_reason(reason);
  ended->set_progress(progress);
  return Stamp(std::move(event));
}

events::Envelope& History::ChangeExperimentState(int64_t experiment, events::ExperimentState state,
                                                 double progress, const std::string& reason) {
  events::Envelope event;
  auto* changed = event.mutable_experiment_state_changed();
  changed->set_experiment_id(experiment);
  changed->set_state(state);
  changed->set_reason(reason);
  changed->set_progress(progress);
  return Stamp(std::move(event));
}

events::Envelope& History::ReportWorkload(int64_t experiment, int64_t trial,
                                          const std::string& allocation, int sequence,
                                          events::WorkloadKind completed, int64_t batches,
                                          int64_t total_batches, const std::string& metrics_json) {
  events::Envelope event;
  auto* reported = event.mutable_trial_workload_reported();
  reported->set_experiment_id(experiment);
  reported->set_trial_id(trial);
  reported->set_allocation_id(allocation);
  reported->set_sequence(sequence);
  reported->set_completed(completed);
  reported->set_batches(batches);
  reported->set_total_batches(total_batches);
  reported->set_metrics_json(metrics_json);
  return Stamp(std::move(event));
}

events::Envelope& History::SaveCheckpoint(int64_t experiment, int64_t trial,
                                          const std::string& uuid, int64_t total_batches,
                                          int64_t size_bytes,
                                          const std::vector<std::pair<std::string, int64_t>>& files,
                                          const std::string& allocation) {
  events::Envelope event;
  auto* saved = event.mutable_checkpoint_saved();
  saved->set_experiment_id(experiment);
  saved->set_trial_id(trial);
  saved->set_uuid(uuid);
  saved->set_total_batches(total_batches);
  saved->set_size_bytes(size_bytes);
  for (const auto& [path, size] : files) (*saved->mutable_resources())[path] = size;
  saved->set_metadata_json(R"({"framework":"pure-python"})");
  saved->set_allocation_id(allocation);
  return Stamp(std::move(event));
}

events::Envelope& History::DeleteCheckpoints(int64_t experiment,
                                             const std::vector<std::string>& uuids,
                                             const std::string& reason) {
  events::Envelope event;
  auto* deleted = event.mutable_checkpoints_deleted();
  deleted->set_experiment_id(experiment);
  for (const auto& uuid : uuids) deleted->add_uuids(uuid);
  deleted->set_reason(reason);
  return Stamp(std::move(event));
}

events::Envelope& History::SubmitRun(const std::string& task, const std::string& job, int64_t trial,
                                     const std::string& pool, int slots) {
  events::Envelope& event = Submit(task, job, pool, 42, slots, "trial " + std::to_string(trial));
  auto* submitted = event.mutable_task_submitted();
  submitted->mutable_spec()->set_task_type(events::TASK_TYPE_TRIAL);
  submitted->set_trial_id(trial);
  return event;
}

Status History::AppendTo(EventLog& log) const {
  constexpr size_t kBatch = 500;
  for (size_t i = 0; i < events_.size(); i += kBatch) {
    std::vector<events::Envelope> batch(
        events_.begin() + static_cast<std::ptrdiff_t>(i),
        events_.begin() + static_cast<std::ptrdiff_t>(std::min(events_.size(), i + kBatch)));
    CAIRN_ASSIGN_OR_RETURN(auto range, log.Append(batch));
    if (range.first != i) {
      return Status::FailedPrecondition("History::AppendTo needs an empty log");
    }
  }
  return Status::Ok();
}

}  // namespace cairn::testing
