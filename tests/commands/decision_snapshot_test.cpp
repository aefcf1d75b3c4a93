// Decision snapshots (commands/decision_snapshot.h): a state decoded from a snapshot at any
// offset and folded on with the log's tail is the state a fold of the whole log gives. The
// decisions made from decoded states are checked apart: commands_snapshot_test runs every decider
// test with the state round-tripped through a snapshot before each command.
#include "commands/decision_snapshot.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "decision_snapshot.pb.h"
#include "events/memory_log.h"
#include "ops/bench/history_generator.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

std::vector<events::Envelope> ReadAll(EventLog& log) {
  auto reader = log.OpenReader(0);
  EXPECT_TRUE(reader.ok());
  auto end = log.EndOffset();
  std::vector<events::Envelope> all;
  while ((*reader)->position() < *end) {
    auto batch = (*reader)->Next(4096, std::chrono::milliseconds(0));
    EXPECT_TRUE(batch.ok());
    if (!batch.ok() || batch->empty()) break;
    all.insert(all.end(), batch->begin(), batch->end());
  }
  return all;
}

// Applies the submission of a one-slot task `task_id` (its own job) at the state's next offset.
void SubmitTask(DecisionState& state, const std::string& task_id) {
  events::Envelope submitted;
  submitted.set_offset(state.next_offset);
  auto* task = submitted.mutable_task_submitted();
  task->set_task_id(task_id);
  task->mutable_resources()->set_slots(1);
  task->mutable_resources()->set_resource_pool(kDefaultPool);
  task->mutable_spec()->add_entrypoint("true");
  Apply(state, submitted);
}

std::unique_ptr<DecisionState> Fold(const std::vector<events::Envelope>& events, size_t from,
                                    size_t to, std::unique_ptr<DecisionState> state) {
  for (size_t i = from; i < to; ++i) Apply(*state, events[i]);
  return state;
}

// A generated history with thousands of commands and grid experiments, agents coming and going,
// preemptions and trial workloads (ops/bench/history_generator.h).
class GeneratedHistory : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    MemoryEventLog log;
    bench::HistoryOptions options;
    options.events = 40'000;
    options.users = 60;
    options.workspaces = 4;
    options.agents_per_pool = 3;
    options.experiment_every = 4;
    auto summary = bench::GenerateHistory(log, options);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    ASSERT_GT(summary->experiments, 0);
    ASSERT_GT(summary->preemptions, 0);
    events_ = new std::vector<events::Envelope>(ReadAll(log));
  }
  static void TearDownTestSuite() { delete events_; }
  static std::vector<events::Envelope>* events_;
};
std::vector<events::Envelope>* GeneratedHistory::events_ = nullptr;

TEST_F(GeneratedHistory, DecodedSnapshotFoldedOnEqualsTheWholeFold) {
  const auto& events = *events_;
  auto whole = Fold(events, 0, events.size(), std::make_unique<DecisionState>());
  const std::string expected = EncodeDecisionState(*whole, {"first", "last"});
  ASSERT_FALSE(whole->experiments.empty());
  ASSERT_GT(whole->QueuedTaskCount(), 0u);

  std::mt19937_64 random(11);
  std::vector<size_t> cuts = {0, 1, events.size() / 2, events.size()};
  for (int i = 0; i < 6; ++i) cuts.push_back(random() % events.size());
  for (size_t cut : cuts) {
    SCOPED_TRACE("snapshot at offset " + std::to_string(cut));
    auto prefix = Fold(events, 0, cut, std::make_unique<DecisionState>());
    const std::string bytes = EncodeDecisionState(*prefix, {"first", "last"});
    auto decoded = DecodeDecisionState(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ((*decoded)->anchor.last_event_id, "last");
    // Decoding loses nothing that encoding keeps...
    // (Compared as a bool: a failure prints no megabytes of bytes.)
    EXPECT_TRUE(EncodeDecisionState((*decoded)->state, {"first", "last"}) == bytes);
    // ...and what it rebuilds (queues, ranks, searchers) folds on as the original does.
    EXPECT_EQ((*decoded)->state.QueuedTaskCount(), prefix->QueuedTaskCount());
    auto restored = std::make_unique<DecisionState>(std::move((*decoded)->state));
    restored = Fold(events, cut, events.size(), std::move(restored));
    EXPECT_TRUE(EncodeDecisionState(*restored, {"first", "last"}) == expected);
    EXPECT_EQ(restored->QueuedTaskCount(), whole->QueuedTaskCount());
    for (const auto& [id, experiment] : whole->experiments) {
      const auto& other = restored->experiments.at(id);
      ASSERT_EQ(experiment.searcher != nullptr, other.searcher != nullptr);
      if (experiment.searcher) {
        EXPECT_EQ(experiment.searcher->Progress(), other.searcher->Progress());
      }
    }
  }
}

std::string EncodedDelta(DecisionState& state, uint64_t base, uint64_t parent) {
  DecisionDelta delta = TakeDelta(state, base, parent);
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    EXPECT_TRUE(EncodeDecisionDeltaTo(state, {"first", "last"}, delta, out));
  }
  return bytes;
}

