#include "commands/decision_snapshot.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "base/field_count.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

// A field added to one of these records must be added to the snapshot (or derived on decoding)
// and to tests/commands/snapshot_coverage_test.cpp, which fills every field and round-trips it:
// these counts make the build say so, on every platform (base/field_count.h). Update them with
// the snapshot's fields, and bump kDecisionSnapshotFormat when an old snapshot would decode to a
// different meaning. TenancyState is left out: it has a constructor (it holds the built-in
// workspace and project), so it is no aggregate and FieldCount cannot count it; the coverage test
// unpacks it with a structured binding instead, which stops compiling when a field is added.
#define CAIRN_SNAPSHOT_COVERS(Record, fields)     \
  static_assert(FieldCount<Record>() == (fields), \
                #Record " changed: update commands/decision_snapshot and its coverage test")
CAIRN_SNAPSHOT_COVERS(TaskRecord, 23);
CAIRN_SNAPSHOT_COVERS(Placement, 6);
CAIRN_SNAPSHOT_COVERS(JobRecord, 15);
CAIRN_SNAPSHOT_COVERS(AgentRecord, 12);
CAIRN_SNAPSHOT_COVERS(ExperimentRecord, 20);
CAIRN_SNAPSHOT_COVERS(SearcherInput, 4);
CAIRN_SNAPSHOT_COVERS(experiments::SearcherOp, 5);
CAIRN_SNAPSHOT_COVERS(TrialRecord, 24);
CAIRN_SNAPSHOT_COVERS(CheckpointRecord, 6);
CAIRN_SNAPSHOT_COVERS(DecisionState::AllocationHolding, 2);
CAIRN_SNAPSHOT_COVERS(DecisionState::IdempotentCommand, 5);
CAIRN_SNAPSHOT_COVERS(DecisionState, 26);
CAIRN_SNAPSHOT_COVERS(UserRecord, 6);
CAIRN_SNAPSHOT_COVERS(SessionRecord, 2);
CAIRN_SNAPSHOT_COVERS(IdentityState, 5);
CAIRN_SNAPSHOT_COVERS(WorkspaceRecord, 8);
CAIRN_SNAPSHOT_COVERS(ProjectRecord, 7);
CAIRN_SNAPSHOT_COVERS(ModelVersionRecord, 3);
CAIRN_SNAPSHOT_COVERS(ModelRecord, 7);
CAIRN_SNAPSHOT_COVERS(RegistryState, 5);
CAIRN_SNAPSHOT_COVERS(PaiMember, 6);
CAIRN_SNAPSHOT_COVERS(PaiJobRecord, 12);
#undef CAIRN_SNAPSHOT_COVERS

namespace {

using experiments::SearcherOp;
using google::protobuf::internal::WireFormatLite;

// A decoded string's contents, moved out of the message being decoded.
std::string Take(std::string* field) { return std::move(*field); }

// Protobuf's wire format appended to a string, for the records a snapshot holds by the hundred
// thousand: a task's and a job's fields are written straight from the record, where filling a
// snapshot::Task first copied every string into the message and parsed the packed spec (at 100k
// queued that was most of a write-side snapshot's time). The bytes are exactly those the
// generated serializer gives for the same message (fields in number order, proto3 defaults
// left out, packed repeated scalars): GeneratedHistory.StreamedBytesAreTheWholeMessagesBytes
// and HandWrittenRecordsAreTheGeneratedBytes compare them.
class WireAppender {
 public:
  explicit WireAppender(std::string& out) : out_(out) {}

  void String(int field, std::string_view value) {
    if (!value.empty()) Delimited(field, value);
  }
  // A length-delimited field written even when empty (a sub-message that is present).
  void Delimited(int field, std::string_view value) {
    Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    Varint(value.size());
    out_.append(value);
  }
  void UInt64(int field, uint64_t value) {
    if (value == 0) return;
    Tag(field, WireFormatLite::WIRETYPE_VARINT);
    Varint(value);
  }
  // int32 and int64 alike: a negative value is sign-extended to ten bytes, as protobuf writes it.
  void Int64(int field, int64_t value) { UInt64(field, static_cast<uint64_t>(value)); }
  void Bool(int field, bool value) { UInt64(field, value ? 1 : 0); }
  void Double(int field, double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (bits == 0) return;  // protobuf writes -0.0, which is not all zero bits
    Tag(field, WireFormatLite::WIRETYPE_FIXED64);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(bits >> (8 * i)));
  }
  // A packed repeated int32 or uint32 (proto3's default encoding for repeated scalars).
  template <typename Integers>
  void Packed(int field, const Integers& values) {
    if (values.empty()) return;
    size_t length = 0;
    for (auto value : values) length += VarintSize(Widened(value));
    Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    Varint(length);
    for (auto value : values) Varint(Widened(value));
  }
  // A sub-message of the events' schema, serialized by protobuf from `scratch`, a copy: the
  // record's own message is never asked its size, which would write its cached size into the
  // record (a forked snapshot's child would copy the page).
  template <typename Message>
  void SubMessage(int field, const Message& message, Message& scratch) {
    scratch = message;
    const size_t size = scratch.ByteSizeLong();
    Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    Varint(size);
    const size_t at = out_.size();
    out_.resize(at + size);
    scratch.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out_.data() + at));
  }

 private:
  template <typename Integer>
  static uint64_t Widened(Integer value) {
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  }
  static size_t VarintSize(uint64_t value) {
    size_t size = 1;
    while (value >= 0x80) {
      value >>= 7;
      ++size;
    }
    return size;
  }
  void Tag(int field, WireFormatLite::WireType type) {
    Varint(static_cast<uint64_t>(WireFormatLite::MakeTag(field, type)));
  }
  void Varint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>(value | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }

  std::string& out_;
};

