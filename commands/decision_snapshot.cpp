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

#include "commands/agents/agent_snapshot.h"
#include "commands/experiments/experiment_snapshot.h"
#include "commands/identity/identity_snapshot.h"
#include "commands/pai/pai_snapshot.h"
#include "commands/proto/snapshot_codec.h"
#include "commands/registry/registry_snapshot.h"
#include "commands/tasks/task_snapshot.h"
#include "commands/tenancy/tenancy_snapshot.h"
#include "commands/webhooks/webhook_snapshot.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

// The snapshot covers these records' every field (commands/proto/snapshot_codec.h); each room's
// own records are counted beside its codec (commands/<room>/*_snapshot.cpp).
CAIRN_SNAPSHOT_COVERS(DecisionState::AllocationHolding, 2);
CAIRN_SNAPSHOT_COVERS(DecisionState::IdempotentCommand, 5);
CAIRN_SNAPSHOT_COVERS(DecisionState, 28);

namespace {

using google::protobuf::internal::WireFormatLite;

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
    writer.Records<snapshot::Checkpoint>(Snapshot::kCheckpointsFieldNumber, state.checkpoints,
                                         EncodeCheckpoint);
    Snapshot tail;
    for (const auto& uuid : state.deleted_checkpoints) tail.add_deleted_checkpoints(uuid);
    for (const auto& deletion : state.tensorboard_deletions) {
      auto* out = tail.add_tensorboard_deletions();
      out->set_experiment_id(deletion.experiment_id);
      out->set_time_unix_micros(deletion.time_unix_micros);
    }
    for (const auto& [name, saved] : state.templates) *tail.add_templates() = saved;
    EncodeIdentity(state.identity, *tail.mutable_identity());
    EncodeTenancy(state.tenancy, *tail.mutable_tenancy());
    EncodeRegistry(state.registry, *tail.mutable_registry());
    EncodeWebhooks(state.webhooks, *tail.mutable_webhooks());
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
  if (in.format() != kDecisionSnapshotFormat) {
    return Status::FailedPrecondition("the decision snapshot has format " +
                                      std::to_string(in.format()) + "; this build reads format " +
                                      std::to_string(kDecisionSnapshotFormat));
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
      state.checkpoints.emplace_hint(state.checkpoints.end(), stored.uuid(),
                                     DecodeCheckpoint(stored));
    }
  }
  state.deleted_checkpoints.assign(in.deleted_checkpoints().begin(),
                                   in.deleted_checkpoints().end());
  for (const auto& deletion : in.tensorboard_deletions()) {
    state.tensorboard_deletions.push_back({deletion.experiment_id(), deletion.time_unix_micros()});
  }
  for (const auto& saved : in.templates()) state.templates[saved.name()] = saved;
  DecodeIdentity(in.identity(), state.identity);
  DecodeTenancy(in.tenancy(), state.tenancy);
  DecodeRegistry(in.registry(), state.registry);
  DecodeWebhooks(in.webhooks(), state.webhooks);
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
