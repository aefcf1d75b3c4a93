// The decider: commands in, events (and the scheduling pass they trigger) out.
#include "commands/decider.h"

#include <gtest/gtest.h>

#include "events/envelope_util.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

class DeciderTest : public ::testing::Test {
 protected:
  // Decides `command`, applies its events and the scheduling pass that follows, like the writer.
  Result<Decision> Run(const Command& command, const std::string& key = "") {
    return cluster_.Run(command, key);
  }

  void Append(events::Envelope event, const std::string& key) { cluster_.Append(event, key); }

  void RegisterAgent(const std::string& id, int slots, const std::string& incarnation = "i1",
                     const std::string& pool = "default") {
    ASSERT_TRUE(Run(testing::Agent(id, slots, pool, incarnation)).ok());
  }

  // `force` lets a test queue work before any agent has joined.
  Result<Decision> Submit(const std::string& id, int slots, int priority = 0,
                          const std::string& key = "", bool force = false) {
    return Run(testing::Submission(id, {.slots = slots, .priority = priority, .force = force}),
               key);
  }

  const TaskRecord& Task(const std::string& id) { return cluster_.Task(id); }
  std::vector<events::Envelope> Last(events::Envelope::PayloadCase payload) {
    return cluster_.Last(payload);
  }

  std::vector<std::string> EventNames() {
    std::vector<std::string> names;
    for (const auto& e : cluster_.last_events) names.push_back(PayloadTypeName(e));
    return names;
  }

  testing::Cluster cluster_;
  DecisionState& state_ = cluster_.state;
  std::vector<events::Envelope>& last_events_ = cluster_.last_events;
};

TEST_F(DeciderTest, QueuedTaskIsPlacedWhenAnAgentRegisters) {
  ASSERT_TRUE(Submit("t1", 1, 0, "", /*force=*/true).ok());
  EXPECT_EQ(Task("t1").state, TaskState::kQueued);
  RegisterAgent("a1", 2);
  EXPECT_EQ(Task("t1").state, TaskState::kAssigned);
  EXPECT_EQ(Task("t1").agent_id, "a1");
  EXPECT_EQ(Task("t1").allocation_id, "t1.1");
  EXPECT_EQ(Task("t1").where().slot_ids, std::vector<int32_t>{0});
  // The default pool is fair share: the reason says so, and names the job's share (1 of 2 slots:
  // its whole demand).
  const std::string& reason = last_events_.back().allocation_assigned().reason();
  EXPECT_NE(reason.find("fair share"), std::string::npos) << reason;
  EXPECT_NE(reason.find("1 of 2 slots"), std::string::npos) << reason;
}

TEST_F(DeciderTest, LogRetentionExpiresOnlyEndedTasksAndOnlyForAdmins) {
  RegisterAgent("a1", 2);
  ASSERT_TRUE(Submit("ended", 1).ok());
  ASSERT_TRUE(Submit("running", 1).ok());
  ASSERT_TRUE(Run(testing::Exit("ended")).ok());
  ExpireTaskLogs expire{{"ended", "running", "unknown"}, "log_retention_days 0 (master.yaml)"};
  EXPECT_EQ(cluster_.Run(expire, "", "user:other").status().code(), StatusCode::kPermissionDenied);
  ASSERT_TRUE(cluster_.Run(expire, "", "system:log-retention").ok());
  auto expired = Last(events::Envelope::kTaskLogsExpired);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(std::vector<std::string>(expired[0].task_logs_expired().task_ids().begin(),
                                     expired[0].task_logs_expired().task_ids().end()),
            std::vector<std::string>{"ended"});
  EXPECT_EQ(expired[0].task_logs_expired().reason(), "log_retention_days 0 (master.yaml)");
  auto none = cluster_.Run(ExpireTaskLogs{{"running"}, "x"}, "", "user:test");  // an admin
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->events.empty());
}

