// Projector semantics on plain values: events in, views out, through the in-memory fold.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "base/encoding.h"
#include "commands/decision_state.h"
#include "events/envelope_util.h"
#include "projections/job_queue_projector.h"
#include "projections/projections.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"

namespace cairn {
namespace {

using testing::History;
using namespace testing;

TEST(TaskProjectorTest, SubmissionRecordsEverythingTheTaskAsked) {
  History history;
  history.Submit("t1", "j1", "gpu", 7, 2, "train resnet", "bob");
  ProjectionState state = Fold(history);
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.job_id(), "j1");
  EXPECT_EQ(task.task_type(), events::TASK_TYPE_COMMAND);
  EXPECT_EQ(task.description(), "train resnet");
  ASSERT_EQ(task.entrypoint_size(), 2);
  EXPECT_EQ(task.entrypoint(1), "train.py");
  EXPECT_EQ(task.user(), "bob");
  EXPECT_EQ(task.slots(), 2);
  EXPECT_EQ(task.resource_pool(), "gpu");
  EXPECT_EQ(task.priority(), 7);
  EXPECT_EQ(task.weight(), 1.0);
  EXPECT_EQ(task.state(), views::TASK_STATE_QUEUED);
  EXPECT_EQ(task.submit_time_unix_micros(), History::kStartMicros);
  EXPECT_EQ(task.config_json(), R"({"entrypoint":"python3 train.py"})");
  EXPECT_EQ(task.submitted_offset(), 0u);
  EXPECT_EQ(task.last_event_offset(), 0u);
  EXPECT_FALSE(task.has_exit_code());
  EXPECT_FALSE(task.kill_requested());
}

// A list's version moves with every change to a view of its user's tasks of its type, and only
// then: what lets a rendered list be served again while nothing it shows changed.
TEST(TaskProjectorTest, ListVersionMovesWithItsUsersTasksOnly) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 1, "", "bob");
  history.Submit("t2", "j2", "default", 42, 1, "", "alice");
  auto version = [&](ProjectionState& state, std::vector<std::string> users,
                     events::TaskType type = events::TASK_TYPE_COMMAND) {
    auto read = state.TaskListVersion(type, users);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? *read : 0;
  };
  ProjectionState submitted = Fold(history);
  const uint64_t bob = version(submitted, {"bob"});
  EXPECT_EQ(bob, 1u);  // t1's submission (offset 1; the agent's registration is 0)
  EXPECT_EQ(version(submitted, {"alice"}), 2u);
  EXPECT_EQ(version(submitted, {}), 2u) << "everyone's: the latest change of any";
  EXPECT_EQ(version(submitted, {"bob", "alice"}), 2u);
  EXPECT_EQ(version(submitted, {"carol"}), 0u) << "no tasks: no change yet";
  EXPECT_EQ(version(submitted, {"bob"}, events::TASK_TYPE_NOTEBOOK), 0u);

  history.Assign("t2", "al2", "a1", "i1", {0});
  ProjectionState alice_placed = Fold(history);
  EXPECT_EQ(version(alice_placed, {"bob"}), bob) << "alice's task moved, bob's list did not";
  EXPECT_EQ(version(alice_placed, {"alice"}), history.last_offset());

  history.Assign("t1", "al1", "a1", "i1", {1});
  ProjectionState bob_placed = Fold(history);
  EXPECT_EQ(version(bob_placed, {"bob"}), history.last_offset());
  EXPECT_EQ(version(bob_placed, {}), history.last_offset());
}

