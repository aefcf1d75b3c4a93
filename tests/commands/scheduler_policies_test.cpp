// The scheduler's policies as the seeds describe them: fair share, priority with preemption and
// round robin, driven like the writer: commands in, their events and the scheduling pass's events
// out. Every expected value is taken from the seeds or the issue, or worked out by hand in the
// comment next to it.
#include <gtest/gtest.h>

#include "commands/scheduler/scheduler.h"
#include "tests/commands/scheduler_support.h"

namespace cairn::commands {
namespace {

using namespace scheduler_testing;

// ---------------------------------------------------------------------------------------------
// Fair share

struct FairShareCase {
  std::string name;
  std::vector<int> agents;  // slots per agent
  double weight_a, weight_b;
  int demand_a, demand_b;
  size_t expected_a, expected_b;
};

// What ctest lists a case as (its name, not 96 bytes of hex).
void PrintTo(const FairShareCase& c, std::ostream* out) { *out << c.name; }

class FairShareSeedsTest : public ::testing::TestWithParam<FairShareCase> {};

TEST_P(FairShareSeedsTest, SlotsAreDividedInProportionToDemandTimesWeight) {
  const auto& c = GetParam();
  Cluster cluster;
  for (size_t i = 0; i < c.agents.size(); ++i) {
    RUN_OK(cluster, Agent("agent" + std::to_string(i), c.agents[i]));
  }
  BATCH_OK(cluster, Join(Trials("a", c.demand_a, {.weight = c.weight_a}),
                         Trials("b", c.demand_b, {.weight = c.weight_b})));
  EXPECT_EQ(cluster.Holding("a").size(), c.expected_a);
  EXPECT_EQ(cluster.Holding("b").size(), c.expected_b);
  EXPECT_TRUE(cluster.Preempted().empty());
  // The oldest tasks of each job start first.
  EXPECT_EQ(cluster.Holding("a"), Ids("a", 1, static_cast<int>(c.expected_a)));
  for (const auto& event : cluster.Last(events::Envelope::kAllocationAssigned)) {
    EXPECT_FALSE(event.allocation_assigned().backfilled()) << "within its share";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, FairShareSeedsTest,
    ::testing::Values(
        // The seeds: "in an eight-GPU cluster running two experiments with demands of ten and
        // thirty, the scheduler assigns two slots and six slots respectively".
        FairShareCase{"Demands10And30OnOneAgent", {8}, 1, 1, 10, 30, 2, 6},
        FairShareCase{"Demands10And30OnTwoAgents", {4, 4}, 1, 1, 10, 30, 2, 6},
        // "if the weight of the first experiment is set to 3 and the weight of the second
        // experiment is set to 1, each experiment will be assigned four slots" (30 vs 30).
        FairShareCase{"Weights3And1OnOneAgent", {8}, 3, 1, 10, 30, 4, 4},
        FairShareCase{"Weights3And1OnTwoAgents", {4, 4}, 3, 1, 10, 30, 4, 4},
        // Capped at demand: 2 × 4 = 8 against 10 × 1 = 10 would give job a 8·8/18 = 3.6 slots,
        // more than the 2 it asks for: it gets its 2 and job b the remaining 6.
        FairShareCase{"CappedAtDemandTheRestGoesToTheOther", {8}, 4, 1, 2, 10, 2, 6}),
    [](const auto& info) { return info.param.name; });

TEST(FairShareTest, MaxSlotsCapsAJobEvenWhenSlotsAreIdle) {
  Cluster cluster;
  RUN_OK(cluster, Agent("a1", 8));
  // Alone, job a would take all 8 slots; max_slots 3 caps it and 5 slots stay idle.
  BATCH_OK(cluster, Trials("a", 10, {.max_slots = 3}));
  EXPECT_EQ(cluster.Holding("a"), Ids("a", 1, 3));
  // A second job's demand of 3 is met in full (3 + 3 ≤ 8); job a still keeps to 3.
  BATCH_OK(cluster, Trials("b", 3));
  EXPECT_EQ(cluster.Holding("a"), Ids("a", 1, 3));
  EXPECT_EQ(cluster.Holding("b"), Ids("b", 1, 3));
}

TEST(FairShareTest, RemaindersAreDistributedDeterministically) {
  struct Case {
    std::vector<double> weights;  // one job of 10 one-slot trials per weight
    int slots;
    std::vector<size_t> expected;
  };
  const Case cases[] = {
      // 8·10/30 = 2.67 each: floors 2+2+2, the 2 left go to the jobs first in the queue.
      {{1, 1, 1}, 8, {3, 3, 2}},
      // 7·10/20 = 3.5 each: the one left goes to the job first in the queue.
      {{1, 1}, 7, {4, 3}},
      // 8·10/30 = 2.67 and 8·20/30 = 5.33: floors 2 and 5, the one left to the larger fraction.
      {{1, 2}, 8, {3, 5}},
  };
  for (const auto& c : cases) {
    Cluster cluster;
    RUN_OK(cluster, Agent("a1", c.slots));
    std::vector<Command> submissions;
    for (size_t j = 0; j < c.weights.size(); ++j) {
      submissions = Join(submissions, Trials(std::string(1, static_cast<char>('a' + j)), 10,
                                             {.weight = c.weights[j]}));
    }
    // The same state gives the same decisions, every time; a second state is the log folded again.
    const size_t before = cluster.all_events.size();
    BATCH_OK(cluster, submissions);
    for (size_t j = 0; j < c.weights.size(); ++j) {
      EXPECT_EQ(cluster.Holding(std::string(1, static_cast<char>('a' + j))).size(), c.expected[j])
          << "job " << j << " of " << c.weights.size() << " on " << c.slots << " slots";
    }
    Cluster again;
    for (size_t i = 0; i < before; ++i) Apply(again.state, cluster.all_events[i]);
    BATCH_OK(again, submissions);
    ASSERT_EQ(again.last_events.size(), cluster.last_events.size());
    for (size_t i = 0; i < again.last_events.size(); ++i) {
      EXPECT_EQ(again.last_events[i].SerializeAsString(),
                cluster.last_events[i].SerializeAsString());
    }
  }
}

TEST(FairShareTest, NonPreemptibleHoldingsAreNeverPreempted) {
  Cluster cluster;
  RUN_OK(cluster, Agent("a1", 8));
  RUN_OK(cluster, Submission("cmd", {.slots = 6}));
  ASSERT_EQ(cluster.Assigned(), Strings{"cmd"});
  // By demand alone the command (6) would get 8·6/16 = 3 slots, but its 6 slots are held by a
  // task that cannot be preempted: it keeps them and job t gets the 2 left.
  BATCH_OK(cluster, Trials("t", 10));
  EXPECT_EQ(cluster.Assigned(), Ids("t", 1, 2));
  EXPECT_TRUE(cluster.Preempted().empty());
  // A third job: the 2 slots not pinned by the command are split 1 and 1, so job t gives back
  // its newest trial — never the command's slots.
  BATCH_OK(cluster, Trials("u", 10));
  EXPECT_EQ(cluster.Preempted(), Strings{"t-02"});
  EXPECT_TRUE(cluster.Assigned().empty()) << "the slot is not free until t-02 exits";
  RUN_OK(cluster, Exit("t-02"));
  EXPECT_EQ(cluster.Assigned(), Strings{"u-01"});
  EXPECT_EQ(cluster.Keeping(), (Strings{"cmd", "t-01", "u-01"}));
}

TEST(FairShareTest, SharesDoNotDependOnWhereTheNonPreemptibleJobStandsInTheQueue) {
  for (bool holder_first : {true, false}) {
    Cluster cluster;
    RUN_OK(cluster, Agent("a1", 10));
    RUN_OK(cluster, (DisableAgent{"a1", /*drain=*/true}));
    if (holder_first) Occupy(cluster, "holder", "a1", 8);
    BATCH_OK(cluster, Join(Trials("j2", 2, {.weight = 10}), Trials("j3", 10)));
    if (!holder_first) Occupy(cluster, "holder", "a1", 8);
    RUN_OK(cluster, EnableAgent{"a1"});
    // The holder's 8 slots cannot be taken back; the 2 left are split 2 × 10 : 10 × 1, i.e.
    // 1.33 and 0.67: floors 1 and 0, the remaining slot to the larger fraction (j3).
    EXPECT_EQ(cluster.Holding("j2").size(), 1u) << (holder_first ? "holder first" : "holder last");
    EXPECT_EQ(cluster.Holding("j3").size(), 1u) << (holder_first ? "holder first" : "holder last");
  }
}

TEST(FairShareTest, ANewJobTakesItsShareFromTheNewestTasksOfAJobOverItsShare) {
  Cluster cluster;
  RUN_OK(cluster, Agent("a1", 8));
  BATCH_OK(cluster, Trials("a", 10));
  ASSERT_EQ(cluster.Holding("a"), Ids("a", 1, 8)) << "alone, job a takes every slot";
  // Job b arrives: demands 10 and 30 give shares 2 and 6 (the seeds' example), so job a gives
  // back 6 slots, its newest trials first; job b starts nothing until they are released.
  BATCH_OK(cluster, Trials("b", 30));
  EXPECT_EQ(cluster.Preempted(), (Strings{"a-08", "a-07", "a-06", "a-05", "a-04", "a-03"}));
  EXPECT_TRUE(cluster.Assigned().empty());
  auto preemptions = cluster.Last(events::Envelope::kPreemptionRequested);
  ASSERT_EQ(preemptions.size(), 6u);
  const std::string& reason = preemptions[0].preemption_requested().reason();
  EXPECT_TRUE(Contains(reason, "job a's fair share is 2 of 8 slots")) << reason;
  EXPECT_TRUE(Contains(reason, "job b is below its share (0 of 6)")) << reason;
  EXPECT_EQ(preemptions[0].preemption_requested().for_task_id(), "b-01");
  // Each release hands its slot to job b; the shares stay 2 and 6, so nothing more is preempted
  // while the other victims are still on their way out.
  for (int victim = 8; victim >= 3; --victim) {
    RUN_OK(cluster, Exit(Id("a", victim)));
    ASSERT_EQ(cluster.Last(events::Envelope::kAllocationReleased).size(), 1u);
    EXPECT_EQ(cluster.Assigned(), Strings{Id("b", 9 - victim)}) << "after a-0" << victim;
    EXPECT_TRUE(cluster.Preempted().empty()) << "after a-0" << victim;
  }
  EXPECT_EQ(cluster.Keeping("a"), Ids("a", 1, 2));
  EXPECT_EQ(cluster.Keeping("b"), Ids("b", 1, 6));
  EXPECT_EQ(cluster.Task("a-03").state, TaskState::kQueued) << "back in the queue";
}

TEST(FairShareTest, WhenAJobFinishesTheOtherTakesTheFreedSlots) {
  Cluster cluster;
  RUN_OK(cluster, Agent("a1", 8));
  // Job a: demand 2 × weight 3 = 6 against job b's 12 × 1: 8·6/18 = 2.7 ≥ 2, so a is capped at
  // its demand 2 and b gets 6.
  BATCH_OK(cluster, Join(Trials("a", 2, {.weight = 3}), Trials("b", 12)));
  ASSERT_EQ(cluster.Holding("a").size(), 2u);
  ASSERT_EQ(cluster.Holding("b"), Ids("b", 1, 6));
  RUN_OK(cluster, Exit("a-01"));  // a's demand drops to 1: b's share becomes 7
  EXPECT_EQ(cluster.Assigned(), Strings{"b-07"});
  RUN_OK(cluster, Exit("a-02"));  // job a is done: b's share is all 8
  EXPECT_EQ(cluster.Assigned(), Strings{"b-08"});
  EXPECT_TRUE(cluster.Preempted().empty());
}

TEST(FairShareTest, AWeightChangeRebalancesTheShares) {
  Cluster cluster;
  RUN_OK(cluster, Agent("a1", 8));
  BATCH_OK(cluster, Join(Trials("a", 10), Trials("b", 30)));
  ASSERT_EQ(cluster.Holding("a").size(), 2u);
  ASSERT_EQ(cluster.Holding("b"), Ids("b", 1, 6));
  // Weight 3 for job a: the seeds' 4 and 4, so job b gives back its two newest trials.
  UpdateJob update;
  update.job_id = "a";
  update.weight = 3;
  RUN_OK(cluster, update);
  ASSERT_EQ(cluster.Last(events::Envelope::kJobQueueChanged).size(), 1u);
  EXPECT_EQ(cluster.Last(events::Envelope::kJobQueueChanged)[0].job_queue_changed().reason(),
            "weight 1 -> 3");
  EXPECT_EQ(cluster.Preempted(), (Strings{"b-06", "b-05"}));
  const std::string reason =
      cluster.Last(events::Envelope::kPreemptionRequested)[0].preemption_requested().reason();
  EXPECT_TRUE(Contains(reason, "job b's fair share is 4 of 8 slots")) << reason;
  RUN_OK(cluster, Exit("b-06"));
  RUN_OK(cluster, Exit("b-05"));
  EXPECT_EQ(cluster.Keeping("a"), Ids("a", 1, 4));
  EXPECT_EQ(cluster.Keeping("b"), Ids("b", 1, 4));
}

// ---------------------------------------------------------------------------------------------
// Priority

TEST(PriorityTest, LowerNumbersFirstEqualPrioritiesInSubmissionOrder) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(false));
  RUN_OK(cluster, Agent("a1", 2));
  RUN_OK(cluster, (DisableAgent{"a1", /*drain=*/true}));  // queue everything first
  BATCH_OK(cluster,
           (std::vector<Command>{
               Submission("low", {.priority = 50}), Submission("mid-early", {.priority = 30}),
               Submission("high", {.priority = 10}), Submission("mid-late", {.priority = 30})}));
  RUN_OK(cluster, EnableAgent{"a1"});
  EXPECT_EQ(cluster.Assigned(), (Strings{"high", "mid-early"}));
  const auto* high = AssignmentOf(cluster, "high");
  ASSERT_NE(high, nullptr);
  EXPECT_TRUE(Contains(high->reason(), "priority 10, position 1")) << high->reason();
  EXPECT_EQ(cluster.Task("mid-late").state, TaskState::kQueued);
  EXPECT_EQ(cluster.Task("low").state, TaskState::kQueued);
}

TEST(PriorityTest, WithoutPreemptionABlockedTaskStopsLowerPrioritiesFromStarting) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(false));
  RUN_OK(cluster, Agent("a1", 4));
  RUN_OK(cluster, Submission("cmd", {.slots = 2, .priority = 10}));
  // "big" (4 slots) cannot fit beside the command; "same-level" may still start (a failure
  // does not stop later tasks of its own priority); "low" waits though a slot is idle.
  BATCH_OK(cluster,
           (std::vector<Command>{
               Submission("big", {.slots = 4, .type = events::TASK_TYPE_TRIAL, .priority = 20}),
               Submission("same-level", {.priority = 20}),
               Submission("low", {.type = events::TASK_TYPE_TRIAL, .priority = 30})}));
  EXPECT_EQ(cluster.Assigned(), Strings{"same-level"});
  EXPECT_TRUE(cluster.Preempted().empty());
  EXPECT_EQ(cluster.Task("low").state, TaskState::kQueued);
  EXPECT_EQ(cluster.state.agents.at("a1").free_slots(), 1);
}