// Reused across a snapshot's records: their buffers keep their capacity.
struct RecordScratch {
  std::string bytes;
  events::Resources resources;
  events::AllocationPart part;
};

// The task's snapshot::Task, appended to scratch.bytes (cleared first).
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
  task.kill_requested = in.kill_requested();
  task.kill_by_user = in.kill_by_user();
  task.backfilled = in.backfilled();
  task.preempting = in.preempting();
  task.last_reason = Take(in.mutable_last_reason());
  task.trial_id = in.trial_id();
  return task;
}

// How a job names its tasks: by their indexes in the snapshot's list of tasks (a whole
// snapshot), or by their ids (a delta, whose tasks may be in the snapshots before it).
enum class TasksNamed { kByIndex, kById };

// The job's snapshot::Job, appended to scratch.bytes (cleared first).
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

void EncodeAgent(const AgentRecord& agent, snapshot::Agent& out) {
  out.set_agent_id(agent.agent_id);
  out.set_incarnation(agent.incarnation);
  out.set_resource_pool(agent.resource_pool);
  out.set_slot_count(agent.slot_count);
  out.set_connected(agent.connected);
  out.set_enabled(agent.enabled);
  out.set_draining(agent.draining);
  for (int32_t slot : agent.used_slots) out.add_used_slots(slot);
  out.set_zero_slot_containers(agent.zero_slot_containers);
  for (const auto& allocation : agent.allocations) out.add_allocations(allocation);
  out.set_registered_offset(agent.registered_offset);
  out.set_address(agent.address);
}

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

AgentRecord DecodeAgent(const snapshot::Agent& in) {
  AgentRecord agent;
  agent.agent_id = in.agent_id();
  agent.incarnation = in.incarnation();
  agent.resource_pool = in.resource_pool();
  agent.slot_count = in.slot_count();
  agent.connected = in.connected();
  agent.enabled = in.enabled();
  agent.draining = in.draining();
  agent.used_slots.insert(in.used_slots().begin(), in.used_slots().end());
  agent.zero_slot_containers = in.zero_slot_containers();
  agent.allocations.insert(in.allocations().begin(), in.allocations().end());
  agent.registered_offset = in.registered_offset();
  agent.address = in.address();
  return agent;
}

void EncodeExperiment(const ExperimentRecord& experiment, snapshot::Experiment& out) {
  out.set_experiment_id(experiment.experiment_id);
  out.set_name(experiment.name);
  out.set_job_id(experiment.job_id);
  out.set_owner(experiment.owner);
  out.set_workspace_id(experiment.workspace_id);
  out.set_project_id(experiment.project_id);
  out.set_context_digest(experiment.context_digest);
  out.set_state(experiment.state);
  out.set_slots_per_trial(experiment.slots_per_trial);
  out.set_has_searcher(experiment.searcher != nullptr);
  out.set_searcher_config_json(experiment.searcher_config_json);
  out.set_searcher_seed(experiment.searcher_seed);
  for (const auto& input : experiment.searcher_inputs) {
    auto* stored = out.add_searcher_inputs();
    stored->set_kind(static_cast<int32_t>(input.kind));
    stored->set_request_id(input.request_id);
    stored->set_batches(input.batches);
    stored->set_metric(input.metric);
  }
  for (const auto& op : experiment.pending_ops) {
    auto* stored = out.add_pending_ops();
    stored->set_kind(static_cast<int32_t>(op.kind));
    stored->set_request_id(op.request_id);
    stored->set_hparams_json(op.hparams.dump());
    stored->set_length_batches(op.length_batches);
    stored->set_reason(op.reason);
  }
  for (const auto& [request_id, trial_id] : experiment.trial_by_request) {
    auto* stored = out.add_trial_by_request();
    stored->set_request_id(request_id);
    stored->set_trial_id(trial_id);
  }
  for (int64_t trial_id : experiment.trial_ids) out.add_trial_ids(trial_id);
  out.set_config_error(experiment.config_error);
  out.set_archived(experiment.archived);
  out.set_deleted(experiment.deleted);
}

// Parsed configurations by their JSON: experiments made from the same configuration share one
// (they are immutable), and each distinct one is parsed once per decoding.
using ConfigCache =
    std::unordered_map<std::string, std::shared_ptr<const experiments::ExperimentConfig>>;

Result<ExperimentRecord> DecodeExperiment(snapshot::Experiment& in, ConfigCache& configs) {
  ExperimentRecord experiment;
  experiment.experiment_id = in.experiment_id();
  experiment.name = in.name();
  experiment.job_id = in.job_id();
  experiment.owner = in.owner();
  experiment.workspace_id = in.workspace_id();
  experiment.project_id = in.project_id();
  experiment.context_digest = in.context_digest();
  experiment.state = in.state();
  experiment.slots_per_trial = in.slots_per_trial();
  experiment.searcher_config_json = in.searcher_config_json();
  experiment.searcher_seed = in.searcher_seed();
  if (in.has_searcher()) {
    auto& config = configs[in.searcher_config_json()];
    if (config == nullptr) {
      CAIRN_ASSIGN_OR_RETURN(auto parsed,
                             experiments::ParseExperimentConfig(in.searcher_config_json()));
      config = std::make_shared<const experiments::ExperimentConfig>(std::move(parsed));
    }
    CAIRN_ASSIGN_OR_RETURN(experiment.searcher,
                           experiments::NewSearcher(*config, in.searcher_seed()));
    experiment.config = config;
    // Its operations were recorded or are pending below: the calls only bring it where it was.
    experiment.searcher->Start();
    for (const auto& input : in.searcher_inputs()) {
      if (input.kind() < 0 || input.kind() > static_cast<int>(SearcherInput::Kind::kExitedEarly)) {
        return Status::InvalidArgument("unknown searcher input kind " +
                                       std::to_string(input.kind()));
      }
      FeedSearcher(experiment, {static_cast<SearcherInput::Kind>(input.kind()), input.request_id(),
                                input.batches(), input.metric()});
    }
  }
  for (const auto& op : in.pending_ops()) {
    SearcherOp decoded;
    if (op.kind() < 0 || op.kind() > static_cast<int>(SearcherOp::Kind::kShutdown)) {
      return Status::InvalidArgument("unknown searcher operation kind " +
                                     std::to_string(op.kind()));
    }
    decoded.kind = static_cast<SearcherOp::Kind>(op.kind());
    decoded.request_id = op.request_id();
    decoded.hparams = nlohmann::json::parse(op.hparams_json(), nullptr, false);
    if (decoded.hparams.is_discarded()) {
      return Status::InvalidArgument("a pending searcher operation's hyperparameters do not parse");
    }
    decoded.length_batches = op.length_batches();
    decoded.reason = op.reason();
    experiment.pending_ops.push_back(std::move(decoded));
  }
  for (const auto& entry : in.trial_by_request()) {
    experiment.trial_by_request[entry.request_id()] = entry.trial_id();
  }
  experiment.trial_ids.assign(in.trial_ids().begin(), in.trial_ids().end());
  experiment.config_error = in.config_error();
  experiment.archived = in.archived();
  experiment.deleted = in.deleted();
  return experiment;
}