// One lifecycle, checked after every event.
TEST(TaskProjectorTest, LifecycleStepByStep) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 2);
  history.Assign("t1", "al1", "a1", "i1", {0, 3}, "most free slots");
  history.Start("t1", "al1", "a1", 4242);
  history.Kill("t1", "al1", "a1");
  history.Exit("t1", "al1", "a1", std::nullopt, 15, "killed by user");

  struct Step {
    views::TaskState state;
    bool kill_requested;
  };
  const std::vector<Step> expected = {
      {views::TASK_STATE_QUEUED, false},    {views::TASK_STATE_ASSIGNED, false},
      {views::TASK_STATE_RUNNING, false},   {views::TASK_STATE_TERMINATING, true},
      {views::TASK_STATE_TERMINATED, true},
  };
  ProjectionState state;
  ASSERT_TRUE(state.Apply(history.events()[0]).ok());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(state.Apply(history.events()[i + 1]).ok());
    TaskView task = MustGetTask(state, "t1");
    EXPECT_EQ(task.state(), expected[i].state) << "after event " << i + 1;
    EXPECT_EQ(task.kill_requested(), expected[i].kill_requested) << "after event " << i + 1;
    EXPECT_EQ(task.last_event_offset(), i + 1);
  }
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.allocation_id(), "al1");
  EXPECT_EQ(task.agent_id(), "a1");
  EXPECT_EQ(std::vector<int>(task.slot_ids().begin(), task.slot_ids().end()),
            (std::vector<int>{0, 3}));
  EXPECT_EQ(task.placement_reason(), "most free slots");
  EXPECT_EQ(task.pid(), 4242);
  EXPECT_EQ(task.start_time_unix_micros(), history.time_of(3));
  EXPECT_EQ(task.end_time_unix_micros(), history.time_of(5));
  EXPECT_FALSE(task.has_exit_code());
  ASSERT_TRUE(task.has_signal());
  EXPECT_EQ(task.signal(), 15);
  EXPECT_EQ(task.exit_reason(), "killed by user");
}

// A service is reachable from its TaskReady until its allocation ends; a stale report is not.
TEST(TaskProjectorTest, ReadinessLastsAsLongAsItsAllocation) {
  History history;
  history.Submit("nb", "nb", "default", 42, 1);
  history.Assign("nb", "al1", "a1", "i1", {0});
  history.Ready("nb", "al0", "a1", "127.0.0.1", 1111);  // another allocation's: ignored
  history.Start("nb", "al1", "a1", 7);
  history.Ready("nb", "al1", "a1", "10.0.0.5", 4242);
  history.Release("nb", "al1", "agent lost");
  history.Assign("nb", "al2", "a1", "i1", {0});
  const std::vector<std::pair<bool, int>> expected = {
      {false, 0}, {false, 0}, {false, 0}, {false, 0}, {true, 4242}, {false, 0}, {false, 0}};
  ProjectionState state;
  for (size_t i = 0; i < history.events().size(); ++i) {
    ASSERT_TRUE(state.Apply(history.events()[i]).ok());
    TaskView task = MustGetTask(state, "nb");
    EXPECT_EQ(task.ready(), expected[i].first) << "after event " << i;
    EXPECT_EQ(task.service_port(), expected[i].second) << "after event " << i;
    if (task.ready()) {
      EXPECT_EQ(task.service_host(), "10.0.0.5");
      EXPECT_EQ(task.service_user(), "alice");
      EXPECT_EQ(task.ready_time_unix_micros(), history.time_of(i));
    }
  }
}

TEST(TaskProjectorTest, ExitCodeZeroIsRecordedAsPresent) {
  History history;
  history.Submit("t1", "j1", "default", 42, 1);
  history.Assign("t1", "al1", "a1", "i1", {0});
  history.Start("t1", "al1", "a1", 7);
  history.Exit("t1", "al1", "a1", 0, std::nullopt, "exited");
  ProjectionState state = Fold(history);
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.state(), views::TASK_STATE_TERMINATED);
  ASSERT_TRUE(task.has_exit_code());
  EXPECT_EQ(task.exit_code(), 0);
  EXPECT_FALSE(task.has_signal());
}