TEST(PriorityTest, WithPreemptionOnlyPreemptibleLowerPriorityWorkIsBackfilled) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(true));
  RUN_OK(cluster, Agent("a1", 4));
  RUN_OK(cluster, Submission("cmd", {.slots = 2, .priority = 10}));
  // "big" cannot preempt the more important command, so the idle slots are backfilled: with a
  // trial, not with a command (which could never be taken back).
  BATCH_OK(cluster,
           (std::vector<Command>{
               Submission("big", {.slots = 4, .type = events::TASK_TYPE_TRIAL, .priority = 20}),
               Submission("low-command", {.priority = 30}),
               Submission("low-trial", {.type = events::TASK_TYPE_TRIAL, .priority = 30})}));
  EXPECT_EQ(cluster.Assigned(), Strings{"low-trial"});
  const auto* low = AssignmentOf(cluster, "low-trial");
  ASSERT_NE(low, nullptr);
  EXPECT_TRUE(low->backfilled());
  EXPECT_TRUE(Contains(low->reason(), "backfilled")) << low->reason();
  EXPECT_EQ(cluster.Task("low-command").state, TaskState::kQueued);
  EXPECT_TRUE(cluster.Preempted().empty());
}

TEST(PriorityTest, VictimsAreTheLeastImportantTrialsNewestFirst) {
  struct Case {
    int slots;  // asked by a priority-10 trial
    Strings victims;
  };
  // Running on 5 slots, one each: mid (40), low-old and low-new (50, one job), cmd (60, a
  // command), lowest (70). Least important first: lowest; then low-new before low-old; the
  // command is never a victim, so 5 slots cannot be made and nothing is preempted.
  const Case cases[] = {
      {1, {"lowest"}},
      {2, {"lowest", "low-new"}},
      {3, {"lowest", "low-new", "low-old"}},
      {4, {"lowest", "low-new", "low-old", "mid"}},
      {5, {}},
  };
  for (const auto& c : cases) {
    Cluster cluster;
    RUN_OK(cluster, PriorityPool(true));
    RUN_OK(cluster, Agent("a1", 5));
    const Ask trial{.type = events::TASK_TYPE_TRIAL};
    auto with = [](Ask ask, int priority, std::string job = "") {
      ask.priority = priority;
      ask.job = std::move(job);
      return ask;
    };
    RUN_OK(cluster, Submission("mid", with(trial, 40)));
    RUN_OK(cluster, Submission("low-old", with(trial, 50, "low")));
    RUN_OK(cluster, Submission("low-new", with(trial, 50, "low")));
    RUN_OK(cluster, Submission("cmd", {.priority = 60}));
    RUN_OK(cluster, Submission("lowest", with(trial, 70)));
    ASSERT_EQ(cluster.Holding().size(), 5u);
    Ask urgent = with(trial, 10);
    urgent.slots = c.slots;
    RUN_OK(cluster, Submission("urgent", urgent));
    EXPECT_EQ(cluster.Preempted(), c.victims) << c.slots << " slots";
    EXPECT_TRUE(cluster.Assigned().empty()) << "the preempting task waits for the releases";
    for (const auto& event : cluster.Last(events::Envelope::kPreemptionRequested)) {
      EXPECT_EQ(event.preemption_requested().for_task_id(), "urgent");
    }
  }
}