void EncodeTrial(const TrialRecord& trial, snapshot::Trial& out) {
  out.set_trial_id(trial.trial_id);
  out.set_experiment_id(trial.experiment_id);
  out.set_request_id(trial.request_id);
  out.set_hparams_json(trial.hparams_json);
  out.set_state(trial.state);
  out.set_train_to(trial.train_to);
  out.set_closed(trial.closed);
  out.set_validated_at(trial.validated_at);
  for (const auto& [batches, value] : trial.searcher_metric) {
    auto* metric = out.add_searcher_metric();
    metric->set_batches(batches);
    metric->set_value(value);
  }
  out.set_latest_checkpoint(trial.latest_checkpoint);
  out.set_checkpoint_batches(trial.checkpoint_batches);
  for (const auto& uuid : trial.checkpoints) out.add_checkpoints(uuid);
  out.set_restarts(trial.restarts);
  out.set_runs(trial.runs);
  out.set_task_id(trial.task_id);
  out.set_last_exit(static_cast<int32_t>(trial.last_exit));
  out.set_last_exit_reason(trial.last_exit_reason);
  out.set_workload_allocation(trial.workload_allocation);
  out.set_last_sequence(trial.last_sequence);
  out.set_awaiting_answer(trial.awaiting_answer);
  *out.mutable_last_answer() = trial.last_answer;
  out.set_batches(trial.batches);
  out.set_last_validation_batches(trial.last_validation_batches);
  out.set_kill_requested(trial.kill_requested);
}

TrialRecord DecodeTrial(snapshot::Trial& in) {
  TrialRecord trial;
  trial.trial_id = in.trial_id();
  trial.experiment_id = in.experiment_id();
  trial.request_id = in.request_id();
  trial.hparams_json = Take(in.mutable_hparams_json());
  trial.state = in.state();
  trial.train_to = in.train_to();
  trial.closed = in.closed();
  trial.validated_at = in.validated_at();
  for (const auto& metric : in.searcher_metric()) {
    trial.searcher_metric[metric.batches()] = metric.value();
  }
  trial.latest_checkpoint = in.latest_checkpoint();
  trial.checkpoint_batches = in.checkpoint_batches();
  trial.checkpoints.assign(in.checkpoints().begin(), in.checkpoints().end());
  trial.restarts = in.restarts();
  trial.runs = in.runs();
  trial.task_id = in.task_id();
  trial.last_exit = static_cast<TrialRunExit>(in.last_exit());
  trial.last_exit_reason = in.last_exit_reason();
  trial.workload_allocation = in.workload_allocation();
  trial.last_sequence = in.last_sequence();
  trial.awaiting_answer = in.awaiting_answer();
  trial.last_answer.Swap(in.mutable_last_answer());
  trial.batches = in.batches();
  trial.last_validation_batches = in.last_validation_batches();
  trial.kill_requested = in.kill_requested();
  return trial;
}

void EncodeIdentity(const IdentityState& identity, snapshot::Identity& out) {
  for (const auto& [id, user] : identity.users) {
    auto* stored = out.add_users();
    stored->set_id(user.id);
    stored->set_username(user.username);
    stored->set_display_name(user.display_name);
    stored->set_admin(user.admin);
    stored->set_active(user.active);
    stored->set_password_hash(user.password_hash);
  }
  for (const auto& [token, session] : identity.sessions) {
    auto* stored = out.add_sessions();
    stored->set_token_sha256(token);
    stored->set_user_id(session.user_id);
    stored->set_expires_unix_micros(session.expires_unix_micros);
  }
  for (const auto& [username, times] : identity.failures) {
    auto* stored = out.add_failures();
    stored->set_username(username);
    for (int64_t time : times) stored->add_times_unix_micros(time);
  }
  out.set_last_user_id(identity.last_user_id);
}

void DecodeIdentity(const snapshot::Identity& in, IdentityState& identity) {
  for (const auto& user : in.users()) {
    identity.users[user.id()] = UserRecord{user.id(),    user.username(), user.display_name(),
                                           user.admin(), user.active(),   user.password_hash()};
    identity.user_ids[user.username()] = user.id();
  }
  for (const auto& session : in.sessions()) {
    identity.sessions[session.token_sha256()] =
        SessionRecord{session.user_id(), session.expires_unix_micros()};
  }
  for (const auto& failures : in.failures()) {
    identity.failures[failures.username()].assign(failures.times_unix_micros().begin(),
                                                  failures.times_unix_micros().end());
  }
  identity.last_user_id = in.last_user_id();
}