TEST(TaskProjectorTest, KillOfAQueuedTaskKeepsItQueuedUntilItExits) {
  History history;
  history.Submit("t1", "j1", "default", 42, 1);
  history.Kill("t1", "", "");
  ProjectionState state = Fold(history);
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.state(), views::TASK_STATE_QUEUED);
  EXPECT_TRUE(task.kill_requested());
}

TEST(TaskProjectorTest, EventsAboutUnknownTasksOrStaleAllocationsAreIgnored) {
  History history;
  history.Assign("nobody", "al0", "a1", "i1", {0});
  history.Start("nobody", "al0", "a1", 1);
  history.Exit("nobody", "al0", "a1", 0, std::nullopt, "exited");
  history.Submit("t1", "j1", "default", 42, 1);
  history.Assign("t1", "al1", "a1", "i1", {0});
  history.Start("t1", "other-allocation", "a1", 99);
  history.Exit("t1", "other-allocation", "a1", 1, std::nullopt, "stale");
  ProjectionState state = Fold(history);
  auto nobody = state.GetTask("nobody");
  ASSERT_TRUE(nobody.ok());
  EXPECT_FALSE(nobody->has_value());
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.state(), views::TASK_STATE_ASSIGNED);
  EXPECT_EQ(task.pid(), 0);
  auto tasks = state.ListTasks();
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(tasks->size(), 1u);
}

TEST(TaskProjectorTest, ListIsInSubmissionOrder) {
  History history;
  for (const char* id : {"zeta", "alpha", "mid"}) history.Submit(id, id, "default", 42, 1);
  ProjectionState state = Fold(history);
  auto tasks = state.ListTasks();
  ASSERT_TRUE(tasks.ok());
  std::vector<std::string> ids;
  for (const auto& task : *tasks) ids.push_back(task.task_id());
  EXPECT_EQ(ids, (std::vector<std::string>{"zeta", "alpha", "mid"}));
}