// A whole snapshot and the deltas after it (each the tasks and jobs the state counted as changed
// since the one before: ByOwnId::TakeChanged) decode to the state at the last delta, at cuts all
// over a history of commands, experiments, preemptions and agents coming and going; and folded
// on, to the whole fold. A delta holds only what changed.
TEST_F(GeneratedHistory, AWholeSnapshotAndItsDeltasDecodeToTheStateAtTheLast) {
  const auto& events = *events_;
  auto whole = Fold(events, 0, events.size(), std::make_unique<DecisionState>());
  const std::string expected = EncodeDecisionState(*whole, {"first", "last"});
  std::mt19937_64 random(5);
  for (int round = 0; round < 3; ++round) {
    std::vector<size_t> cuts;
    for (int i = 0; i < 4; ++i) cuts.push_back(1 + random() % (events.size() - 1));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    SCOPED_TRACE("cuts from " + std::to_string(cuts.front()));
    auto state = Fold(events, 0, cuts.front(), std::make_unique<DecisionState>());
    std::vector<std::string> chain{EncodeDecisionState(*state, {"first", "last"})};
    StartCountingChanges(*state);  // counting starts with the whole snapshot
    for (size_t i = 1; i < cuts.size(); ++i) {
      state = Fold(events, cuts[i - 1], cuts[i], std::move(state));
      ASSERT_TRUE(CountedChanges(*state).has_value());
      const size_t changed = *CountedChanges(*state);
      EXPECT_LT(changed, state->tasks.size() + state->jobs.size());
      chain.push_back(EncodedDelta(*state, cuts.front(), cuts[i - 1]));
      std::vector<std::string_view> views(chain.begin(), chain.end());
      auto decoded = DecodeDecisionChain(views);
      ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
      EXPECT_EQ((*decoded)->state.next_offset, cuts[i]);
      EXPECT_TRUE(EncodeDecisionState((*decoded)->state, {"first", "last"}) ==
                  EncodeDecisionState(*state, {"first", "last"}));
      EXPECT_EQ((*decoded)->state.QueuedTaskCount(), state->QueuedTaskCount());
      EXPECT_FALSE(CountedChanges((*decoded)->state).has_value())
          << "a decoded state counts nothing";
      snapshot::DecisionSnapshot stored;
      ASSERT_TRUE(stored.ParseFromString(chain.back()));
      EXPECT_EQ(static_cast<size_t>(stored.tasks_size() + stored.jobs_size()), changed);
    }
    std::vector<std::string_view> views(chain.begin(), chain.end());
    auto decoded = DecodeDecisionChain(views);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    auto restored = std::make_unique<DecisionState>(std::move((*decoded)->state));
    restored = Fold(events, cuts.back(), events.size(), std::move(restored));
    EXPECT_TRUE(EncodeDecisionState(*restored, {"first", "last"}) == expected);
  }
}

// Issue 17's shape, for snapshots: a delta after the same 100 submissions holds the same records
// and about the same bytes with 1,000 or 20,000 tasks already queued, where a whole snapshot
// grows with the queue.
TEST(DecisionSnapshotTest, ADeltasSizeFollowsTheChangesNotTheQueue) {
  auto submit = [](DecisionState& state, int count) {
    for (int i = 0; i < count; ++i) SubmitTask(state, "task-" + std::to_string(state.next_offset));
  };
  std::vector<size_t> delta_bytes, delta_records, whole_bytes;
  for (int queued : {1000, 20000}) {
    DecisionState state;
    submit(state, queued);
    StartCountingChanges(state);  // a snapshot here: counting starts
    submit(state, 100);
    const std::string delta = EncodedDelta(state, 1, 1);
    snapshot::DecisionSnapshot stored;
    ASSERT_TRUE(stored.ParseFromString(delta));
    delta_records.push_back(static_cast<size_t>(stored.tasks_size() + stored.jobs_size()));
    delta_bytes.push_back(delta.size());
    whole_bytes.push_back(EncodeDecisionState(state, {"first", "last"}).size());
  }
  EXPECT_EQ(delta_records, (std::vector<size_t>{200, 200}));
  // The same records, their ids and offsets a digit or a byte longer: within 10%, where the
  // whole snapshot grew with the queue, twentyfold.
  EXPECT_LT(delta_bytes[1], delta_bytes[0] * 11 / 10);
  EXPECT_GT(whole_bytes[1], whole_bytes[0] * 10);
}