TEST_F(DeciderTest, BestFitPicksTheAgentWithFewestFreeSlots) {
  RegisterAgent("big", 8);
  RegisterAgent("small", 2);
  ASSERT_TRUE(Submit("t1", 2).ok());
  EXPECT_EQ(Task("t1").agent_id, "small");
  ASSERT_TRUE(Submit("t2", 2).ok());
  EXPECT_EQ(Task("t2").agent_id, "big");
  EXPECT_EQ(Task("t2").where().slot_ids, (std::vector<int32_t>{0, 1}));
}

TEST_F(DeciderTest, PriorityThenSubmissionOrderDecidesWhoGetsScarceSlots) {
  ASSERT_TRUE(
      Run(testing::Pools({testing::Pool("default", {.type = events::SCHEDULER_TYPE_PRIORITY})}))
          .ok());
  ASSERT_TRUE(Submit("low", 1, 50, "", true).ok());
  ASSERT_TRUE(Submit("high-late", 1, 10, "", true).ok());
  ASSERT_TRUE(Submit("high-early-equal", 1, 50, "", true).ok());
  RegisterAgent("a1", 2);
  EXPECT_EQ(Task("high-late").state, TaskState::kAssigned);
  EXPECT_EQ(Task("low").state, TaskState::kAssigned);
  EXPECT_EQ(Task("high-early-equal").state, TaskState::kQueued);
}

TEST_F(DeciderTest, ATaskThatCanNeverFitIsRefusedWithTheReason) {
  RegisterAgent("a1", 2);
  auto refused = Submit("huge", 3);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  const std::string& message = refused.status().message();
  EXPECT_NE(message.find("needs 3 slots but can never fit in resource pool default"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("with 2 slots, 2 slots in all"), std::string::npos) << message;
  EXPECT_NE(message.find("set force to queue it anyway"), std::string::npos) << message;
  EXPECT_EQ(state_.tasks.count("huge"), 0u);
  // A zero-slot task needs an agent that takes zero-slot containers.
  ASSERT_TRUE(
      Run(testing::Pools({testing::Pool("default", {.max_aux_containers_per_agent = 0})})).ok());
  auto no_aux = Submit("cpu", 0);
  ASSERT_EQ(no_aux.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_aux.status().message().find("takes no zero-slot tasks"), std::string::npos)
      << no_aux.status().message();
}

TEST_F(DeciderTest, APoolNoAgentJoinedYetQueuesTasksUntilAgentsCome) {
  // Nothing is known about the pool's capacity yet: the task waits instead of being refused.
  ASSERT_TRUE(Submit("t1", 1).ok());
  EXPECT_EQ(Task("t1").state, TaskState::kQueued);
  RegisterAgent("a1", 2);
  EXPECT_EQ(Task("t1").state, TaskState::kAssigned);
  // Once an agent is known, a task bigger than the pool can ever give is refused.
  auto refused = Submit("t2", 3);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("1 agent with 2 slots"), std::string::npos)
      << refused.status().message();
}

TEST_F(DeciderTest, AForcedTaskTooBigWaitsWithoutBlockingSmallerOnes) {
  RegisterAgent("a1", 2);
  ASSERT_TRUE(Submit("huge", 4, 0, "", /*force=*/true).ok());
  EXPECT_EQ(Task("huge").state, TaskState::kQueued);
  ASSERT_TRUE(Submit("small", 1).ok());
  EXPECT_EQ(Task("huge").state, TaskState::kQueued);
  EXPECT_EQ(Task("small").state, TaskState::kAssigned);
  // When agents that make room join, the forced task runs: two idle 2-slot agents are a gang.
  RegisterAgent("a2", 2);
  RegisterAgent("a3", 2);
  EXPECT_EQ(Task("huge").state, TaskState::kAssigned);
  EXPECT_EQ(Task("huge").where().parts.size(), 2u);
}

TEST_F(DeciderTest, AgentsJoinOnlyConfiguredPools) {
  auto refused = Run(testing::Agent("g1", 8, "gpu"));
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find(
                "resource pool gpu is not configured on this master (configured pools: default)"),
            std::string::npos)
      << refused.status().message();
  ASSERT_TRUE(Run(testing::Pools({testing::Pool("default"), testing::Pool("gpu")})).ok());
  RegisterAgent("g1", 8, "i1", "gpu");
  EXPECT_EQ(state_.agents.at("g1").resource_pool, "gpu");
  // An agent that names no pool joins "default".
  auto unnamed = Run(testing::Agent("c1", 1, ""));
  ASSERT_TRUE(unnamed.ok());
  EXPECT_EQ(state_.agents.at("c1").resource_pool, "default");
}