TEST(TaskOrderProjectorTest, ListsEachTypesIdsInSubmissionOrderOnce) {
  History history;
  for (const char* id : {"zeta", "alpha", "mid"}) history.Submit(id, id, "default", 42, 1);
  history.Submit("trial", "exp", "default", 42, 1)
      .mutable_task_submitted()
      ->mutable_spec()
      ->set_task_type(events::TASK_TYPE_TRIAL);
  history.Submit("alpha", "alpha", "default", 42, 1);  // a repeat changes nothing
  ProjectionState state = Fold(history);
  auto ids_of = [&](events::TaskType type, size_t wanted) {
    std::vector<std::string> ids;
    Status visited = state.VisitTaskIds(type, [&](const std::string& id) {
      ids.push_back(id);
      return ids.size() < wanted;
    });
    EXPECT_TRUE(visited.ok()) << visited.ToString();
    return ids;
  };
  EXPECT_EQ(ids_of(events::TASK_TYPE_COMMAND, 10),
            (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(ids_of(events::TASK_TYPE_COMMAND, 2), (std::vector<std::string>{"zeta", "alpha"}))
      << "the walk stops when asked";
  EXPECT_EQ(ids_of(events::TASK_TYPE_TRIAL, 10), (std::vector<std::string>{"trial"}));
  EXPECT_TRUE(ids_of(events::TASK_TYPE_NOTEBOOK, 10).empty());
}

TEST(AgentProjectorTest, RegistrationAllocationsAndExits) {
  History history;
  history.Register("a1", "i1", "gpu", 8);
  history.Submit("t1", "j1", "gpu", 42, 2);
  history.Submit("t2", "j2", "gpu", 42, 1);
  history.Assign("t1", "al1", "a1", "i1", {0, 1});
  history.Assign("t2", "al2", "a1", "i1", {2});
  history.Exit("t1", "al1", "a1", 0, std::nullopt, "exited");
  ProjectionState state = Fold(history);
  auto agents = MustListAgents(state);
  ASSERT_EQ(agents.size(), 1u);
  const AgentView& agent = agents[0];
  EXPECT_EQ(agent.agent_id(), "a1");
  EXPECT_EQ(agent.incarnation(), "i1");
  EXPECT_EQ(agent.resource_pool(), "gpu");
  EXPECT_EQ(agent.slot_count(), 8);
  EXPECT_EQ(agent.devices_size(), 8);
  EXPECT_EQ(agent.hostname(), "a1.local");
  EXPECT_EQ(agent.version(), "0.1.0");
  EXPECT_EQ(agent.registered_time_unix_micros(), History::kStartMicros);
  EXPECT_TRUE(agent.connected());
  EXPECT_TRUE(agent.enabled());
  EXPECT_FALSE(agent.draining());
  ASSERT_EQ(agent.allocations_size(), 1);
  EXPECT_EQ(agent.allocations(0).allocation_id(), "al2");
  EXPECT_EQ(agent.allocations(0).task_id(), "t2");
  EXPECT_EQ(agent.allocations(0).slot_ids_size(), 1);
}

TEST(AgentProjectorTest, FlagsFollowEachEvent) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Disable("a1", /*drain=*/true);
  history.Enable("a1");
  history.Disable("a1", /*drain=*/false);
  history.Disconnect("a1", "i1");
  history.Register("a1", "i1", "default", 4, /*reconnect=*/true);
  history.Register("a1", "i2", "default", 4);

  struct Flags {
    bool connected, enabled, draining;
    const char* incarnation;
  };
  const std::vector<Flags> expected = {
      {true, true, false, "i1"},    // registered
      {true, false, true, "i1"},    // disabled, draining
      {true, true, false, "i1"},    // enabled
      {true, false, false, "i1"},   // disabled without drain
      {false, false, false, "i1"},  // disconnected
      {true, false, false, "i1"},   // the same process reconnects: operator flags stay
      {true, false, false, "i2"},   // a new process: operator flags stay too
  };
  ProjectionState state;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(state.Apply(history.events()[i]).ok());
    auto agents = MustListAgents(state);
    ASSERT_EQ(agents.size(), 1u);
    EXPECT_EQ(agents[0].connected(), expected[i].connected) << "after event " << i;
    EXPECT_EQ(agents[0].enabled(), expected[i].enabled) << "after event " << i;
    EXPECT_EQ(agents[0].draining(), expected[i].draining) << "after event " << i;
    EXPECT_EQ(agents[0].incarnation(), expected[i].incarnation) << "after event " << i;
  }
  EXPECT_EQ(MustListAgents(state)[0].registered_time_unix_micros(), history.time_of(6));
}

TEST(AgentProjectorTest, ReconnectKeepsAllocationsAndANewIncarnationStartsEmpty) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 1);
  history.Assign("t1", "al1", "a1", "i1", {0});
  history.Register("a1", "i1", "default", 4, /*reconnect=*/true);
  ProjectionState state = Fold(history);
  EXPECT_EQ(MustListAgents(state)[0].allocations_size(), 1);

  history.Register("a1", "i2", "default", 4);
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  EXPECT_EQ(MustListAgents(state)[0].allocations_size(), 0);
  // An assignment addressed to the old process is stale.
  history.Assign("t2", "al-stale", "a1", "i1", {1});
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  EXPECT_EQ(MustListAgents(state)[0].allocations_size(), 0);
  history.Assign("t3", "al3", "a1", "i2", {1});
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  EXPECT_EQ(MustListAgents(state)[0].allocations_size(), 1);
}

TEST(AgentProjectorTest, EventsAboutUnknownAgentsAreIgnored) {
  History history;
  history.Disable("ghost", true);
  history.Enable("ghost");
  history.Disconnect("ghost", "");
  history.Assign("t1", "al1", "ghost", "i1", {0});
  history.Exit("t1", "al1", "ghost", 0, std::nullopt, "exited");
  history.Register("a1", "i1", "default", 4);
  history.Disconnect("a1", "some-older-incarnation");
  ProjectionState state = Fold(history);
  auto agents = MustListAgents(state);
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].agent_id(), "a1");
  EXPECT_TRUE(agents[0].connected());
}