TEST(PriorityTest, AtEqualPriorityOnlyJobsBehindInTheQueueArePreempted) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(true));
  RUN_OK(cluster, Agent("a1", 2));
  const Ask trial{.type = events::TASK_TYPE_TRIAL, .priority = 50};
  RUN_OK(cluster, Submission("old-1", [&] {
           Ask a = trial;
           a.job = "old";
           return a;
         }()));
  RUN_OK(cluster, Submission("new-1", [&] {
           Ask a = trial;
           a.job = "new";
           return a;
         }()));
  // A job submitted later does not preempt an equal-priority job ahead of it.
  RUN_OK(cluster, Submission("newest-1", [&] {
           Ask a = trial;
           a.job = "newest";
           return a;
         }()));
  EXPECT_TRUE(cluster.Preempted().empty());
  // A new trial of the older job does: job "new" is behind it in the queue ("newest" is not
  // running, so it is no candidate).
  RUN_OK(cluster, Submission("old-2", [&] {
           Ask a = trial;
           a.job = "old";
           return a;
         }()));
  EXPECT_EQ(cluster.Preempted(), Strings{"new-1"});
}

TEST(PriorityTest, ThePreemptingTaskStartsAfterTheVictimsReleaseAndVictimsKeepTheirPlace) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(true));
  RUN_OK(cluster, Agent("a1", 2));
  BATCH_OK(cluster, Trials("low", 2, {.priority = 50}));
  RUN_OK(cluster,
         Submission("high", {.slots = 2, .type = events::TASK_TYPE_TRIAL, .priority = 10}));
  EXPECT_EQ(cluster.Preempted(), (Strings{"low-02", "low-01"}));
  EXPECT_TRUE(cluster.Assigned().empty()) << "not started in the pass that preempts";
  EXPECT_TRUE(cluster.Task("low-01").preempting);

  RUN_OK(cluster, Exit("low-02"));
  auto released = cluster.Last(events::Envelope::kAllocationReleased);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].allocation_released().allocation_id(), "low-02.1");
  EXPECT_TRUE(Contains(released[0].allocation_released().reason(), "old position"));
  EXPECT_EQ(cluster.Task("low-02").state, TaskState::kQueued);
  EXPECT_TRUE(cluster.Assigned().empty()) << "one victim still holds a slot";

  RUN_OK(cluster, Exit("low-01"));
  EXPECT_EQ(cluster.Assigned(), Strings{"high"});
  EXPECT_FALSE(AssignmentOf(cluster, "high")->backfilled());

  // The victims come back in their old order, with new allocations.
  RUN_OK(cluster, Exit("high"));
  EXPECT_EQ(cluster.Assigned(), (Strings{"low-01", "low-02"}));
  EXPECT_EQ(cluster.Task("low-01").allocation_id, "low-01.2");
}