TEST_F(DeciderTest, ZeroSlotTasksNeedNoSlots) {
  RegisterAgent("a1", 1);
  ASSERT_TRUE(Submit("gpu", 1).ok());
  ASSERT_TRUE(Submit("cpu", 0).ok());
  EXPECT_EQ(Task("cpu").state, TaskState::kAssigned);
  EXPECT_TRUE(Task("cpu").where().slot_ids.empty());
}

TEST_F(DeciderTest, ExitFreesSlotsForTheNextTask) {
  RegisterAgent("a1", 1);
  ASSERT_TRUE(Submit("first", 1).ok());
  ASSERT_TRUE(Submit("second", 1).ok());
  EXPECT_EQ(Task("second").state, TaskState::kQueued);
  ASSERT_TRUE(Run(ReportTaskStarted{"first.1", "first", "a1", 7}).ok());
  ReportTaskExited exited{"first.1", "first", "a1", 0, std::nullopt, ""};
  ASSERT_TRUE(Run(exited).ok());
  EXPECT_EQ(Task("first").state, TaskState::kExited);
  EXPECT_EQ(Task("second").state, TaskState::kAssigned);
  EXPECT_EQ(EventNames(), (std::vector<std::string>{"TaskExited", "AllocationAssigned"}));
}

TEST_F(DeciderTest, KillOfAQueuedTaskEndsItAtOnce) {
  ASSERT_TRUE(Submit("t1", 1, 0, "", true).ok());
  ASSERT_TRUE(Run(KillTask{"t1", ""}).ok());
  EXPECT_EQ(EventNames(), (std::vector<std::string>{"KillRequested", "TaskExited"}));
  EXPECT_EQ(Task("t1").state, TaskState::kExited);
  EXPECT_EQ(state_.QueuedTaskCount(), 0u);
  EXPECT_TRUE(state_.queues.empty());
}

TEST_F(DeciderTest, KillOfARunningTaskOrdersTheAgentAndIsIdempotent) {
  RegisterAgent("a1", 1);
  ASSERT_TRUE(Submit("t1", 1).ok());
  ASSERT_TRUE(Run(ReportTaskStarted{"t1.1", "t1", "a1", 7}).ok());
  ASSERT_TRUE(Run(KillTask{"t1", ""}).ok());
  ASSERT_EQ(EventNames(), std::vector<std::string>{"KillRequested"});
  EXPECT_EQ(last_events_[0].kill_requested().agent_id(), "a1");
  EXPECT_EQ(last_events_[0].kill_requested().allocation_id(), "t1.1");
  EXPECT_EQ(Task("t1").state, TaskState::kTerminating);
  auto again = Run(KillTask{"t1", ""});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->events.empty());
}