TEST(TaskProjectorTest, PreemptionReleaseAndBackfilledReassignment) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 2);
  history.Assign("t1", "al1", "a1", "i1", {0, 1}, "best fit on agent a1");
  history.Start("t1", "al1", "a1", 11);
  history.Preempt("t1", "al1", "a1", "i1", "preempted for job j9 (priority 1)",
                  History::kStartMicros + 99);
  history.Release("t1", "al1", "preempted; exited with code 0; back in the queue");
  history.Assign("t1", "al2", "a1", "i1", {3}, "backfilled on agent a1")
      .mutable_allocation_assigned()
      ->set_backfilled(true);
  history.Kill("t1", "al2", "a1");
  history.Exit("t1", "al2", "a1", std::nullopt, 9, "killed by signal 9");

  struct Step {
    views::TaskState state;
    std::string latest_reason;
    std::string allocation;
    bool preemption_pending;
    bool backfilled;
  };
  const std::vector<Step> expected = {
      {views::TASK_STATE_ASSIGNED, "best fit on agent a1", "al1", false, false},
      {views::TASK_STATE_RUNNING, "best fit on agent a1", "al1", false, false},
      {views::TASK_STATE_RUNNING, "preempted for job j9 (priority 1)", "al1", true, false},
      {views::TASK_STATE_QUEUED, "preempted; exited with code 0; back in the queue", "", false,
       false},
      {views::TASK_STATE_ASSIGNED, "backfilled on agent a1", "al2", false, true},
      {views::TASK_STATE_TERMINATING, "user:alice asked", "al2", false, true},
      {views::TASK_STATE_TERMINATED, "killed by signal 9", "al2", false, true},
  };
  ProjectionState state;
  ASSERT_TRUE(state.Apply(history.events()[0]).ok());
  ASSERT_TRUE(state.Apply(history.events()[1]).ok());
  EXPECT_EQ(MustGetTask(state, "t1").latest_reason(), "") << "no decision yet";
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(state.Apply(history.events()[i + 2]).ok());
    TaskView task = MustGetTask(state, "t1");
    EXPECT_EQ(task.state(), expected[i].state) << "step " << i;
    EXPECT_EQ(task.latest_reason(), expected[i].latest_reason) << "step " << i;
    EXPECT_EQ(task.allocation_id(), expected[i].allocation) << "step " << i;
    EXPECT_EQ(task.preemption_pending(), expected[i].preemption_pending) << "step " << i;
    EXPECT_EQ(task.backfilled(), expected[i].backfilled) << "step " << i;
  }
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.releases(), 1);
  EXPECT_EQ(task.placement_reason(), "backfilled on agent a1");
  EXPECT_EQ(std::vector<int>(task.slot_ids().begin(), task.slot_ids().end()),
            (std::vector<int>{3}));
  // The agent gave the released allocation's slots back and ran the second one until the exit.
  EXPECT_EQ(MustListAgents(state)[0].allocations_size(), 0);
}

TEST(TaskProjectorTest, APreemptionOfAnotherAllocationIsStale) {
  History history;
  history.Submit("t1", "j1", "default", 42, 1);
  history.Preempt("t1", "al0", "a1", "i1", "too early", 0);  // queued: nothing to preempt
  history.Assign("t1", "al1", "a1", "i1", {0});
  history.Preempt("t1", "al-old", "a1", "i1", "stale", 0);
  history.Release("t1", "al-old", "stale");
  ProjectionState state = Fold(history);
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.state(), views::TASK_STATE_ASSIGNED);
  EXPECT_FALSE(task.preemption_pending());
  EXPECT_EQ(task.releases(), 0);
}

