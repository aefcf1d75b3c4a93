// Where the scheduler places work, as the seeds describe it: fitting and gangs, zero-slot tasks,
// pools and routing, the job queue, and the explanation of a pending task. Driven like the
// writer; every expected value is taken from the seeds or the issue, or worked out by hand.
#include <gtest/gtest.h>

#include "commands/scheduler/scheduler.h"
#include "tests/commands/scheduler_support.h"

namespace cairn::commands {
namespace {

using namespace scheduler_testing;

// ---------------------------------------------------------------------------------------------
// Fitting and gangs

TEST(FittingTest, BestFitPacksWorstFitSpreads) {
  struct Case {
    events::FittingPolicy policy;
    int big_used, small_used;  // big has 8 slots, small 4
    std::string expected;
  };
  const Case cases[] = {
      // big 8 free, small 2 free; a 2-slot task leaves 6 or 0: best packs onto small.
      {events::FITTING_POLICY_BEST, 0, 2, "small"},
      // free shares 8/8 and 2/4: worst spreads onto big.
      {events::FITTING_POLICY_WORST, 0, 2, "big"},
      // big 2 free, small 4 free: leftovers 0 and 2, best picks big.
      {events::FITTING_POLICY_BEST, 6, 0, "big"},
      // free shares 2/8 and 4/4: worst picks small.
      {events::FITTING_POLICY_WORST, 6, 0, "small"},
  };
  for (const auto& c : cases) {
    Cluster cluster;
    RUN_OK(cluster, Pools({Pool("default", {.fitting = c.policy})}));
    RUN_OK(cluster, Agent("big", 8));
    RUN_OK(cluster, Agent("small", 4));
    if (c.big_used) Occupy(cluster, "big-filler", "big", c.big_used);
    if (c.small_used) Occupy(cluster, "small-filler", "small", c.small_used);
    RUN_OK(cluster, Submission("t", {.slots = 2}));
    const auto* assigned = AssignmentOf(cluster, "t");
    ASSERT_NE(assigned, nullptr);
    EXPECT_EQ(assigned->agent_id(), c.expected)
        << "policy " << c.policy << ", used " << c.big_used << "/" << c.small_used;
    EXPECT_EQ(assigned->slot_ids_size(), 2);
  }
}

TEST(FittingTest, ATaskLargerThanAnyAgentTakesWholeIdleAgentsAllOrNothing) {
  Cluster cluster;
  RUN_OK(cluster, Agent("g1", 8));
  RUN_OK(cluster, Agent("g2", 8));
  RUN_OK(cluster, Submission("blocker", {.slots = 1}));
  ASSERT_EQ(cluster.Task("blocker").agent_id, "g1");
  // 16 slots need both agents idle; with one slot of g1 in use nothing is placed at all.
  RUN_OK(cluster, Submission("big", {.slots = 16, .type = events::TASK_TYPE_TRIAL}));
  EXPECT_TRUE(cluster.Assigned().empty());
  EXPECT_EQ(cluster.state.agents.at("g2").free_slots(), 8) << "never partly placed";
  RUN_OK(cluster, Exit("blocker"));
  ASSERT_EQ(cluster.Assigned(), Strings{"big"});
  const auto* assigned = AssignmentOf(cluster, "big");
  ASSERT_EQ(assigned->parts_size(), 2);
  EXPECT_EQ(assigned->parts(0).agent_id(), "g1");
  EXPECT_EQ(assigned->parts(1).agent_id(), "g2");
  EXPECT_EQ(assigned->parts(0).slot_ids_size(), 8);
  EXPECT_EQ(assigned->parts(1).slot_ids_size(), 8);
  EXPECT_EQ(cluster.state.agents.at("g1").free_slots(), 0);
  EXPECT_EQ(cluster.state.agents.at("g2").free_slots(), 0);
}

TEST(FittingTest, AGangNeedsWholeAgentsOfOneSizeAndAMultipleOfIt) {
  struct Case {
    int slots;
    bool fits;
  };
  // Agents of 8, 8, 3, 3, 3 (the reference's example): 12 is no multiple of 8 and more than the
  // three 3-slot agents give; 16 = 2 × 8; 9 = 3 × 3; 24 would need three 8-slot agents.
  const Case cases[] = {{12, false}, {16, true}, {9, true}, {24, false}, {8, true}};
  Cluster cluster;
  RUN_OK(cluster, Agent("a8-1", 8));
  RUN_OK(cluster, Agent("a8-2", 8));
  RUN_OK(cluster, Agent("a3-1", 3));
  RUN_OK(cluster, Agent("a3-2", 3));
  RUN_OK(cluster, Agent("a3-3", 3));
  for (const auto& c : cases) {
    Status status = CheckCanEverFit(cluster.state, "default", c.slots);
    EXPECT_EQ(status.ok(), c.fits) << c.slots << " slots: " << status.ToString();
    auto submitted = cluster.Run(Submission("t" + std::to_string(c.slots), {.slots = c.slots}));
    EXPECT_EQ(submitted.ok(), c.fits) << c.slots;
    if (!c.fits) {
      EXPECT_EQ(submitted.status().code(), StatusCode::kFailedPrecondition);
      EXPECT_TRUE(Contains(submitted.status().message(),
                           "needs " + std::to_string(c.slots) + " slots but can never fit"))
          << submitted.status().message();
    }
  }
}

TEST(FittingTest, AFailedGangPartKillsTheRestAndTheLastPartEndsTheTask) {
  for (bool failure : {true, false}) {
    Cluster cluster;
    RUN_OK(cluster, Agent("g1", 8));
    RUN_OK(cluster, Agent("g2", 8));
    RUN_OK(cluster, Submission("big", {.slots = 16}));
    ASSERT_EQ(cluster.Task("big").where().parts.size(), 2u);
    RUN_OK(cluster, Exit("big", failure ? 1 : 0, "g1"));
    auto part = cluster.Last(events::Envelope::kAllocationPartExited);
    ASSERT_EQ(part.size(), 1u);
    EXPECT_EQ(part[0].allocation_part_exited().agent_id(), "g1");
    EXPECT_EQ(part[0].allocation_part_exited().exit_code(), failure ? 1 : 0);
    EXPECT_EQ(cluster.state.agents.at("g1").free_slots(), 8) << "that part's slots are free";
    auto kills = cluster.Last(events::Envelope::kKillRequested);
    if (failure) {
      ASSERT_EQ(kills.size(), 1u);
      EXPECT_EQ(kills[0].kill_requested().parts_size(), 2);
      EXPECT_TRUE(Contains(kills[0].kill_requested().reason(), "g1 exited with code 1"))
          << kills[0].kill_requested().reason();
    } else {
      EXPECT_TRUE(kills.empty()) << "a part that succeeded takes nothing down";
    }
    EXPECT_NE(cluster.Task("big").state, TaskState::kExited);
    RUN_OK(cluster, Exit("big", failure ? 137 : 0, "g2"));
    ASSERT_EQ(cluster.Last(events::Envelope::kTaskExited).size(), 1u);
    EXPECT_EQ(cluster.Task("big").state, TaskState::kExited);
    EXPECT_EQ(cluster.state.agents.at("g2").free_slots(), 8);
  }
}

TEST(FittingTest, ADisabledSlotTakesNoWorkAndItsTaskIsKilledUnlessDrained) {
  for (bool drain : {false, true}) {
    SCOPED_TRACE(drain ? "drained" : "killed");
    Cluster cluster;
    RUN_OK(cluster, Agent("a1", 2));
    RUN_OK(cluster, Submission("first", {.slots = 1}));
    ASSERT_EQ(cluster.Task("first").where().parts.at(0).slot_ids(0), 0);
    RUN_OK(cluster, (SetSlotEnabled{"a1", 0, /*enabled=*/false, drain}));
    ASSERT_EQ(cluster.Last(events::Envelope::kAgentSlotDisabled).size(), 1u);
    auto kills = cluster.Last(events::Envelope::kKillRequested);
    if (drain) {
      EXPECT_TRUE(kills.empty());
    } else {
      ASSERT_EQ(kills.size(), 1u);
      EXPECT_TRUE(Contains(kills[0].kill_requested().reason(), "slot 0 of agent a1 disabled"))
          << kills[0].kill_requested().reason();
    }
    RUN_OK(cluster, Exit("first"));
    // Two 1-slot tasks: one takes slot 1, the other waits although slot 0 is idle.
    BATCH_OK(cluster, (std::vector<Command>{Submission("second", {.slots = 1}),
                                            Submission("third", {.slots = 1})}));
    ASSERT_EQ(cluster.Assigned(), Strings{"second"});
    EXPECT_EQ(cluster.Task("second").where().parts.at(0).slot_ids(0), 1);
    // A 2-slot task can never fit while a slot is out; enabling the slot places the waiter.
    RUN_OK(cluster, (SetSlotEnabled{"a1", 0, /*enabled=*/true}));
    EXPECT_EQ(cluster.Assigned(), Strings{"third"});
    EXPECT_EQ(cluster.Task("third").where().parts.at(0).slot_ids(0), 0);
  }
}

TEST(FittingTest, SlotChangesNameARealSlotAndRepeatNothing) {
  Cluster cluster;
  RUN_OK(cluster, Agent("a1", 2));
  Status missing = cluster.Run(SetSlotEnabled{"a1", 2, false}).status();
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(missing.message(), "has 2 slots")) << missing.message();
  EXPECT_EQ(cluster.Run(SetSlotEnabled{"nobody", 0, false}).status().code(), StatusCode::kNotFound);
  RUN_OK(cluster, (SetSlotEnabled{"a1", 1, false}));
  EXPECT_EQ(cluster.Last(events::Envelope::kAgentSlotDisabled).size(), 1u);
  RUN_OK(cluster, (SetSlotEnabled{"a1", 1, false}));
  EXPECT_TRUE(cluster.last_events.empty()) << "disabling twice records once";
  EXPECT_EQ(cluster.state.agents.at("a1").disabled_slots, (std::set<int32_t>{1}));
}

TEST(FittingTest, BindMountsAreRefusedInAPoolOfProcessAgentsOnly) {
  Cluster cluster;
  RUN_OK(cluster, Pools({Pool("default"), Pool("containers")}));
  SubmitTask mounted = Submission("mounted", {.slots = 1, .pool = "default"});
  auto* mount = mounted.spec.add_bind_mounts();
  mount->set_host_path("/data");
  mount->set_container_path("/data");
  // No agent yet: nothing is known to refuse it (the agent that gets it decides).
  RUN_OK(cluster, mounted);
  RUN_OK(cluster, Agent("process-agent", 1, "default"));
  mounted.task_id = "mounted-2";
  Status refused = cluster.Run(mounted).status();
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(refused.message(), "bind_mounts (--volume) cannot be applied"))
      << refused.message();
  RegisterAgent container_agent = Agent("container-agent", 1, "containers");
  container_agent.registration.set_runs_containers(true);
  RUN_OK(cluster, container_agent);
  mounted.task_id = "mounted-3";
  mounted.resources.set_resource_pool("containers");
  RUN_OK(cluster, mounted);
  EXPECT_TRUE(cluster.state.agents.at("container-agent").runs_containers);
}