// A delta's job lists its tasks by id: one listed twice, or one its job no longer lists, is
// refused rather than decoded into a job with a task twice or a task with no job.
TEST(DecisionSnapshotTest, RefusesADeltaWhoseJobListsATaskTwiceOrLeavesOneOut) {
  DecisionState state;
  SubmitTask(state, "t");
  const std::string base = EncodeDecisionState(state, {"first", "last"});
  StartCountingChanges(state);
  events::Envelope killed;
  killed.set_offset(1);
  killed.mutable_kill_requested()->set_task_id("t");
  Apply(state, killed);
  state.jobs.Changed(state.jobs.at("t"));  // the job in the delta too
  snapshot::DecisionSnapshot delta;
  ASSERT_TRUE(delta.ParseFromString(EncodedDelta(state, 1, 1)));
  ASSERT_EQ(delta.jobs_size(), 1);
  ASSERT_EQ(delta.jobs(0).task_ids_size(), 1);
  ASSERT_TRUE(DecodeDecisionChain({base, delta.SerializeAsString()}).ok());
  snapshot::DecisionSnapshot twice = delta;
  twice.mutable_jobs(0)->add_task_ids("t");
  auto decoded = DecodeDecisionChain({base, twice.SerializeAsString()});
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  snapshot::DecisionSnapshot left_out = delta;
  left_out.mutable_jobs(0)->clear_task_ids();
  size_t failed_link = 9;
  decoded = DecodeDecisionChain({base, left_out.SerializeAsString()}, &failed_link);
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("belongs to no job"), std::string::npos);
  EXPECT_EQ(failed_link, 1u);
  // A delta alone, or after a delta that is not its parent, is refused too.
  EXPECT_EQ(DecodeDecisionChain({delta.SerializeAsString()}).status().code(),
            StatusCode::kInvalidArgument);
  snapshot::DecisionSnapshot elsewhere = delta;
  elsewhere.set_parent_offset(7);
  failed_link = 9;
  EXPECT_FALSE(DecodeDecisionChain({base, elsewhere.SerializeAsString()}, &failed_link).ok());
  EXPECT_EQ(failed_link, 1u);
}