TEST(PriorityTest, APreemptionThatOutlivesItsGracePeriodIsKilled) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(true, /*grace_seconds=*/10));
  RUN_OK(cluster, Agent("a1", 1));
  RUN_OK(cluster, Submission("low", {.type = events::TASK_TYPE_TRIAL, .priority = 50}));
  RUN_OK(cluster, Submission("high", {.type = events::TASK_TYPE_TRIAL, .priority = 10}));
  auto preemptions = cluster.Last(events::Envelope::kPreemptionRequested);
  ASSERT_EQ(preemptions.size(), 1u);
  const int64_t deadline = cluster.now + 10'000'000;  // 10 s of grace
  EXPECT_EQ(preemptions[0].preemption_requested().deadline_unix_micros(), deadline);

  cluster.now = deadline - 1;
  auto early = cluster.Run(ExpirePreemptions{});
  ASSERT_TRUE(early.ok());
  EXPECT_TRUE(early->events.empty()) << "the grace period has not ended";

  cluster.now = deadline + 1;
  auto late = cluster.Run(ExpirePreemptions{});
  ASSERT_TRUE(late.ok());
  ASSERT_EQ(late->events.size(), 1u);
  const auto& kill = late->events[0].kill_requested();
  EXPECT_EQ(kill.task_id(), "low");
  EXPECT_TRUE(kill.preemption_expired());
  EXPECT_TRUE(Contains(kill.reason(), "grace period of 10 s")) << kill.reason();
  auto again = cluster.Run(ExpirePreemptions{});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->events.empty()) << "one forced kill per preemption";

  // Killed, the trial still goes back to the queue; the preempting task starts.
  RUN_OK(cluster, (ReportTaskExited{"", "low", "", std::nullopt, 9, ""}));
  EXPECT_EQ(cluster.Last(events::Envelope::kAllocationReleased).size(), 1u);
  EXPECT_EQ(cluster.Task("low").state, TaskState::kQueued);
  EXPECT_EQ(cluster.Assigned(), Strings{"high"});
}