void EncodeTenancy(const TenancyState& tenancy, snapshot::Tenancy& out) {
  for (const auto& [id, workspace] : tenancy.workspaces) {
    auto* stored = out.add_workspaces();
    stored->set_id(workspace.id);
    stored->set_name(workspace.name);
    stored->set_owner_user_id(workspace.owner_user_id);
    stored->set_archived(workspace.archived);
    stored->set_immutable(workspace.immutable);
    stored->set_default_compute_pool(workspace.default_compute_pool);
    stored->set_default_aux_pool(workspace.default_aux_pool);
    for (int32_t user : workspace.pinned_by) stored->add_pinned_by(user);
  }
  for (const auto& [id, project] : tenancy.projects) {
    auto* stored = out.add_projects();
    stored->set_id(project.id);
    stored->set_workspace_id(project.workspace_id);
    stored->set_name(project.name);
    stored->set_description(project.description);
    stored->set_owner_user_id(project.owner_user_id);
    stored->set_archived(project.archived);
    stored->set_immutable(project.immutable);
  }
  for (const auto& [who, role] : tenancy.roles) {
    auto* stored = out.add_roles();
    stored->set_user_id(who.first);
    stored->set_workspace_id(who.second);
    stored->set_role(role);
  }
  for (const auto& [pool, workspaces] : tenancy.pool_bindings) {
    auto* stored = out.add_pool_bindings();
    stored->set_pool(pool);
    for (int32_t workspace : workspaces) stored->add_workspace_ids(workspace);
  }
  out.set_last_workspace_id(tenancy.last_workspace_id);
  out.set_last_project_id(tenancy.last_project_id);
}

void DecodeTenancy(const snapshot::Tenancy& in, TenancyState& tenancy) {
  // The snapshot holds the built-in workspace and project like any other.
  tenancy.workspaces.clear();
  tenancy.workspace_ids.clear();
  tenancy.projects.clear();
  for (const auto& stored : in.workspaces()) {
    WorkspaceRecord& workspace = tenancy.workspaces[stored.id()];
    workspace.id = stored.id();
    workspace.name = stored.name();
    workspace.owner_user_id = stored.owner_user_id();
    workspace.archived = stored.archived();
    workspace.immutable = stored.immutable();
    workspace.default_compute_pool = stored.default_compute_pool();
    workspace.default_aux_pool = stored.default_aux_pool();
    workspace.pinned_by.insert(stored.pinned_by().begin(), stored.pinned_by().end());
    tenancy.workspace_ids[workspace.name] = workspace.id;
  }
  for (const auto& stored : in.projects()) {
    ProjectRecord& project = tenancy.projects[stored.id()];
    project.id = stored.id();
    project.workspace_id = stored.workspace_id();
    project.name = stored.name();
    project.description = stored.description();
    project.owner_user_id = stored.owner_user_id();
    project.archived = stored.archived();
    project.immutable = stored.immutable();
  }
  for (const auto& role : in.roles()) {
    tenancy.roles[{role.user_id(), role.workspace_id()}] = role.role();
  }
  for (const auto& binding : in.pool_bindings()) {
    tenancy.pool_bindings[binding.pool()].insert(binding.workspace_ids().begin(),
                                                 binding.workspace_ids().end());
  }
  tenancy.last_workspace_id = in.last_workspace_id();
  tenancy.last_project_id = in.last_project_id();
}

void EncodeRegistry(const RegistryState& registry, snapshot::Registry& out) {
  for (const auto& [id, model] : registry.models) {
    auto* stored = out.add_models();
    stored->set_model_id(model.model_id);
    stored->set_name(model.name);
    stored->set_workspace_id(model.workspace_id);
    stored->set_owner(model.owner);
    stored->set_archived(model.archived);
    stored->set_last_version(model.last_version);
    for (const auto& [number, version] : model.versions) {
      auto* stored_version = stored->add_versions();
      stored_version->set_version(version.version);
      stored_version->set_checkpoint_uuid(version.checkpoint_uuid);
      stored_version->set_owner(version.owner);
    }
  }
  out.set_last_model_id(registry.last_model_id);
  out.set_last_version_id(registry.last_version_id);
  for (const auto& [uuid, count] : registry.registered_checkpoints) {
    auto* stored = out.add_registered_checkpoints();
    stored->set_uuid(uuid);
    stored->set_count(count);
  }
}

void DecodeRegistry(const snapshot::Registry& in, RegistryState& registry) {
  for (const auto& stored : in.models()) {
    ModelRecord& model = registry.models[stored.model_id()];
    model.model_id = stored.model_id();
    model.name = stored.name();
    model.workspace_id = stored.workspace_id();
    model.owner = stored.owner();
    model.archived = stored.archived();
    model.last_version = stored.last_version();
    for (const auto& version : stored.versions()) {
      model.versions[version.version()] =
          ModelVersionRecord{version.version(), version.checkpoint_uuid(), version.owner()};
    }
    registry.model_ids[model.name] = model.model_id;
  }
  registry.last_model_id = in.last_model_id();
  registry.last_version_id = in.last_version_id();
  for (const auto& stored : in.registered_checkpoints()) {
    registry.registered_checkpoints[stored.uuid()] = stored.count();
  }
}

}  // namespace