TEST(TaskProjectorTest, AGangRecordsItsPartsAndThePartsThatEnded) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Register("a2", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 8);
  history.AssignGang(
      "t1", "al1",
      {History::Part("a1", "i1", {0, 1, 2, 3}), History::Part("a2", "i1", {0, 1, 2, 3})});
  ProjectionState state = Fold(history);
  TaskView task = MustGetTask(state, "t1");
  EXPECT_EQ(task.agent_id(), "a1");
  ASSERT_EQ(task.parts_size(), 2);
  EXPECT_EQ(task.parts(1).agent_id(), "a2");
  for (const auto& agent : MustListAgents(state)) {
    ASSERT_EQ(agent.allocations_size(), 1) << agent.agent_id();
    EXPECT_EQ(agent.allocations(0).slot_ids_size(), 4) << agent.agent_id();
  }

  history.PartExit("t1", "al1", "a2", 0);
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  task = MustGetTask(state, "t1");
  EXPECT_EQ(std::vector<std::string>(task.parts_exited().begin(), task.parts_exited().end()),
            (std::vector<std::string>{"a2"}));
  auto agents = MustListAgents(state);
  EXPECT_EQ(agents[0].allocations_size(), 1) << "a1 still runs its part";
  EXPECT_EQ(agents[1].allocations_size(), 0) << "a2's part ended";

  // The exit names only the first agent; every part ends with it.
  history.Exit("t1", "al1", "a1", 0, std::nullopt, "exited");
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  for (const auto& agent : MustListAgents(state)) {
    EXPECT_EQ(agent.allocations_size(), 0) << agent.agent_id();
  }
  EXPECT_EQ(MustGetTask(state, "t1").latest_reason(), "exited");
}

TEST(FencingTest, EventsOfAnOlderEpochAfterANewerClaimAreIgnored) {
  History history;
  history.Claim(1);
  history.Submit("t1", "j1", "default", 42, 1);
  history.Claim(2);
  history.set_epoch(1);  // the old master did not notice yet
  history.Submit("t-fenced", "j-fenced", "default", 42, 1);
  history.Assign("t1", "al1", "a1", "i1", {0});
  history.Claim(1);  // a stale claim is fenced too; it must not lower the epoch
  history.set_epoch(2);
  history.Submit("t2", "j2", "default", 42, 1);
  ProjectionState state = Fold(history);

  auto fenced = state.GetTask("t-fenced");
  ASSERT_TRUE(fenced.ok());
  EXPECT_FALSE(fenced->has_value());
  EXPECT_EQ(MustGetTask(state, "t1").state(), views::TASK_STATE_QUEUED);
  EXPECT_TRUE(MustGetTask(state, "t2").task_id() == "t2");
  EXPECT_EQ(JobIds(MustQueue(state, "")), (std::vector<std::string>{"j1", "j2"}));
  EXPECT_EQ(state.next_offset(), history.events().size());
}

TEST(FencingTest, EventsBeforeAnyClaimAreApplied) {
  History history;
  history.set_epoch(0);
  history.Submit("t1", "j1", "default", 42, 1);
  ProjectionState state = Fold(history);
  EXPECT_EQ(MustGetTask(state, "t1").state(), views::TASK_STATE_QUEUED);
}

TEST(UnknownPayloadTest, IsSkippedByEveryProjectorAndChangesNoView) {
  History with_unknown("ev");
  History without("ev");
  with_unknown.Submit("t1", "j1", "default", 42, 1);
  without.Submit("t1", "j1", "default", 42, 1);
  events::Envelope& unknown = with_unknown.Unknown();
  ASSERT_EQ(unknown.payload_case(), events::Envelope::PAYLOAD_NOT_SET);
  ASSERT_FALSE(unknown.GetReflection()->GetUnknownFields(unknown).empty());

  ProjectionState a = Fold(with_unknown);
  ProjectionState b = Fold(without);
  EXPECT_EQ(a.next_offset(), 2u);
  for (const auto& name : projections::ProjectorNames()) {
    auto digest_a = a.Digest(name);
    auto digest_b = b.Digest(name);
    ASSERT_TRUE(digest_a.ok() && digest_b.ok());
    EXPECT_EQ(*digest_a, *digest_b) << name;
  }
}