TEST_F(DeciderTest, AnInteractiveTaskIsReadyOnceItsServiceAnswers) {
  RegisterAgent("a1", 1);
  SubmitTask notebook = testing::Submission("nb", {.type = events::TASK_TYPE_NOTEBOOK});
  // The agent chooses a notebook's program: one given by the user is refused.
  notebook.spec.add_entrypoint("sh");
  EXPECT_EQ(Run(notebook).status().code(), StatusCode::kInvalidArgument);
  notebook.spec.clear_entrypoint();
  ASSERT_TRUE(Run(notebook).ok());
  ASSERT_TRUE(Submit("cmd", 0).ok());
  const ReportTaskReady ready{"nb.1", "nb", "a1", "127.0.0.1", 4242, "alice"};
  // Not before it started.
  EXPECT_EQ(Run(ready).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Run(ReportTaskStarted{"nb.1", "nb", "a1", 7}).ok());
  auto first = Run(ready);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(EventNames(), std::vector<std::string>{"TaskReady"});
  const auto& event = first->events[0].task_ready();
  EXPECT_EQ(event.allocation_id(), "nb.1");
  EXPECT_EQ(event.service_host(), "127.0.0.1");
  EXPECT_EQ(event.service_port(), 4242);
  EXPECT_EQ(event.service_user(), "alice");
  EXPECT_TRUE(Task("nb").ready);
  // A repeat (the agent's retry) changes nothing.
  auto again = Run(ready);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->events.empty());
  // Another agent, a bad port, a command: refused.
  EXPECT_EQ(Run(ReportTaskReady{"nb.1", "nb", "a2", "127.0.0.1", 4242, ""}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Run(ReportTaskReady{"nb.1", "nb", "a1", "127.0.0.1", 70000, ""}).status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(Run(ReportTaskStarted{"cmd.1", "cmd", "a1", 8}).ok());
  EXPECT_EQ(Run(ReportTaskReady{"cmd.1", "cmd", "a1", "127.0.0.1", 1, ""}).status().code(),
            StatusCode::kInvalidArgument);
  // Once it exited, a late report is about an allocation that ended.
  ASSERT_TRUE(Run(ReportTaskExited{"nb.1", "nb", "a1", 0, std::nullopt, ""}).ok());
  EXPECT_FALSE(Task("nb").ready);
  EXPECT_EQ(Run(ready).status().code(), StatusCode::kFailedPrecondition);
}

// Determined's det task pause|unpause, built as Slurm's hold and release: a paused generic task
// and its descendants leave the queue, a running one is killed and released back to it held, and
// unpausing puts them back at their old positions. A kill takes the descendants along.
TEST_F(DeciderTest, AGenericTaskTreePausesOutOfTheQueueAndUnpausesBackIntoIt) {
  RegisterAgent("a1", 1);
  auto generic = [](const std::string& id, const std::string& parent, bool no_pause) {
    SubmitTask submit = testing::Submission(id, {.type = events::TASK_TYPE_GENERIC, .force = true});
    submit.spec.mutable_generic()->set_parent_task_id(parent);
    submit.spec.mutable_generic()->set_no_pause(no_pause);
    return submit;
  };
  ASSERT_TRUE(Run(generic("root", "", false)).ok());
  ASSERT_TRUE(Run(generic("child", "root", false)).ok());
  ASSERT_TRUE(Run(generic("steady", "root", true)).ok());
  ASSERT_TRUE(Run(testing::Submission("cmd", {.force = true})).ok());
  EXPECT_EQ(Task("root").state, TaskState::kAssigned);
  EXPECT_EQ(Run(generic("orphan", "nobody", false)).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Run(HoldTask{"cmd", true, "test"}).status().code(), StatusCode::kFailedPrecondition)
      << "only generic tasks pause";
  EXPECT_EQ(Run(HoldTask{"steady", true, "test"}).status().code(), StatusCode::kFailedPrecondition)
      << "no_pause";

  ASSERT_TRUE(Run(HoldTask{"root", true, "test"}).ok());
  EXPECT_TRUE(Task("root").held);
  EXPECT_TRUE(Task("root").kill_requested);
  EXPECT_TRUE(Task("child").held);
  EXPECT_FALSE(Task("steady").held) << "a no_pause descendant runs on";
  EXPECT_EQ(Run(HoldTask{"root", false, "test"}).status().code(), StatusCode::kFailedPrecondition)
      << "still stopping for its pause";
  // Its process ends: released back to the task, which stays held; the slot goes past the held
  // child to the next in the queue.
  ASSERT_TRUE(Run(ReportTaskExited{"", "root", "a1", std::nullopt, 15, ""}).ok());
  ASSERT_EQ(Last(events::Envelope::kAllocationReleased).size(), 1u);
  EXPECT_EQ(Task("root").state, TaskState::kQueued);
  EXPECT_TRUE(Task("root").held);
  EXPECT_EQ(Task("child").state, TaskState::kQueued);
  EXPECT_EQ(Task("steady").state, TaskState::kAssigned);
  EXPECT_EQ(Run(HoldTask{"root", true, "test"}).status().code(), StatusCode::kFailedPrecondition)
      << "already paused";

  ASSERT_TRUE(Run(HoldTask{"root", false, "test"}).ok());
  EXPECT_FALSE(Task("root").held);
  EXPECT_FALSE(Task("child").held);
  ASSERT_TRUE(Run(ReportTaskExited{"", "steady", "a1", 0, std::nullopt, ""}).ok());
  EXPECT_EQ(Task("root").state, TaskState::kAssigned) << "back at its old position, before cmd";
  EXPECT_EQ(Task("root").allocation_count, 2);

  // Only one who may change a task hangs another under it (a kill of the tree reaches it).
  EXPECT_EQ(cluster_.Run(generic("stranger", "root", false), "", "user:other").status().code(),
            StatusCode::kPermissionDenied);
  // A kill while the task stops for its pause ends it instead of releasing it held.
  ASSERT_TRUE(Run(HoldTask{"root", true, "test"}).ok());
  ASSERT_TRUE(Run(KillTask{"root", "killed by test"}).ok());
  EXPECT_FALSE(Task("root").held);
  EXPECT_EQ(Task("child").state, TaskState::kExited) << "a kill takes the descendants along";
  ASSERT_TRUE(Run(ReportTaskExited{"", "root", "a1", std::nullopt, 15, ""}).ok());
  EXPECT_EQ(Task("root").state, TaskState::kExited);
  EXPECT_EQ(Task("cmd").state, TaskState::kAssigned);
}

TEST_F(DeciderTest, ReportsAreIdempotentAndValidated) {
  RegisterAgent("a1", 1);
  ASSERT_TRUE(Submit("t1", 1).ok());
  ASSERT_TRUE(Run(ReportTaskStarted{"t1.1", "t1", "a1", 7}).ok());
  auto duplicate = Run(ReportTaskStarted{"t1.1", "t1", "a1", 7});
  ASSERT_TRUE(duplicate.ok());
  EXPECT_TRUE(duplicate->events.empty());
  EXPECT_EQ(Run(ReportTaskStarted{"nope.1", "nope", "a1", 7}).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Run(ReportTaskStarted{"t1.1", "t1", "other-agent", 7}).status().code(),
            StatusCode::kFailedPrecondition);
  ReportTaskExited exited{"t1.1", "t1", "a1", 3, std::nullopt, ""};
  auto first = Run(exited);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->events.size(), 1u);
  EXPECT_EQ(first->events[0].task_exited().exit_code(), 3);
  EXPECT_EQ(first->events[0].task_exited().reason(), "exited with code 3");
  auto second = Run(exited);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->events.empty());
}