// The seeds' example of the priority scheduler with preemption, step by step, on 8 slots.
TEST(PriorityTest, TheSeedsSevenStepExample) {
  Cluster cluster;
  RUN_OK(cluster, PriorityPool(true));
  RUN_OK(cluster, Agent("gpus", 8));

  // 1. "a priority 2 adaptive_asha experiment with max_concurrent_trials 20 and slots_per_trial
  //    1. 8 trials run and utilize all 8 GPUs." (12 trials: more than fit.)
  BATCH_OK(cluster, Trials("asha", 12, {.priority = 2}));
  EXPECT_EQ(cluster.Assigned(), Ids("asha", 1, 8));
  EXPECT_EQ(cluster.Task("asha-09").state, TaskState::kQueued);

  // 2. "a priority 1 distributed training experiment with slots_per_trial 4. 4 ASHA trials are
  //    preempted so the new distributed training experiment can run."
  BATCH_OK(cluster, Trials("dist4", 1, {.slots = 4, .priority = 1}));
  EXPECT_EQ(cluster.Preempted(), (Strings{"asha-08", "asha-07", "asha-06", "asha-05"}));
  EXPECT_TRUE(cluster.Assigned().empty());
  for (int victim = 8; victim >= 5; --victim) {
    RUN_OK(cluster, Exit(Id("asha", victim)));  // checkpointed and exited
    EXPECT_EQ(cluster.Task(Id("asha", victim)).state, TaskState::kQueued);
  }
  EXPECT_EQ(cluster.Assigned(), Strings{"dist4-01"}) << "after the last victim released";
  EXPECT_EQ(cluster.Keeping("asha"), Ids("asha", 1, 4));

  // 3. "a priority 3 notebook with resources.slots 1 ... will run as soon as the two active
  //    experiments collectively need <= 7 GPUs."
  RUN_OK(cluster, Submission("notebook", {.type = events::TASK_TYPE_NOTEBOOK, .priority = 3}));
  EXPECT_TRUE(cluster.Assigned().empty());
  EXPECT_TRUE(cluster.Preempted().empty()) << "a less important task preempts nothing";
  // Trials end one by one; while ASHA trials still queue, the experiments need all 8 slots and
  // each freed slot goes to the next ASHA trial (the preempted ones first, at their old place).
  for (int done = 1; done <= 8; ++done) {
    RUN_OK(cluster, Exit(Id("asha", done)));
    EXPECT_EQ(cluster.Assigned(), Strings{Id("asha", done + 4)}) << "after asha-" << done;
  }
  // Now asha-09..12 and dist4 run: 4 + 4 = 8. One more ending leaves them needing 7.
  RUN_OK(cluster, Exit("asha-09"));
  EXPECT_EQ(cluster.Assigned(), Strings{"notebook"});

  // 4. "ASHA and the distributed training experiment both complete, and the notebook task with
  //    priority 3 will run."
  for (const auto* task : {"asha-10", "asha-11", "asha-12", "dist4-01"}) {
    RUN_OK(cluster, Exit(task));
  }
  EXPECT_EQ(cluster.Holding(), Strings{"notebook"});
  EXPECT_EQ(cluster.state.agents.at("gpus").free_slots(), 7);

  // 5. "a priority 1 distributed training experiment with slots_per_trial 8 ... cannot be
  //    scheduled because it requires 8 slots, notebooks are not preemptible, and therefore only
  //    7 slots are available."
  BATCH_OK(cluster, Trials("dist8", 1, {.slots = 8, .priority = 1}));
  EXPECT_TRUE(cluster.Assigned().empty());
  EXPECT_TRUE(cluster.Preempted().empty());
  auto why = ExplainTask(cluster.state, "dist8-01", cluster.now);
  ASSERT_TRUE(why.ok());
  EXPECT_TRUE(Contains(why->reason, "needs 8 slots")) << why->reason;
  EXPECT_TRUE(Contains(why->reason, "7 idle")) << why->reason;

  // 6. "a priority 2 distributed training experiment with slots_per_trial 4. One trial will be
  //    scheduled to make use of the idle 7 slots."
  BATCH_OK(cluster, Trials("dist4b", 1, {.slots = 4, .priority = 2}));
  EXPECT_EQ(cluster.Assigned(), Strings{"dist4b-01"});
  EXPECT_TRUE(AssignmentOf(cluster, "dist4b-01")->backfilled());

  // 7. "The notebook is killed. The priority 2 distributed training experiment is preempted.
  //    And then the priority 1 distributed training experiment starts running. Once that
  //    experiment is complete, distributed training experiment with priority 2 restarts."
  RUN_OK(cluster, (KillTask{"notebook", "user asked"}));
  EXPECT_EQ(cluster.Preempted(), Strings{"dist4b-01"});
  EXPECT_EQ(
      cluster.Last(events::Envelope::kPreemptionRequested)[0].preemption_requested().for_task_id(),
      "dist8-01");
  RUN_OK(cluster, (ReportTaskExited{"", "notebook", "", std::nullopt, 9, ""}));
  EXPECT_TRUE(cluster.Assigned().empty()) << "dist4b-01 still holds 4 slots";
  RUN_OK(cluster, Exit("dist4b-01"));
  EXPECT_EQ(cluster.Assigned(), Strings{"dist8-01"});
  EXPECT_FALSE(AssignmentOf(cluster, "dist8-01")->backfilled());
  EXPECT_EQ(cluster.Task("dist4b-01").state, TaskState::kQueued);
  RUN_OK(cluster, Exit("dist8-01"));
  EXPECT_EQ(cluster.Assigned(), Strings{"dist4b-01"});
  EXPECT_EQ(cluster.Task("dist4b-01").allocation_id, "dist4b-01.2");
}