TEST(ProjectionStateTest, RejectsAGapInOffsets) {
  History history;
  history.Submit("t1", "j1", "default", 42, 1);
  history.Submit("t2", "j2", "default", 42, 1);
  ProjectionState state;
  Status status = state.Apply(history.events()[1]);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
}

TEST(DigestTest, DiffersWhenAViewDiffersAndIsStableOtherwise) {
  History one;
  one.AddWorkload(3, 40);
  ProjectionState first = Fold(one);
  ProjectionState second = Fold(one);
  History other;
  other.AddWorkload(3, 41);
  ProjectionState third = Fold(other);
  for (const auto& name : projections::ProjectorNames()) {
    auto d1 = first.Digest(name);
    auto d2 = second.Digest(name);
    auto d3 = third.Digest(name);
    ASSERT_TRUE(d1.ok() && d2.ok() && d3.ok());
    EXPECT_EQ(d1->size(), 64u);
    EXPECT_EQ(*d1, *d2) << name;
    EXPECT_NE(*d1, *d3) << name;
  }
}

// The digest is fed in chunks (DigestViews): it must still be the SHA-256 of every framed pair in
// key order, bookkeeping left out, however the pairs fall across the chunks' edges.
TEST(DigestTest, IsTheSha256OfEveryFramedViewInKeyOrderAcrossManyChunks) {
  projections::MemoryViewStore store;
  std::map<std::string, std::string> views;
  for (int i = 0; i < 3000; ++i) {  // about 400 KiB: several chunks, pairs cut at their edges
    std::string key = "view/" + std::to_string(i * 7919 % 3001);
    std::string value(static_cast<size_t>(37 + i % 211), static_cast<char>('a' + i % 26));
    ASSERT_TRUE(store.Put(key, value).ok());
    views[key] = value;
  }
  ASSERT_TRUE(store.Put(projections::kCheckpointKey, "not a view").ok());
  std::string framed;
  for (const auto& [key, value] : views) {
    for (const std::string* part : {&key, &value}) {
      projections::AppendBigEndian64(&framed, part->size());
      framed += *part;
    }
  }
  ASSERT_GT(framed.size(), size_t{256} << 10);
  auto expected = Sha256Hex(framed);
  auto digest = projections::DigestViews(store);
  ASSERT_TRUE(expected.ok() && digest.ok());
  EXPECT_EQ(*digest, *expected);
}

// The digest and rebuild tests run over AddWorkload: it must hold every kind of event the
// projectors fold, or their equality would prove nothing about those events.
TEST(DigestTest, TheWorkloadHoldsEverySchedulingEvent) {
  History history;
  history.AddWorkload(4, 60);
  std::set<std::string> types;
  for (const auto& event : history.events()) types.insert(PayloadTypeName(event));
  for (const char* type :
       {"ResourcePoolsConfigured", "JobQueueChanged", "PreemptionRequested", "AllocationReleased",
        "AllocationPartExited", "AllocationAssigned", "TaskExited", "KillRequested",
        "PaiJobSubmitted", "PaiJobAttemptStarted", "PaiJobStopRequested", "PaiJobAttemptEnded"}) {
    EXPECT_TRUE(types.count(type)) << type;
  }
  bool gang = false, backfilled = false;
  for (const auto& event : history.events()) {
    gang |= event.has_allocation_assigned() && event.allocation_assigned().parts_size() > 1;
    backfilled |= event.has_allocation_assigned() && event.allocation_assigned().backfilled();
  }
  EXPECT_TRUE(gang);
  EXPECT_TRUE(backfilled);
}

}  // namespace
}  // namespace cairn