namespace {

using Snapshot = snapshot::DecisionSnapshot;

// Writes a DecisionSnapshot's fields in field-number order: a part (a message holding only some
// fields) at a time, or a list's records one by one. The bytes are those that serializing the
// whole message at once gives, so any protobuf reader (protoc --decode) still reads them.
class SnapshotWriter {
 public:
  explicit SnapshotWriter(google::protobuf::io::ZeroCopyOutputStream& out) : coded_(&out) {
    coded_.SetSerializationDeterministic(true);
  }
  bool failed() { return coded_.HadError(); }
  void Part(const Snapshot& part) {
    part.ByteSizeLong();  // SerializeWithCachedSizes reads the sizes this caches
    part.SerializeWithCachedSizes(&coded_);
  }
  // Each record of `records` (a map), encoded by `encode` into one message that is cleared and
  // refilled (its buffers reused), as an element of the list `field_number`.
  template <typename Message, typename Map, typename Encode>
  void Records(int field_number, const Map& records, Encode&& encode) {
    Message stored;
    for (const auto& [key, record] : records) {
      stored.Clear();
      encode(record, stored);
      Record(field_number, stored);
    }
  }
  // A record already encoded (WireAppender), as an element of the list `field_number`.
  void RecordBytes(int field_number, std::string_view bytes) {
    coded_.WriteTag(
        WireFormatLite::MakeTag(field_number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    coded_.WriteVarint32(static_cast<uint32_t>(bytes.size()));
    coded_.WriteRaw(bytes.data(), static_cast<int>(bytes.size()));
  }
  void Record(int field_number, const google::protobuf::MessageLite& record) {
    coded_.WriteTag(
        WireFormatLite::MakeTag(field_number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    coded_.WriteVarint32(static_cast<uint32_t>(record.ByteSizeLong()));
    record.SerializeWithCachedSizes(&coded_);
  }

 private:
  google::protobuf::io::CodedOutputStream coded_;
};

// Every task and job, for a whole snapshot. The tasks in their jobs' order (jobs by id, each
// job's tasks in submission order), so that each job names its tasks by a run of consecutive
// indexes and decoding links them without a lookup by id. Nothing here maps a task to its index:
// at 100k queued that map was a fifth of a forked snapshot's time, its probes missing the cache.
// (Commands, whose task and job share an id, come out in id order; decoding inserts any other
// task by a search.) False when a task is in no job's list, or in two.
bool EncodeAllTasksAndJobs(const DecisionState& state, SnapshotWriter& writer,
                           RecordScratch& scratch) {
  std::vector<const JobRecord*> jobs;
  jobs.reserve(state.jobs.size());
  size_t tasks_written = 0;
  for (const auto& [id, job] : state.jobs) {
    jobs.push_back(&job);
    for (const TaskRecord* task : job.tasks) {
      EncodeTask(*task, scratch);
      writer.RecordBytes(Snapshot::kTasksFieldNumber, scratch.bytes);
    }
    tasks_written += job.tasks.size();
  }
  // Every task is in its job's list (ApplyTaskSubmitted): a snapshot without one is refused.
  if (tasks_written != state.tasks.size()) return false;
  std::vector<uint32_t> indexes;
  uint32_t next_index = 0;
  for (const JobRecord* job : jobs) {
    indexes.resize(job->tasks.size());
    for (uint32_t& index : indexes) index = next_index++;
    EncodeJob(*job, TasksNamed::kByIndex, indexes, scratch);
    writer.RecordBytes(Snapshot::kJobsFieldNumber, scratch.bytes);
  }
  return true;
}

bool EncodeTo(const DecisionState& state, const LogAnchor& anchor, const DecisionDelta* delta,
              google::protobuf::io::ZeroCopyOutputStream& out) {
  {
    SnapshotWriter writer(out);
    Snapshot head;
    head.set_format(kDecisionSnapshotFormat);
    head.set_next_offset(state.next_offset);
    head.set_last_event_id(anchor.last_event_id);
    head.set_first_event_id(anchor.first_event_id);
    head.set_writer_epoch(state.writer_epoch);
    writer.Part(head);
    RecordScratch scratch;
    if (delta != nullptr) {
      // The tasks and jobs that changed, a job naming its tasks by id.
      for (const TaskRecord* task : delta->tasks) {
        EncodeTask(*task, scratch);
        writer.RecordBytes(Snapshot::kTasksFieldNumber, scratch.bytes);
      }
      for (const JobRecord* job : delta->jobs) {
        EncodeJob(*job, TasksNamed::kById, {}, scratch);
        writer.RecordBytes(Snapshot::kJobsFieldNumber, scratch.bytes);
      }
    } else if (!EncodeAllTasksAndJobs(state, writer, scratch)) {
      return false;
    }
    Snapshot middle;  // agents to idempotency: one per agent or recent request, not per task
    for (const auto& [id, agent] : state.agents) EncodeAgent(agent, *middle.add_agents());
    *middle.mutable_pools_config() = state.pools_config;
    for (const auto& [allocation_id, holding] : state.other_allocations) {
      auto* stored = middle.add_allocations();
      stored->set_allocation_id(allocation_id);
      stored->set_task_id(holding.task_id);
      for (const auto& agent_id : holding.agent_ids) stored->add_agent_ids(agent_id);
    }
    for (const auto& [key, command] : state.idempotency) {
      auto* stored = middle.add_idempotency();
      stored->set_key(key);
      stored->set_command(command.command);
      stored->set_actor(command.actor);
      stored->set_entity_id(command.entity_id);
      stored->set_request_fingerprint(command.request_fingerprint);
      stored->set_time_unix_micros(command.time_unix_micros);
    }
    for (const auto& [time, key] : state.idempotency_by_time) {
      auto* stored = middle.add_idempotency_by_time();
      stored->set_time_unix_micros(time);
      stored->set_key(key);
    }
    writer.Part(middle);
    writer.Records<snapshot::Experiment>(Snapshot::kExperimentsFieldNumber, state.experiments,
                                         EncodeExperiment);
    writer.Records<snapshot::Trial>(Snapshot::kTrialsFieldNumber, state.trials, EncodeTrial);
    writer.Records<snapshot::Checkpoint>(
        Snapshot::kCheckpointsFieldNumber, state.checkpoints,
        [](const CheckpointRecord& checkpoint, snapshot::Checkpoint& stored) {
          stored.set_uuid(checkpoint.uuid);
          stored.set_experiment_id(checkpoint.experiment_id);
          stored.set_trial_id(checkpoint.trial_id);
          stored.set_total_batches(checkpoint.total_batches);
          stored.set_size_bytes(checkpoint.size_bytes);
          stored.set_deleted(checkpoint.deleted);
        });
    Snapshot tail;
    for (const auto& uuid : state.deleted_checkpoints) tail.add_deleted_checkpoints(uuid);
    for (const auto& [name, saved] : state.templates) *tail.add_templates() = saved;
    EncodeIdentity(state.identity, *tail.mutable_identity());
    EncodeTenancy(state.tenancy, *tail.mutable_tenancy());
    EncodeRegistry(state.registry, *tail.mutable_registry());
    tail.set_last_experiment_id(state.last_experiment_id);
    tail.set_last_trial_id(state.last_trial_id);
    for (int64_t id : state.dirty_experiments) tail.add_dirty_experiments(id);
    for (const auto& [id, job] : state.pai_jobs) EncodePaiJob(job, *tail.add_pai_jobs());
    for (const auto& id : state.dirty_pai_jobs) tail.add_dirty_pai_jobs(id);
    if (delta != nullptr) {
      tail.set_base_offset(delta->base_offset);
      tail.set_parent_offset(delta->parent_offset);
    }
    writer.Part(tail);
    if (writer.failed()) return false;
  }  // the coded stream hands back what it buffered on destruction
  return true;
}

}  // namespace

DecisionDelta TakeDelta(DecisionState& state, uint64_t base_offset, uint64_t parent_offset) {
  return {base_offset, parent_offset, state.tasks.TakeChanged(), state.jobs.TakeChanged()};
}

std::optional<size_t> CountedChanges(const DecisionState& state) {
  if (!state.tasks.counting() || !state.jobs.counting()) return std::nullopt;
  return state.tasks.changed_count() + state.jobs.changed_count();
}

std::string EncodeDecisionState(const DecisionState& state, const LogAnchor& anchor) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);  // trimmed when destroyed
    EncodeDecisionStateTo(state, anchor, out);             // a string does not fail
  }
  return bytes;
}

bool EncodeDecisionStateTo(const DecisionState& state, const LogAnchor& anchor,
                           google::protobuf::io::ZeroCopyOutputStream& out) {
  return EncodeTo(state, anchor, nullptr, out);
}

bool EncodeDecisionDeltaTo(const DecisionState& state, const LogAnchor& anchor,
                           const DecisionDelta& delta,
                           google::protobuf::io::ZeroCopyOutputStream& out) {
  return EncodeTo(state, anchor, &delta, out);
}

namespace {

// A snapshot split as SnapshotWriter wrote it: each list with a record per task, job,
// experiment, trial or checkpoint as byte ranges of the input (read one record at a time, so the
// whole state is never held a second time as a message tree: at a million tasks that tree was
// larger than the state), and every other field gathered into one small message.
struct SplitSnapshot {
  Snapshot rest;
  std::vector<std::string_view> tasks, jobs, experiments, trials, checkpoints;