// ---------------------------------------------------------------------------------------------
// Round robin

TEST(RoundRobinTest, JobsTakeTurnsTheOneHoldingFewestSlotsFirst) {
  Cluster cluster;
  RUN_OK(cluster, Pools({Pool("default", {.type = kRoundRobin})}));
  RUN_OK(cluster, Agent("a1", 5));
  BATCH_OK(cluster, Trials("a", 2));
  ASSERT_EQ(cluster.Holding("a").size(), 2u);
  RUN_OK(cluster, (DisableAgent{"a1", /*drain=*/true}));
  // Job a (submitted first) queues 3 more, job b 3.
  BATCH_OK(cluster, (std::vector<Command>{
                        Submission("a-03", {.job = "a"}), Submission("a-04", {.job = "a"}),
                        Submission("a-05", {.job = "a"}), Submission("b-01", {.job = "b"}),
                        Submission("b-02", {.job = "b"}), Submission("b-03", {.job = "b"})}));
  RUN_OK(cluster, EnableAgent{"a1"});
  // 3 free slots. b holds 0, a holds 2: turn 1 is b then a, turn 2 b again; then no room.
  EXPECT_EQ(cluster.Assigned(), (Strings{"b-01", "a-03", "b-02"}));
  EXPECT_TRUE(Contains(AssignmentOf(cluster, "b-02")->reason(), "turn 2"))
      << AssignmentOf(cluster, "b-02")->reason();
}

}  // namespace
}  // namespace cairn::commands