TEST_F(DeciderTest, SignalExitsAreNamed) {
  RegisterAgent("a1", 1);
  ASSERT_TRUE(Submit("t1", 1).ok());
  ASSERT_TRUE(Run(KillTask{"t1", ""}).ok());
  auto exited = Run(ReportTaskExited{"t1.1", "t1", "a1", std::nullopt, 15, ""});
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(exited->events[0].task_exited().reason(),
            "killed by signal 15 (SIGTERM) after a kill request");
}

TEST_F(DeciderTest, SubmissionsWithASeenIdempotencyKeyChangeNothing) {
  RegisterAgent("a1", 1);
  ASSERT_TRUE(Submit("t1", 1, 0, "key-1").ok());
  auto retry = Submit("t2", 1, 0, "key-1");
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->events.empty());
  EXPECT_EQ(retry->entity_id, "t1");
  EXPECT_EQ(state_.tasks.count("t2"), 0u);
  // The same key from another caller, or for another kind of request, is refused.
  auto other_user = Decide(state_, testing::OneSlotSubmit("t3"), {"user:other", "r", "key-1", 1});
  EXPECT_EQ(other_user.status().code(), StatusCode::kAlreadyExists);
  auto other_command = Decide(state_, KillTask{"t1", ""}, {"user:test", "r", "key-1", 1});
  EXPECT_EQ(other_command.status().code(), StatusCode::kAlreadyExists);
}