  // The list whose records field `field_number` holds; nullptr for the fields in `rest`.
  std::vector<std::string_view>* ListOf(int field_number) {
    switch (field_number) {
      case Snapshot::kTasksFieldNumber:
        return &tasks;
      case Snapshot::kJobsFieldNumber:
        return &jobs;
      case Snapshot::kExperimentsFieldNumber:
        return &experiments;
      case Snapshot::kTrialsFieldNumber:
        return &trials;
      case Snapshot::kCheckpointsFieldNumber:
        return &checkpoints;
      default:
        return nullptr;
    }
  }
};

Status Split(std::string_view bytes, SplitSnapshot& split) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  google::protobuf::io::CodedInputStream input(data, static_cast<int>(bytes.size()));
  std::string rest;
  bool whole = false;  // every field read to its end (a failed Skip also stops at the end)
  while (true) {
    const int field_start = input.CurrentPosition();
    const uint32_t tag = input.ReadTag();
    if (tag == 0) {  // the end, or a malformed tag
      whole = static_cast<size_t>(field_start) == bytes.size();
      break;
    }
    std::vector<std::string_view>* list = split.ListOf(WireFormatLite::GetTagFieldNumber(tag));
    if (list != nullptr &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!input.ReadVarint32(&length)) break;
      const int record_start = input.CurrentPosition();
      if (!input.Skip(static_cast<int>(length))) break;
      list->push_back(bytes.substr(static_cast<size_t>(record_start), length));
      continue;
    }
    if (!WireFormatLite::SkipField(&input, tag)) break;
    rest.append(bytes.substr(static_cast<size_t>(field_start),
                             static_cast<size_t>(input.CurrentPosition() - field_start)));
  }
  if (!whole || !split.rest.ParseFromString(rest)) {
    return Status::InvalidArgument("the decision snapshot does not parse");
  }
  return Status::Ok();
}

// `stored`, cleared, holds the record `bytes`.
template <typename Message>
Status ParseRecord(std::string_view bytes, Message& stored) {
  if (!stored.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::InvalidArgument("a record of the decision snapshot does not parse");
  }
  return Status::Ok();
}

}  // namespace