// ---------------------------------------------------------------------------------------------
// Zero-slot tasks

TEST(ZeroSlotTest, FifoUnderFairSharePriorityOrderUnderPriority) {
  struct Case {
    events::SchedulerType type;
    Strings expected;
  };
  // Two zero-slot places; submitted z-low (50), z-high (10), z-mid (30).
  const Case cases[] = {{kFairShare, {"z-low", "z-high"}}, {kPriority, {"z-high", "z-mid"}}};
  for (const auto& c : cases) {
    Cluster cluster;
    RUN_OK(cluster, Pools({Pool("default", {.type = c.type, .max_aux_containers_per_agent = 2})}));
    RUN_OK(cluster, Agent("a1", 1));
    RUN_OK(cluster, (DisableAgent{"a1", /*drain=*/true}));
    BATCH_OK(cluster, (std::vector<Command>{Submission("z-low", {.slots = 0, .priority = 50}),
                                            Submission("z-high", {.slots = 0, .priority = 10}),
                                            Submission("z-mid", {.slots = 0, .priority = 30})}));
    RUN_OK(cluster, EnableAgent{"a1"});
    EXPECT_EQ(cluster.Assigned(), c.expected) << SchedulerTypeName(c.type);
  }
}

TEST(ZeroSlotTest, TheLimitPerAgentIsRespected) {
  Cluster cluster;
  RUN_OK(cluster, Pools({Pool("default", {.max_aux_containers_per_agent = 1})}));
  RUN_OK(cluster, Agent("a1", 1));
  RUN_OK(cluster, Agent("a2", 1));
  BATCH_OK(cluster,
           (std::vector<Command>{Submission("z1", {.slots = 0}), Submission("z2", {.slots = 0}),
                                 Submission("z3", {.slots = 0})}));
  EXPECT_EQ(cluster.Assigned(), (Strings{"z1", "z2"}));
  EXPECT_NE(cluster.Task("z1").agent_id, cluster.Task("z2").agent_id) << "one per agent";
  EXPECT_EQ(cluster.Task("z3").state, TaskState::kQueued);
  const std::string freed = cluster.Task("z1").agent_id;
  RUN_OK(cluster, Exit("z1"));
  EXPECT_EQ(cluster.Assigned(), Strings{"z3"});
  EXPECT_EQ(cluster.Task("z3").agent_id, freed);
}

