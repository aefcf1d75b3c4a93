// The decider and the first placement rule: plain values in, events out.
#include "commands/decider.h"

#include <gtest/gtest.h>

#include "commands/placement.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

class DeciderTest : public ::testing::Test {
 protected:
  // Decides `command`, applies its events and the placement pass that follows, like the writer.
  Result<Decision> Run(const Command& command, const std::string& key = "") {
    CommandMeta meta{"user:test", "req", key, 1000};
    auto decision = Decide(state_, command, meta);
    if (!decision.ok()) return decision;
    last_events_.clear();
    for (auto event : decision->events) Append(event, key);
    if (!decision->events.empty()) {
      for (auto event : PlaceQueuedTasks(state_)) Append(event, "");
    }
    return decision;
  }

  void Append(events::Envelope event, const std::string& key) {
    event.set_offset(state_.next_offset);
    event.set_idempotency_key(key);
    event.set_actor("user:test");
    if (event.writer_epoch() == 0) event.set_writer_epoch(state_.writer_epoch);
    Apply(state_, event);
    last_events_.push_back(event);
  }

  void RegisterAgent(const std::string& id, int slots, const std::string& incarnation = "i1",
                     const std::string& pool = "default") {
    events::AgentRegistered registration;
    registration.set_agent_id(id);
    registration.set_incarnation(incarnation);
    registration.set_slot_count(slots);
    registration.set_resource_pool(pool);
    ASSERT_TRUE(Run(commands::RegisterAgent{registration}).ok());
  }

  Result<Decision> Submit(const std::string& id, int slots, int priority = 0,
                          const std::string& key = "") {
    SubmitTask submit;
    submit.task_id = id;
    submit.spec.add_entrypoint("true");
    submit.resources.set_slots(slots);
    submit.resources.set_priority(priority);
    return Run(submit, key);
  }

  const TaskRecord& Task(const std::string& id) { return state_.tasks.at(id); }

  std::vector<std::string> EventNames() {
    std::vector<std::string> names;
    for (const auto& e : last_events_) {
      switch (e.payload_case()) {
        case events::Envelope::kTaskSubmitted:
          names.push_back("TaskSubmitted");
          break;
        case events::Envelope::kAllocationAssigned:
          names.push_back("AllocationAssigned");
          break;
        case events::Envelope::kKillRequested:
          names.push_back("KillRequested");
          break;
        case events::Envelope::kTaskExited:
          names.push_back("TaskExited");
          break;
        case events::Envelope::kTaskStarted:
          names.push_back("TaskStarted");
          break;
        case events::Envelope::kAgentRegistered:
          names.push_back("AgentRegistered");
          break;
        default:
          names.push_back("Other");
      }
    }
    return names;
  }

  DecisionState state_;
  std::vector<events::Envelope> last_events_;
};

TEST_F(DeciderTest, QueuedTaskIsPlacedWhenAnAgentRegisters) {
  ASSERT_TRUE(Submit("t1", 1).ok());
  EXPECT_EQ(Task("t1").state, TaskState::kQueued);
  RegisterAgent("a1", 2);
  EXPECT_EQ(Task("t1").state, TaskState::kAssigned);
  EXPECT_EQ(Task("t1").agent_id, "a1");
  EXPECT_EQ(Task("t1").allocation_id, "t1.1");
  EXPECT_EQ(Task("t1").slot_ids, std::vector<int32_t>{0});
  ASSERT_EQ(last_events_.back().allocation_assigned().reason().find("priority 42"), 0u)
      << last_events_.back().allocation_assigned().reason();
}

TEST_F(DeciderTest, BestFitPicksTheAgentWithFewestFreeSlots) {
  RegisterAgent("big", 8);
  RegisterAgent("small", 2);
  ASSERT_TRUE(Submit("t1", 2).ok());
  EXPECT_EQ(Task("t1").agent_id, "small");
  ASSERT_TRUE(Submit("t2", 2).ok());
  EXPECT_EQ(Task("t2").agent_id, "big");
  EXPECT_EQ(Task("t2").slot_ids, (std::vector<int32_t>{0, 1}));
}

TEST_F(DeciderTest, PriorityThenSubmissionOrderDecidesWhoGetsScarceSlots) {
  ASSERT_TRUE(Submit("low", 1, 50).ok());
  ASSERT_TRUE(Submit("high-late", 1, 10).ok());
  ASSERT_TRUE(Submit("high-early-equal", 1, 50).ok());
  RegisterAgent("a1", 2);
  EXPECT_EQ(Task("high-late").state, TaskState::kAssigned);
  EXPECT_EQ(Task("low").state, TaskState::kAssigned);
  EXPECT_EQ(Task("high-early-equal").state, TaskState::kQueued);
}

TEST_F(DeciderTest, ATaskTooBigWaitsWithoutBlockingSmallerOnes) {
  RegisterAgent("a1", 2);
  ASSERT_TRUE(Submit("huge", 4).ok());
  ASSERT_TRUE(Submit("small", 1).ok());
  EXPECT_EQ(Task("huge").state, TaskState::kQueued);
  EXPECT_EQ(Task("small").state, TaskState::kAssigned);
}

TEST_F(DeciderTest, ZeroSlotTasksNeedNoSlots) {
  RegisterAgent("a1", 1);
  ASSERT_TRUE(Submit("gpu", 1).ok());
  ASSERT_TRUE(Submit("cpu", 0).ok());
  EXPECT_EQ(Task("cpu").state, TaskState::kAssigned);
  EXPECT_TRUE(Task("cpu").slot_ids.empty());
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
  ASSERT_TRUE(Submit("t1", 1).ok());
  ASSERT_TRUE(Run(KillTask{"t1", ""}).ok());
  EXPECT_EQ(EventNames(), (std::vector<std::string>{"KillRequested", "TaskExited"}));
  EXPECT_EQ(Task("t1").state, TaskState::kExited);
  EXPECT_TRUE(state_.queue.empty());
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
  ASSERT_TRUE(Submit("t1", 1, 0, "key-1").ok());
  auto retry = Submit("t2", 1, 0, "key-1");
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->events.empty());
  EXPECT_EQ(retry->entity_id, "t1");
  EXPECT_EQ(state_.tasks.count("t2"), 0u);
  // The same key from another caller, or for another kind of request, is refused.
  auto other_user = Decide(state_, testing::OneSlotSubmit("t3"), {"user:other", "r", "key-1", 1});
  EXPECT_EQ(other_user.status().code(), StatusCode::kFailedPrecondition);
  auto other_command = Decide(state_, KillTask{"t1", ""}, {"user:test", "r", "key-1", 1});
  EXPECT_EQ(other_command.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(DeciderTest, BadSubmissionsAreRefusedWithReasons) {
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