namespace {

Status CheckFormat(const Snapshot& in) {
  if (in.format() != kDecisionSnapshotFormat && in.format() != 2) {
    return Status::FailedPrecondition(
        "the decision snapshot has format " + std::to_string(in.format()) +
        "; this build reads formats 2 and " + std::to_string(kDecisionSnapshotFormat));
  }
  return Status::Ok();
}

// A whole snapshot's tasks and jobs, each job linked to its tasks by their indexes.
Status DecodeWholeTasksAndJobs(const SplitSnapshot& split, DecisionState& state) {
  std::vector<TaskRecord*> tasks;
  tasks.reserve(split.tasks.size());
  {
    snapshot::Task stored;  // one message, refilled per record: its buffers are reused
    for (std::string_view record : split.tasks) {
      CAIRN_RETURN_IF_ERROR(ParseRecord(record, stored));
      auto [task, inserted] = state.tasks.Insert(DecodeTask(stored));
      if (!inserted) return Status::InvalidArgument("task " + task->task_id + " is stored twice");
      tasks.push_back(task);
    }
  }
  snapshot::Job stored;
  for (std::string_view record : split.jobs) {
    CAIRN_RETURN_IF_ERROR(ParseRecord(record, stored));
    auto [stored_job, inserted] = state.jobs.Insert(DecodeJob(stored));
    if (!inserted) return Status::InvalidArgument("job " + stored_job->job_id + " is stored twice");
    JobRecord& job = *stored_job;
    job.tasks.reserve(static_cast<size_t>(stored.tasks_size()));
    for (uint32_t index : stored.tasks()) {
      if (index >= tasks.size() || tasks[index]->job != nullptr) {
        return Status::InvalidArgument("job " + job.job_id + " names task index " +
                                       std::to_string(index) +
                                       ", which no task or another job has");
      }
      TaskRecord* task = tasks[index];
      task->job = &job;
      job.tasks.push_back(task);
    }
  }
  return Status::Ok();
}

// A delta's tasks and jobs over the state its chain gave so far: a changed record replaces the
// stored one where it is (records never move: the jobs' and queues' pointers stay right), a new
// one is inserted, and each job listed takes the tasks its ids name.
Status ApplyDeltaTasksAndJobs(const SplitSnapshot& split, DecisionState& state) {
  {
    snapshot::Task stored;
    for (std::string_view record : split.tasks) {
      CAIRN_RETURN_IF_ERROR(ParseRecord(record, stored));
      TaskRecord task = DecodeTask(stored);
      auto existing = std::as_const(state.tasks).find(task.task_id);
      if (existing == state.tasks.end()) {
        state.tasks.Insert(std::move(task));  // its job, in this delta too, links it below
        continue;
      }
      task.job = existing->second.job;  // a task never changes jobs
      state.tasks.Replace(std::move(task));
    }
  }
  snapshot::Job stored;
  for (std::string_view record : split.jobs) {
    CAIRN_RETURN_IF_ERROR(ParseRecord(record, stored));
    if (stored.tasks_size() > 0) {
      return Status::InvalidArgument("job " + stored.job_id() +
                                     " names its tasks by index in a delta snapshot");
    }
    JobRecord decoded = DecodeJob(stored);
    // The stored job's tasks are unlinked, then linked again from the list: a task listed twice,
    // or by two jobs, is refused here, and one the list left out belongs to no job at the end.
    if (auto existing = std::as_const(state.jobs).find(decoded.job_id);
        existing != state.jobs.end()) {
      for (const TaskRecord* task : existing->second.tasks)
        state.tasks.Changed(*task).job = nullptr;
    }
    JobRecord& job = state.jobs.count(decoded.job_id) > 0
                         ? *state.jobs.Replace(std::move(decoded))
                         : *state.jobs.Insert(std::move(decoded)).first;
    job.tasks.reserve(static_cast<size_t>(stored.task_ids_size()));
    for (const std::string& task_id : stored.task_ids()) {
      auto it = state.tasks.find(task_id);
      if (it == state.tasks.end() || it->second.job != nullptr) {
        return Status::InvalidArgument("job " + job.job_id + " names task " + task_id +
                                       ", which no task has or which another job or this one "
                                       "named already");
      }
      it->second.job = &job;
      job.tasks.push_back(&it->second);
    }
  }
  return Status::Ok();
}

// Decodes `chain`, keeping `blamed` at the link being read.
Result<std::unique_ptr<DecodedDecisionState>> DecodeChain(
    const std::vector<std::string_view>& chain, size_t& blamed);

}  // namespace

Result<std::unique_ptr<DecodedDecisionState>> DecodeDecisionState(std::string_view bytes) {
  return DecodeDecisionChain({bytes});
}

Result<std::unique_ptr<DecodedDecisionState>> DecodeDecisionChain(
    const std::vector<std::string_view>& chain, size_t* failed_link) {
  if (chain.empty()) return Status::InvalidArgument("no decision snapshot to decode");
  // Which link an error is blamed on: the one whose bytes were being read; the newest for what
  // comes whole from it, and for what derives from every link.
  size_t blamed = chain.size() - 1;
  auto decoded = DecodeChain(chain, blamed);
  if (!decoded.ok() && failed_link != nullptr) *failed_link = blamed;
  return decoded;
}