TEST(ZeroSlotTest, AZeroSlotTaskStartsWhileSlotWorkWaits) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(false));
  RUN_OK(cluster, Agent("a1", 2));
  RUN_OK(cluster, Submission("cmd", {.slots = 2, .priority = 10}));
  RUN_OK(cluster, Submission("waiting", {.slots = 2, .priority = 20}));
  EXPECT_TRUE(cluster.Assigned().empty());
  // Less important than the blocked task, yet it needs no slot: it starts.
  RUN_OK(cluster, Submission("cpu", {.slots = 0, .priority = 90}));
  EXPECT_EQ(cluster.Assigned(), Strings{"cpu"});
  EXPECT_TRUE(cluster.Task("cpu").where().slot_ids.empty());
}

// ---------------------------------------------------------------------------------------------
// Pools

TEST(PoolsTest, EachPoolRunsItsOwnPolicy) {
  Cluster cluster;
  RUN_OK(cluster, Pools({Pool("fs", {.type = kFairShare}), Pool("prio", {.type = kPriority})}));
  RUN_OK(cluster, Agent("f1", 2, "fs"));
  RUN_OK(cluster, Agent("p1", 2, "prio"));
  RUN_OK(cluster, (DisableAgent{"f1", true}));
  RUN_OK(cluster, (DisableAgent{"p1", true}));
  std::vector<Command> submissions;
  for (std::string pool : {"fs", "prio"}) {
    submissions.push_back(Submission(pool + "-low", {.priority = 50, .pool = pool}));
    submissions.push_back(Submission(pool + "-high", {.priority = 10, .pool = pool}));
    submissions.push_back(Submission(pool + "-mid", {.priority = 30, .pool = pool}));
  }
  BATCH_OK(cluster, submissions);
  BATCH_OK(cluster, (std::vector<Command>{EnableAgent{"f1"}, EnableAgent{"p1"}}));
  // Fair share: three jobs of demand 1 on 2 slots, 2/3 each: the two remainders go to the jobs
  // first in the queue (submission order), priority notwithstanding. Priority: 10, then 30.
  EXPECT_EQ(cluster.Keeping(), (Strings{"fs-high", "fs-low", "prio-high", "prio-mid"}));
}