// The encoder writes the big lists a record at a time and the decoder reads them so: the bytes
// must still be exactly the whole message's, so that protoc and any protobuf reader read them.
TEST_F(GeneratedHistory, StreamedBytesAreTheWholeMessagesBytes) {
  auto state = Fold(*events_, 0, events_->size(), std::make_unique<DecisionState>());
  const std::string bytes = EncodeDecisionState(*state, {"first", "last"});
  snapshot::DecisionSnapshot whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  ASSERT_GT(whole.tasks_size(), 0);
  ASSERT_GT(whole.trials_size(), 0);
  ASSERT_GT(whole.checkpoints_size(), 0);
  std::string reserialized;
  {
    google::protobuf::io::StringOutputStream stream(&reserialized);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    whole.SerializeToCodedStream(&coded);
  }
  EXPECT_TRUE(reserialized == bytes);
  EXPECT_EQ(static_cast<int>(state->tasks.size()), whole.tasks_size());
  EXPECT_EQ(static_cast<int>(state->jobs.size()), whole.jobs_size());

  // Cut short, inside a record or after its last field: refused, never misread.
  EXPECT_EQ(
      DecodeDecisionState(std::string_view(bytes).substr(0, bytes.size() - 1)).status().code(),
      StatusCode::kInvalidArgument);
  const size_t first_task = bytes.find(whole.tasks(0).task_id());
  ASSERT_NE(first_task, std::string::npos);
  EXPECT_EQ(DecodeDecisionState(std::string_view(bytes).substr(0, first_task + 2)).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(DecisionSnapshotTest, RefusesBytesThatAreNotASnapshotOfThisFormat) {
  EXPECT_EQ(DecodeDecisionState("\xff\xff\xff garbage").status().code(),
            StatusCode::kInvalidArgument);
  DecisionState state;
  std::string bytes = EncodeDecisionState(state, {});
  // Field 1 (format) is the first varint: a later format is refused, not misread.
  ASSERT_EQ(bytes[0], '\x08');
  bytes[1] = static_cast<char>(kDecisionSnapshotFormat + 1);
  EXPECT_EQ(DecodeDecisionState(bytes).status().code(), StatusCode::kFailedPrecondition);
}

// The reference for a task's and a job's bytes: snapshot::Task and snapshot::Job filled through
// protobuf's generated setters, as the encoder did before it wrote their fields itself.
snapshot::Task ReferenceTask(const TaskRecord& task) {
  snapshot::Task out;
  out.set_task_id(task.task_id);
  out.set_job_id(task.job_id());
  if (!out.mutable_spec()->ParseFromString(task.packed_spec)) out.clear_spec();
  out.mutable_spec()->set_task_type(task.task_type);
  out.mutable_spec()->set_preemptible(task.spec_preemptible);
  *out.mutable_resources() = task.resources;
  out.set_state(static_cast<int32_t>(task.state));
  out.set_submitted_offset(task.submitted_offset);
  out.set_submitted_time(task.submitted_time);
  out.set_allocation_count(task.allocation_count);
  out.set_allocation_id(task.allocation_id);
  out.set_allocation_pool(task.where().allocation_pool);
  for (const auto& agent : task.more_agents) out.add_more_agents(agent);
  for (const auto& part : task.where().parts) *out.add_parts() = part;
  for (const auto& agent : task.where().parts_exited) out.add_parts_exited(agent);
  out.set_agent_id(task.agent_id);
  out.set_agent_incarnation(task.where().agent_incarnation);
  for (int32_t slot : task.where().slot_ids) out.add_slot_ids(slot);
  out.set_started(task.started);
  out.set_ready(task.ready);
  out.set_kill_requested(task.kill_requested);
  out.set_kill_by_user(task.kill_by_user);
  out.set_backfilled(task.backfilled);
  out.set_preempting(task.preempting);
  out.set_preemption_deadline(task.where().preemption_deadline);
  out.set_last_reason(task.last_reason);
  out.set_trial_id(task.trial_id);
  return out;
}

snapshot::Job ReferenceJob(const JobRecord& job) {
  snapshot::Job out;
  out.set_job_id(job.job_id);
  out.set_type(job.type);
  out.set_resource_pool(job.resource_pool);
  out.set_priority(job.priority);
  out.set_weight(job.weight);
  out.set_max_slots(job.max_slots);
  out.set_queue_position(job.queue_position);
  out.set_submitted_offset(job.submitted_offset);
  out.set_submitted_time(job.submitted_time);
  out.set_user(job.user);
  out.set_workspace_id(job.workspace_id);
  out.set_open(job.open);
  return out;
}

// The encoder writes a task's and a job's fields itself (commands/decision_snapshot.cpp,
// WireAppender): every field, with negative numbers, -0.0 and a gang's placement, must come out
// as the generated serializer writes it, and the tasks in their jobs' order with each job naming
// its run of indexes.
TEST(DecisionSnapshotTest, HandWrittenRecordsAreTheGeneratedBytes) {
  DecisionState state;
  auto add_job = [&](const std::string& id, double weight, int32_t priority) -> JobRecord& {
    JobRecord job;
    job.job_id = id;
    job.resource_pool = "gpus";
    job.user = "ada";
    job.weight = weight;
    job.priority = priority;
    job.max_slots = 7;
    job.queue_position = -5;
    job.submitted_offset = 9;
    job.submitted_time = -1;
    job.type = events::TASK_TYPE_TRIAL;
    job.workspace_id = 4;
    job.open = true;
    return *state.jobs.Insert(std::move(job)).first;
  };
  // Job "b" sorts after "a" but its task "a-task" sorts before "b-task" of job "a": the list is
  // in job order, not id order.
  JobRecord& first = add_job("a", -0.0, -3);
  JobRecord& second = add_job("b", 2.5, 0);
  auto add_task = [&](TaskRecord task, JobRecord& job) -> TaskRecord& {
    task.job = &job;
    TaskRecord& stored = *state.tasks.Insert(std::move(task)).first;
    job.tasks.push_back(&stored);
    return stored;
  };
  TaskRecord live;
  live.task_id = "b-task";
  events::TaskSpec spec;
  spec.set_task_type(events::TASK_TYPE_TRIAL);
  spec.set_preemptible(true);
  spec.add_entrypoint("python3");
  spec.add_environment_variables("A=1");
  spec.set_memory_mb(-2);
  spec.SerializeToString(&live.packed_spec);
  live.task_type = events::TASK_TYPE_TRIAL;
  live.spec_preemptible = true;
  live.resources.set_slots(2);
  live.resources.set_priority(-3);
  live.resources.set_gang_size(2);
  live.resources.set_gang_slots(4);
  live.state = TaskState::kTerminating;
  live.submitted_offset = 1ULL << 40;
  live.submitted_time = -99;
  live.allocation_count = 3;
  live.allocation_id = "b-task.3";
  Placement& placement = live.place();
  placement.allocation_pool = "gpus";
  for (const char* agent : {"a1", "a2"}) {
    events::AllocationPart& part = placement.parts.emplace_back();
    part.set_agent_id(agent);
    part.set_agent_incarnation("i");
    part.add_slot_ids(0);
    part.add_slot_ids(-1);
  }
  placement.parts_exited = {"a2", "a3"};
  placement.agent_incarnation = "i";
  placement.slot_ids = {0, -1, 300};
  placement.preemption_deadline = -7;
  live.agent_id = "a1";
  live.more_agents = {"a2"};
  live.started = live.ready = live.kill_requested = live.kill_by_user = true;
  live.backfilled = live.preempting = true;
  live.last_reason = "preempted";
  live.trial_id = -4;
  add_task(std::move(live), first);
  TaskRecord exited;  // ForgetLiveDetails kept its kind and preemptibility only
  exited.task_id = "a-task";
  exited.task_type = events::TASK_TYPE_COMMAND;
  exited.spec_preemptible = true;
  exited.state = TaskState::kExited;
  exited.last_reason = "done";
  add_task(std::move(exited), first);
  TaskRecord plain;  // every field at its default but its id
  plain.task_id = "c-task";
  add_task(std::move(plain), second);

  const std::string bytes = EncodeDecisionState(state, {});
  snapshot::DecisionSnapshot whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  ASSERT_EQ(whole.tasks_size(), 3);
  ASSERT_EQ(whole.jobs_size(), 2);
  std::vector<std::string> order;
  for (const auto& task : whole.tasks()) order.push_back(task.task_id());
  EXPECT_EQ(order, (std::vector<std::string>{"b-task", "a-task", "c-task"}));
  for (const auto& stored : whole.tasks()) {
    SCOPED_TRACE(stored.task_id());
    EXPECT_EQ(stored.SerializeAsString(),
              ReferenceTask(state.tasks.at(stored.task_id())).SerializeAsString());
  }
  for (int i = 0; i < whole.jobs_size(); ++i) {
    snapshot::Job reference = ReferenceJob(state.jobs.at(whole.jobs(i).job_id()));
    for (uint32_t index : i == 0 ? std::vector<uint32_t>{0, 1} : std::vector<uint32_t>{2}) {
      reference.add_tasks(index);
    }
    EXPECT_EQ(whole.jobs(i).SerializeAsString(), reference.SerializeAsString());
  }
  EXPECT_TRUE(std::signbit(whole.jobs(0).weight()));
  // And what decodes is what was encoded, each task under its job.
  auto decoded = DecodeDecisionState(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(EncodeDecisionState((*decoded)->state, {}) == bytes);
  EXPECT_EQ((*decoded)->state.tasks.at("a-task").job_id(), "a");
  EXPECT_EQ((*decoded)->state.jobs.at("b").tasks.size(), 1u);
}

// A record stored twice is refused, not merged: the second copy of a job would have been dropped
// and its tasks attached to the first.
TEST(DecisionSnapshotTest, RefusesAJobStoredTwice) {
  DecisionState state;
  SubmitTask(state, "t");
  snapshot::DecisionSnapshot whole;
  ASSERT_TRUE(whole.ParseFromString(EncodeDecisionState(state, {})));
  ASSERT_EQ(whole.jobs_size(), 1);
  ASSERT_TRUE(DecodeDecisionState(whole.SerializeAsString()).ok());
  *whole.add_jobs() = whole.jobs(0);
  auto decoded = DecodeDecisionState(whole.SerializeAsString());
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("job t is stored twice"), std::string::npos)
      << decoded.status().ToString();
}

// Allocations are found from their ids: "<task>.<n>" through the task's record, earlier ones of a
// re-queued task and ids of another form through DecisionState::other_allocations. Each keeps
// the agents that held it after it ended, and a snapshot keeps all of it.
TEST(DecisionSnapshotTest, FindsEveryAllocationAndItsAgentsAfterItEnds) {
  DecisionState folded;
  uint64_t offset = 0;
  auto apply = [&](events::Envelope event) {
    event.set_offset(offset++);
    Apply(folded, event);
  };
  for (const char* agent : {"a1", "a2"}) {
    events::Envelope registered;
    registered.mutable_agent_registered()->set_agent_id(agent);
    registered.mutable_agent_registered()->set_incarnation("i");
    registered.mutable_agent_registered()->set_resource_pool(kDefaultPool);
    registered.mutable_agent_registered()->set_slot_count(1);
    apply(registered);
  }
  auto assign = [&](const std::string& task, const std::string& allocation,
                    const std::string& agent) {
    events::Envelope assigned;
    auto* a = assigned.mutable_allocation_assigned();
    a->set_task_id(task);
    a->set_allocation_id(allocation);
    a->set_agent_id(agent);
    a->set_agent_incarnation("i");
    a->set_resource_pool(kDefaultPool);
    a->add_slot_ids(0);
    apply(assigned);
  };
  auto release = [&](const std::string& task, const std::string& allocation) {
    events::Envelope released;
    released.mutable_allocation_released()->set_task_id(task);
    released.mutable_allocation_released()->set_allocation_id(allocation);
    apply(released);
  };
  for (const char* task : {"t", "u"}) {
    events::Envelope submitted;
    submitted.mutable_task_submitted()->set_task_id(task);
    submitted.mutable_task_submitted()->mutable_resources()->set_slots(1);
    submitted.mutable_task_submitted()->mutable_resources()->set_resource_pool(kDefaultPool);
    apply(submitted);
  }
  assign("t", "t.1", "a1");
  release("t", "t.1");
  assign("t", "t.2", "a2");
  assign("u", "by-hand", "a1");
  events::Envelope exited;
  exited.mutable_task_exited()->set_task_id("t");
  exited.mutable_task_exited()->set_allocation_id("t.2");
  apply(exited);

  auto decoded = DecodeDecisionState(EncodeDecisionState(folded, {}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  for (const DecisionState* state : {&folded, &(*decoded)->state}) {
    auto agents_of = [&](const std::string& allocation_id) -> std::string {
      const TaskRecord* task = state->FindAllocation(allocation_id);
      if (task == nullptr) return state->AllocationAgents(allocation_id).empty() ? "none" : "?";
      std::string text = task->task_id + ":";
      for (const auto& agent : state->AllocationAgents(allocation_id)) text += " " + agent;
      return text;
    };
    EXPECT_EQ(agents_of("t.1"), "t: a1");  // an earlier allocation of the re-queued task
    EXPECT_EQ(agents_of("t.2"), "t: a2");  // the latest, after the task exited
    EXPECT_EQ(agents_of("by-hand"), "u: a1");
    EXPECT_EQ(agents_of("t.3"), "none");
    EXPECT_EQ(agents_of("u.1"), "none");
    EXPECT_EQ(agents_of("nobody.1"), "none");
    EXPECT_EQ(agents_of("t"), "none");
    EXPECT_EQ(state->TaskOfLiveAllocation("by-hand").task_id, "u");
  }
}

TEST(DecisionSnapshotTest, KeepsTheIdentityTenancyAndRegistry) {
  testing::Cluster cluster;
  auto team = cluster.AddTeam();
  ASSERT_TRUE(team.ok());
  cluster.state.identity.sessions["sha"] = SessionRecord{team->alice, 99};
  cluster.state.identity.failures["bob"] = {1, 2, 3};
  cluster.state.registry.registered_checkpoints["uuid"] = 2;
  auto decoded = DecodeDecisionState(EncodeDecisionState(cluster.state, {}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const DecisionState& state = (*decoded)->state;
  EXPECT_EQ(state.identity.FindUser("alice")->id, team->alice);
  EXPECT_EQ(state.identity.sessions.at("sha").user_id, team->alice);
  EXPECT_EQ(state.identity.failures.at("bob").size(), 3u);
  ASSERT_NE(state.tenancy.FindWorkspace("team"), nullptr);
  EXPECT_EQ(state.tenancy.roles.at({team->bob, 2}), events::ROLE_VIEWER);
  EXPECT_NE(state.tenancy.FindWorkspace("Uncategorized"), nullptr);
  EXPECT_TRUE(state.IsCheckpointRegistered("uuid"));
}

}  // namespace
}  // namespace cairn::commands