namespace {

Result<std::unique_ptr<DecodedDecisionState>> DecodeChain(
    const std::vector<std::string_view>& chain, size_t& blamed) {
  std::vector<SplitSnapshot> splits(chain.size());
  for (size_t i = 0; i < chain.size(); ++i) {
    blamed = i;
    CAIRN_RETURN_IF_ERROR(Split(chain[i], splits[i]));
    const Snapshot& link = splits[i].rest;
    CAIRN_RETURN_IF_ERROR(CheckFormat(link));
    if (i == 0 && link.base_offset() != 0) {
      return Status::InvalidArgument("the decision snapshot at offset " +
                                     std::to_string(link.next_offset()) +
                                     " is a delta: it needs the whole snapshot at offset " +
                                     std::to_string(link.base_offset()) + " before it");
    }
    if (i > 0 && (link.base_offset() != splits[0].rest.next_offset() ||
                  link.parent_offset() != splits[i - 1].rest.next_offset() ||
                  link.next_offset() <= link.parent_offset() ||
                  link.first_event_id() != splits[0].rest.first_event_id())) {
      return Status::InvalidArgument(
          "the decision snapshot at offset " + std::to_string(link.next_offset()) +
          " does not follow the one at " + std::to_string(splits[i - 1].rest.next_offset()));
    }
  }
  // Everything but the tasks and jobs comes whole from the newest.
  const SplitSnapshot& newest = splits.back();
  const Snapshot& in = newest.rest;
  // The experiments (each configuration parsed and searcher rebuilt) share nothing with the
  // tasks and jobs: they are decoded on a second thread meanwhile.
  std::map<int64_t, ExperimentRecord> experiments;
  auto experiments_decoded = std::async(std::launch::async, [&]() -> Status {
    ConfigCache configs;
    snapshot::Experiment stored;
    for (std::string_view record : newest.experiments) {
      CAIRN_RETURN_IF_ERROR(ParseRecord(record, stored));
      CAIRN_ASSIGN_OR_RETURN(ExperimentRecord experiment, DecodeExperiment(stored, configs));
      const int64_t id = experiment.experiment_id;
      experiments.emplace_hint(experiments.end(), id, std::move(experiment));
    }
    return Status::Ok();
  });
  // Joined on every return below (a Status left unread is checked at the end).
  struct Join {
    std::future<Status>& future;
    ~Join() {
      if (future.valid()) future.wait();
    }
  } join{experiments_decoded};
  auto decoded = std::make_unique<DecodedDecisionState>();
  decoded->anchor = {in.first_event_id(), in.last_event_id()};
  DecisionState& state = decoded->state;
  state.next_offset = in.next_offset();
  state.writer_epoch = in.writer_epoch();
  blamed = 0;
  CAIRN_RETURN_IF_ERROR(DecodeWholeTasksAndJobs(splits[0], state));
  for (size_t i = 1; i < splits.size(); ++i) {
    blamed = i;
    CAIRN_RETURN_IF_ERROR(ApplyDeltaTasksAndJobs(splits[i], state));
  }
  blamed = splits.size() - 1;
  // What the tasks and jobs derive: each job's live tasks, the live jobs' ranks, the queues.
  for (const auto& [id, task] : std::as_const(state.tasks)) {
    if (task.job == nullptr) {
      return Status::InvalidArgument("task " + task.task_id + " belongs to no job");
    }
    if (task.state != TaskState::kExited) state.jobs.Changed(*task.job).live_tasks++;
  }
  for (const auto& [id, job] : std::as_const(state.jobs)) {
    if (job.live_tasks > 0) {
      state.live_jobs.Add(job.resource_pool, job.priority, job.queue_position, job.job_id);
    }
  }
  for (const auto& [id, task] : std::as_const(state.tasks)) {
    if (task.state == TaskState::kQueued) state.Enqueue(task);
  }
  for (const auto& stored : in.agents()) {
    AgentRecord agent = DecodeAgent(stored);
    std::string id = agent.agent_id;
    state.agents.emplace_hint(state.agents.end(), std::move(id), std::move(agent));
  }
  state.pools_config = in.pools_config();
  for (const auto& stored : in.allocations()) {
    state.other_allocations.emplace_hint(
        state.other_allocations.end(), stored.allocation_id(),
        DecisionState::AllocationHolding{stored.task_id(),
                                         {stored.agent_ids().begin(), stored.agent_ids().end()}});
  }
  for (const auto& stored : in.idempotency()) {
    state.idempotency.emplace_hint(
        state.idempotency.end(), stored.key(),
        DecisionState::IdempotentCommand{stored.command(), stored.actor(), stored.entity_id(),
                                         stored.request_fingerprint(), stored.time_unix_micros()});
  }
  for (const auto& stored : in.idempotency_by_time()) {
    state.idempotency_by_time.emplace_hint(state.idempotency_by_time.end(),
                                           stored.time_unix_micros(), stored.key());
  }
  CAIRN_RETURN_IF_ERROR(experiments_decoded.get());
  state.experiments = std::move(experiments);
  {
    snapshot::Trial stored;
    for (std::string_view record : newest.trials) {
      CAIRN_RETURN_IF_ERROR(ParseRecord(record, stored));
      const int64_t id = stored.trial_id();
      state.trials.emplace_hint(state.trials.end(), id, DecodeTrial(stored));
    }
  }
  {
    snapshot::Checkpoint stored;
    for (std::string_view record : newest.checkpoints) {
      CAIRN_RETURN_IF_ERROR(ParseRecord(record, stored));
      state.checkpoints.emplace_hint(
          state.checkpoints.end(), stored.uuid(),
          CheckpointRecord{stored.uuid(), stored.experiment_id(), stored.trial_id(),
                           stored.total_batches(), stored.size_bytes(), stored.deleted()});
    }
  }
  state.deleted_checkpoints.assign(in.deleted_checkpoints().begin(),
                                   in.deleted_checkpoints().end());
  for (const auto& saved : in.templates()) state.templates[saved.name()] = saved;
  DecodeIdentity(in.identity(), state.identity);
  DecodeTenancy(in.tenancy(), state.tenancy);
  DecodeRegistry(in.registry(), state.registry);
  state.last_experiment_id = in.last_experiment_id();
  state.last_trial_id = in.last_trial_id();
  state.dirty_experiments.insert(in.dirty_experiments().begin(), in.dirty_experiments().end());
  for (const auto& stored : in.pai_jobs()) {
    PaiJobRecord job = DecodePaiJob(stored);
    const std::string job_id = job.submitted.job_id();
    state.pai_job_by_name[job.submitted.username() + "/" + job.submitted.job_name()] = job_id;
    if (!job.ended()) {
      for (const auto& member : job.members) state.pai_task_to_job[member.task_id] = job_id;
    }
    state.pai_jobs.emplace_hint(state.pai_jobs.end(), job_id, std::move(job));
  }
  state.dirty_pai_jobs.insert(in.dirty_pai_jobs().begin(), in.dirty_pai_jobs().end());
  return decoded;
}

}  // namespace

}  // namespace cairn::commands