TEST(PoolsTest, SubmissionsAreRoutedByTheSeedsRules) {
  struct Case {
    std::string name;
    events::TaskType type;
    int slots;
    std::string pool;  // asked for
    std::string expected;
  };
  const Case cases[] = {
      {"trial", events::TASK_TYPE_TRIAL, 1, "", "compute"},
      {"trial-zero", events::TASK_TYPE_TRIAL, 0, "", "compute"},  // experiments: compute
      {"tensorboard", events::TASK_TYPE_TENSORBOARD, 0, "", "aux"},
      {"tensorboard-slot", events::TASK_TYPE_TENSORBOARD, 1, "", "aux"},
      {"command", events::TASK_TYPE_COMMAND, 1, "", "compute"},
      {"command-zero", events::TASK_TYPE_COMMAND, 0, "", "aux"},
      {"notebook-zero", events::TASK_TYPE_NOTEBOOK, 0, "", "aux"},
      {"shell-zero", events::TASK_TYPE_SHELL, 0, "", "aux"},
      {"explicit", events::TASK_TYPE_COMMAND, 1, "aux", "aux"},
  };
  Cluster cluster;
  RUN_OK(cluster, Pools({Pool("compute"), Pool("aux")}, "compute", "aux"));
  RUN_OK(cluster, Agent("c1", 4, "compute"));
  RUN_OK(cluster, Agent("x1", 4, "aux"));
  for (const auto& c : cases) {
    RUN_OK(cluster, Submission(c.name, {.slots = c.slots, .type = c.type, .pool = c.pool}));
    const auto& submitted = cluster.Last(events::Envelope::kTaskSubmitted);
    ASSERT_EQ(submitted.size(), 1u) << c.name;
    EXPECT_EQ(submitted[0].task_submitted().resources().resource_pool(), c.expected) << c.name;
  }
  auto unknown = cluster.Run(Submission("lost", {.pool = "nope"}));
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            "resource pool nope does not exist (configured pools: compute, aux)");
}