TEST_F(DeciderTest, BadSubmissionsAreRefusedWithReasons) {
  RegisterAgent("a1", 1);
  SubmitTask no_entrypoint;
  no_entrypoint.task_id = "t1";
  EXPECT_EQ(Run(no_entrypoint).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Submit("t2", -1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Submit("t3", 1, 100).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Submit("bad/id", 1).status().code(), StatusCode::kInvalidArgument);
  SubmitTask unknown_pool;
  unknown_pool.task_id = "t4";
  unknown_pool.spec.add_entrypoint("true");
  unknown_pool.resources.set_resource_pool("gpu");
  auto refused = Run(unknown_pool);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("resource pool gpu does not exist"), std::string::npos);
  ASSERT_TRUE(Submit("t5", 1).ok());
  EXPECT_EQ(Submit("t5", 1).status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(state_.tasks.count("t5"));
  EXPECT_EQ(state_.tasks.size(), 1u);
}

TEST_F(DeciderTest, ANewAgentIncarnationEndsTheOldOnesTasks) {
  RegisterAgent("a1", 1, "old");
  ASSERT_TRUE(Submit("t1", 1).ok());
  ASSERT_EQ(Task("t1").agent_id, "a1");
  RegisterAgent("a1", 1, "new");
  EXPECT_EQ(Task("t1").state, TaskState::kExited);
  EXPECT_EQ(EventNames(), (std::vector<std::string>{"TaskExited", "AgentRegistered"}));
  EXPECT_NE(last_events_[0].task_exited().reason().find("restarted"), std::string::npos);
}

TEST_F(DeciderTest, ReRegisteringTheSameIncarnationKeepsTasks) {
  RegisterAgent("a1", 1, "same");
  ASSERT_TRUE(Submit("t1", 1).ok());
  auto unchanged = Run(commands::RegisterAgent{[] {
    events::AgentRegistered r;
    r.set_agent_id("a1");
    r.set_incarnation("same");
    r.set_slot_count(1);
    return r;
  }()});
  ASSERT_TRUE(unchanged.ok());
  EXPECT_TRUE(unchanged->events.empty());
  ASSERT_TRUE(Run(DisconnectAgent{"a1", "same", "no heartbeat"}).ok());
  EXPECT_FALSE(state_.agents.at("a1").connected);
  RegisterAgent("a1", 1, "same");
  EXPECT_TRUE(last_events_.back().agent_registered().reconnect());
  EXPECT_EQ(Task("t1").state, TaskState::kAssigned);
}

TEST_F(DeciderTest, DisconnectedAndDisabledAgentsGetNoWork) {
  RegisterAgent("a1", 1, "i1");
  ASSERT_TRUE(Run(DisconnectAgent{"a1", "i1", "no heartbeat"}).ok());
  ASSERT_TRUE(Submit("t1", 1).ok());
  EXPECT_EQ(Task("t1").state, TaskState::kQueued);
  RegisterAgent("a2", 1, "i2");
  EXPECT_EQ(Task("t1").agent_id, "a2");
  ASSERT_TRUE(Run(DisableAgent{"a2", false}).ok());
  EXPECT_EQ(Task("t1").state, TaskState::kTerminating) << "disable without drain kills";
  ASSERT_TRUE(Submit("t2", 0).ok());
  EXPECT_EQ(Task("t2").state, TaskState::kQueued);
  ASSERT_TRUE(Run(EnableAgent{"a2"}).ok());
  EXPECT_EQ(Task("t2").state, TaskState::kAssigned);
}

TEST_F(DeciderTest, EventsOfAFencedEpochAreIgnored) {
  auto claim = [&](uint64_t epoch) {
    events::Envelope e;
    e.mutable_writer_epoch_claimed()->set_epoch(epoch);
    e.set_writer_epoch(epoch);
    Append(e, "");
  };
  claim(1);
  claim(2);
  events::Envelope stale;
  stale.mutable_task_submitted()->set_task_id("from-old-master");
  stale.set_writer_epoch(1);
  Append(stale, "");
  EXPECT_EQ(state_.tasks.count("from-old-master"), 0u);
  EXPECT_EQ(state_.writer_epoch, 2u);
}

}  // namespace
}  // namespace cairn::commands
