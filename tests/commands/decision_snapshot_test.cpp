// Decision snapshots (commands/decision_snapshot.h): a state decoded from a snapshot at any
// offset and folded on with the log's tail is the state a fold of the whole log gives. The
// decisions made from decoded states are checked apart: commands_snapshot_test runs every decider
// test with the state round-tripped through a snapshot before each command.
#include "commands/decision_snapshot.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

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

// A record stored twice is refused, not merged: the second copy of a job would have been dropped
// and its tasks attached to the first.
TEST(DecisionSnapshotTest, RefusesAJobStoredTwice) {
  DecisionState state;
  events::Envelope submitted;
  submitted.set_offset(0);
  submitted.mutable_task_submitted()->set_task_id("t");
  submitted.mutable_task_submitted()->mutable_resources()->set_slots(1);
  submitted.mutable_task_submitted()->mutable_resources()->set_resource_pool(kDefaultPool);
  Apply(state, submitted);
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