// ---------------------------------------------------------------------------------------------
// The job queue

// The order in which queued jobs start: the running task ends, the next one starts, and so on.
Strings StartOrder(Cluster& cluster, std::string running) {
  Strings order;
  for (;;) {
    auto exited = cluster.Run(Exit(running));
    if (!exited.ok()) return {"error: " + exited.status().ToString()};
    auto assigned = cluster.Assigned();
    if (assigned.empty()) return order;
    running = assigned[0];
    order.push_back(running);
  }
}

// A priority pool with one slot, busy, and jobs a, b, c (priority 50) queued in that order.
void QueueThreeJobs(Cluster& cluster) {
  RUN_OK(cluster, PriorityPool(false));
  RUN_OK(cluster, Agent("a1", 1));
  RUN_OK(cluster, Submission("busy", {}));
  BATCH_OK(cluster, (std::vector<Command>{Submission("a", {.priority = 50}),
                                          Submission("b", {.priority = 50}),
                                          Submission("c", {.priority = 50})}));
}

TEST(JobQueueTest, APriorityChangeReordersTheQueue) {
  Cluster cluster;
  QueueThreeJobs(cluster);
  UpdateJob update;
  update.job_id = "c";
  update.priority = 10;
  RUN_OK(cluster, update);
  auto changed = cluster.Last(events::Envelope::kJobQueueChanged);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].job_queue_changed().priority(), 10);
  EXPECT_EQ(changed[0].job_queue_changed().reason(), "priority 50 -> 10");
  EXPECT_EQ(StartOrder(cluster, "busy"), (Strings{"c", "a", "b"}));
}

TEST(JobQueueTest, AheadOfAndBehindOfMoveAJob) {
  struct Case {
    std::string job, ahead_of, behind_of;
    Strings expected;
  };
  const Case cases[] = {
      {"c", "a", "", {"c", "a", "b"}}, {"b", "a", "", {"b", "a", "c"}},
      {"a", "", "b", {"b", "a", "c"}}, {"a", "", "c", {"b", "c", "a"}},
      {"c", "", "a", {"a", "c", "b"}},
  };
  for (const auto& c : cases) {
    Cluster cluster;
    QueueThreeJobs(cluster);
    UpdateJob update;
    update.job_id = c.job;
    update.ahead_of = c.ahead_of;
    update.behind_of = c.behind_of;
    RUN_OK(cluster, update);
    ASSERT_EQ(cluster.Last(events::Envelope::kJobQueueChanged).size(), 1u);
    EXPECT_EQ(StartOrder(cluster, "busy"), c.expected)
        << c.job << " ahead of '" << c.ahead_of << "' behind '" << c.behind_of << "'";
  }
}

TEST(JobQueueTest, AJobMovedNextToAnotherPriorityTakesThatPriority) {
  Cluster cluster;
  QueueThreeJobs(cluster);
  RUN_OK(cluster, Submission("d", {.priority = 20}));
  UpdateJob update;
  update.job_id = "b";
  update.behind_of = "d";
  RUN_OK(cluster, update);
  auto changed = cluster.Last(events::Envelope::kJobQueueChanged);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].job_queue_changed().priority(), 20);
  EXPECT_TRUE(
      Contains(changed[0].job_queue_changed().reason(), "priority 50 -> 20 (that of job d)"))
      << changed[0].job_queue_changed().reason();
  EXPECT_EQ(StartOrder(cluster, "busy"), (Strings{"d", "b", "a", "c"}));
}

