// The scheduler's policies as the seeds describe them (fair share, priority with preemption,
// round robin, fitting, gangs, zero-slot tasks, pools, the job queue), driven like the writer:
// commands in, their events and the scheduling pass's events out. Every expected value is taken
// from the seeds or the issue, or worked out by hand in the comment next to it.
#include "commands/scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "commands/scheduler/explain.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

using testing::Agent;
using testing::Ask;
using testing::Cluster;
using testing::Exit;
using testing::Pool;
using testing::Pools;
using testing::Submission;
using Strings = std::vector<std::string>;

constexpr auto kFairShare = events::SCHEDULER_TYPE_FAIR_SHARE;
constexpr auto kPriority = events::SCHEDULER_TYPE_PRIORITY;
constexpr auto kRoundRobin = events::SCHEDULER_TYPE_ROUND_ROBIN;

// "job-03": zero-padded so that task ids sort in submission order.
std::string Id(const std::string& job, int number) {
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%02d", number);
  return job + suffix;
}

Strings Ids(const std::string& job, int first, int last) {
  Strings ids;
  for (int i = first; i <= last; ++i) ids.push_back(Id(job, i));
  return ids;
}

// `count` trials of one job (an experiment), each asking for `ask`.
std::vector<Command> Trials(const std::string& job, int count, Ask ask = {}) {
  ask.job = job;
  ask.type = events::TASK_TYPE_TRIAL;
  std::vector<Command> trials;
  for (int i = 1; i <= count; ++i) trials.push_back(Submission(Id(job, i), ask));
  return trials;
}

std::vector<Command> Join(std::vector<Command> a, const std::vector<Command>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

ConfigurePools PriorityPool(bool preemption, double grace_seconds = 3600) {
  return Pools({Pool("default", {.type = kPriority, .preemption = preemption})}, "", "",
               grace_seconds);
}

const events::AllocationAssigned* AssignmentOf(const Cluster& cluster, const std::string& task) {
  for (const auto& event : cluster.last_events) {
    if (event.has_allocation_assigned() && event.allocation_assigned().task_id() == task) {
      return &event.allocation_assigned();
    }
  }
  return nullptr;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Keeps a test's setup terse: every setup command must be accepted.
#define RUN_OK(cluster, command)                                          \
  do {                                                                    \
    auto run_ok_result = (cluster).Run(command);                          \
    ASSERT_TRUE(run_ok_result.ok()) << run_ok_result.status().ToString(); \
  } while (0)
#define BATCH_OK(cluster, commands)                                  \
  do {                                                               \
    auto batch_ok_status = (cluster).RunBatch(commands);             \
    ASSERT_TRUE(batch_ok_status.ok()) << batch_ok_status.ToString(); \
  } while (0)

// Records a task holding the first `slots` slots of `agent_id`, as if placed earlier.
void Occupy(Cluster& cluster, const std::string& task_id, const std::string& agent_id, int slots) {
  events::Envelope submitted;
  auto* task = submitted.mutable_task_submitted();
  task->set_task_id(task_id);
  task->set_job_id(task_id);
  task->mutable_spec()->add_entrypoint("true");
  task->mutable_resources()->set_slots(slots);
  task->mutable_resources()->set_resource_pool("default");
  task->mutable_resources()->set_priority(kDefaultPriority);
  task->mutable_resources()->set_weight(1);
  cluster.Append(submitted);
  events::Envelope assigned;
  auto* allocation = assigned.mutable_allocation_assigned();
  allocation->set_task_id(task_id);
  allocation->set_allocation_id(task_id + ".1");
  allocation->set_agent_id(agent_id);
  allocation->set_agent_incarnation(cluster.state.agents.at(agent_id).incarnation);
  for (int slot = 0; slot < slots; ++slot) allocation->add_slot_ids(slot);
  allocation->set_resource_pool("default");
  cluster.Append(assigned);
}

// ---------------------------------------------------------------------------------------------
// Fair share

struct FairShareCase {
  std::string name;
  std::vector<int> agents;  // slots per agent
  double weight_a, weight_b;
  int demand_a, demand_b;
  size_t expected_a, expected_b;
};

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
    ASSERT_EQ(cluster.Task("big").parts.size(), 2u);
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
  EXPECT_TRUE(cluster.Task("cpu").slot_ids.empty());
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