TEST(JobQueueTest, BadUpdatesAreRefused) {
  struct Case {
    std::string name;
    UpdateJob update;
    StatusCode code;
  };
  auto make = [](std::string job, auto&& edit) {
    UpdateJob update;
    update.job_id = std::move(job);
    edit(update);
    return update;
  };
  const Case cases[] = {
      {"unknown job", make("nope", [](UpdateJob& u) { u.priority = 10; }), StatusCode::kNotFound},
      {"self", make("a", [](UpdateJob& u) { u.ahead_of = "a"; }), StatusCode::kInvalidArgument},
      {"both",
       make("a",
            [](UpdateJob& u) {
              u.ahead_of = "b";
              u.behind_of = "c";
            }),
       StatusCode::kInvalidArgument},
      {"priority 0", make("a", [](UpdateJob& u) { u.priority = 0; }), StatusCode::kInvalidArgument},
      {"priority 100", make("a", [](UpdateJob& u) { u.priority = 100; }),
       StatusCode::kInvalidArgument},
      {"weight 0", make("a", [](UpdateJob& u) { u.weight = 0; }), StatusCode::kInvalidArgument},
      {"unknown anchor", make("a", [](UpdateJob& u) { u.behind_of = "nope"; }),
       StatusCode::kNotFound},
      {"unknown pool", make("a", [](UpdateJob& u) { u.resource_pool = "nope"; }),
       StatusCode::kInvalidArgument},
  };
  Cluster cluster;
  QueueThreeJobs(cluster);
  const uint64_t before = cluster.state.next_offset;
  for (const auto& c : cases) {
    auto refused = cluster.Run(c.update);
    EXPECT_EQ(refused.status().code(), c.code) << c.name << ": " << refused.status().ToString();
  }
  EXPECT_EQ(cluster.state.next_offset, before) << "a refused update records nothing";
}

TEST(JobQueueTest, APriorityChangeOfARunningCommandIsRecordedButPreemptsNothing) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(true));
  RUN_OK(cluster, Agent("a1", 1));
  RUN_OK(cluster, Submission("cmd", {.priority = 50}));
  RUN_OK(cluster, Submission("trial", {.type = events::TASK_TYPE_TRIAL, .priority = 30}));
  ASSERT_EQ(cluster.Task("trial").state, TaskState::kQueued) << "a command is not preemptible";
  UpdateJob update;
  update.job_id = "cmd";
  update.priority = 99;
  RUN_OK(cluster, update);
  ASSERT_EQ(cluster.last_events.size(), 1u) << "only the change itself";
  const auto& changed = cluster.last_events[0].job_queue_changed();
  EXPECT_EQ(changed.priority(), 99);
  EXPECT_TRUE(Contains(changed.reason(), "not preemptible")) << changed.reason();
  EXPECT_EQ(cluster.state.jobs.at("cmd").priority, 99);
  EXPECT_FALSE(cluster.Task("cmd").preempting);
  EXPECT_EQ(cluster.Task("cmd").state, TaskState::kAssigned);
  EXPECT_EQ(cluster.Task("trial").state, TaskState::kQueued);
}

// ---------------------------------------------------------------------------------------------
// Explain

TEST(ExplainTest, APendingTaskNamesTheSlotsItNeedsTheIdleSlotsAndTheJobsAhead) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(false));
  RUN_OK(cluster, Agent("a1", 4));
  RUN_OK(cluster, Submission("r", {.slots = 3, .priority = 50}));
  BATCH_OK(cluster, (std::vector<Command>{Submission("x", {.slots = 2, .priority = 50}),
                                          Submission("y", {.slots = 2, .priority = 50})}));
  auto explanation = ExplainTask(cluster.state, "y", cluster.now);
  ASSERT_TRUE(explanation.ok()) << explanation.status().ToString();
  EXPECT_EQ(explanation->state, "QUEUED");
  const std::string& reason = explanation->reason;
  // 4 slots, 3 held by r: 1 idle; y needs 2; r (running) and x are ahead of it.
  EXPECT_TRUE(Contains(reason, "needs 2 slots")) << reason;
  EXPECT_TRUE(Contains(reason, "1 idle of 4")) << reason;
  EXPECT_TRUE(Contains(reason, "2 job(s) ahead of job y")) << reason;
  ASSERT_EQ(explanation->jobs_ahead.size(), 2u);
  EXPECT_EQ(explanation->jobs_ahead[0].job_id, "r");
  EXPECT_TRUE(explanation->jobs_ahead[0].running);
  EXPECT_EQ(explanation->jobs_ahead[1].job_id, "x");
  EXPECT_FALSE(explanation->jobs_ahead[1].running);
  EXPECT_EQ(ExplainTask(cluster.state, "nope", cluster.now).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace cairn::commands
