// The job queue projection on plain values: pools ordered as their schedulers order them, jobs
// aggregating their live tasks, and users' queue changes.
#include "projections/job_queue_projector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "commands/decision_state.h"
#include "events/envelope_util.h"
#include "projections/projections.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"

namespace cairn {
namespace {

using testing::History;
using namespace testing;

TEST(JobQueueProjectorTest, PriorityPoolsOrderByPriorityThenSubmission) {
  History history;
  history.ConfigurePools(History::Pools(
      {{"default", events::SCHEDULER_TYPE_PRIORITY}, {"gpu", events::SCHEDULER_TYPE_PRIORITY}}));
  history.Submit("t-late", "late", "default", 42, 1);
  history.Submit("t-urgent", "urgent", "default", 1, 1);
  history.Submit("t-gpu", "gpu-job", "gpu", 42, 4);
  history.Submit("t-negative", "negative", "default", -5, 1);
  history.Submit("t-later", "later", "default", 42, 1);
  history.Submit("t-urgent2", "urgent2", "default", 1, 1);
  ProjectionState state = Fold(history);

  auto pool = MustQueue(state, "default");
  EXPECT_EQ(JobIds(pool),
            (std::vector<std::string>{"negative", "urgent", "urgent2", "late", "later"}));
  EXPECT_EQ(JobsAhead(pool), (std::vector<int>{0, 1, 2, 3, 4}));

  auto all = MustQueue(state, "");
  EXPECT_EQ(JobIds(all), (std::vector<std::string>{"negative", "urgent", "urgent2", "late", "later",
                                                   "gpu-job"}));
  EXPECT_EQ(JobsAhead(all), (std::vector<int>{0, 1, 2, 3, 4, 0}));

  auto gpu = MustQueue(state, "gpu");
  ASSERT_EQ(gpu.size(), 1u);
  const JobView& job = gpu[0];
  EXPECT_EQ(job.task_id(), "t-gpu");
  EXPECT_EQ(job.task_type(), events::TASK_TYPE_COMMAND);
  EXPECT_EQ(job.name(), "task t-gpu");
  EXPECT_EQ(job.user(), "alice");
  EXPECT_EQ(job.resource_pool(), "gpu");
  EXPECT_EQ(job.priority(), 42);
  EXPECT_EQ(job.weight(), 1.0);
  EXPECT_EQ(job.submission_time_unix_micros(), history.time_of(3));
  EXPECT_EQ(job.submitted_offset(), 3u);
  EXPECT_EQ(job.requested_slots(), 4);
  EXPECT_EQ(job.allocated_slots(), 0);
  EXPECT_EQ(job.state(), views::JOB_STATE_QUEUED);

  EXPECT_TRUE(MustQueue(state, "no-such-pool").empty());
  // A pool whose name is a prefix of another's does not see the other's jobs.
  EXPECT_TRUE(MustQueue(state, "gp").empty());
}

TEST(JobQueueProjectorTest, ScheduledJobsKeepTheirPlaceAndLeaveOnExit) {
  History history;
  history.Submit("t1", "j1", "default", 42, 2);
  history.Submit("t2", "j2", "default", 42, 1);
  history.Submit("t3", "j3", "default", 42, 1);
  history.Assign("t2", "al2", "a1", "i1", {0});
  history.Assign("t1", "al1", "a1", "i1", {1, 2});
  history.Exit("t1", "al1", "a1", 0, std::nullopt, "exited");
  history.Kill("t3", "", "");
  history.Exit("t3", "", "", std::nullopt, std::nullopt, "killed while queued");
  ProjectionState state;
  for (size_t i = 0; i < 5; ++i) ASSERT_TRUE(state.Apply(history.events()[i]).ok());
  auto queue = MustQueue(state, "default");
  EXPECT_EQ(JobIds(queue), (std::vector<std::string>{"j1", "j2", "j3"}));
  EXPECT_EQ(queue[0].state(), views::JOB_STATE_SCHEDULED);
  EXPECT_EQ(queue[0].allocated_slots(), 2);
  EXPECT_EQ(queue[1].state(), views::JOB_STATE_SCHEDULED);
  EXPECT_EQ(queue[1].allocated_slots(), 1);
  EXPECT_EQ(queue[2].state(), views::JOB_STATE_QUEUED);

  for (size_t i = 5; i < history.events().size(); ++i) {
    ASSERT_TRUE(state.Apply(history.events()[i]).ok());
  }
  queue = MustQueue(state, "default");
  EXPECT_EQ(JobIds(queue), (std::vector<std::string>{"j2"}));
  EXPECT_EQ(JobsAhead(queue), (std::vector<int>{0}));
}

// A paused generic task asks for nothing: its job leaves the queue until it is unpaused, at its
// old position.
TEST(JobQueueProjectorTest, AHeldTasksJobLeavesTheQueueUntilUnheld) {
  History history;
  history.Submit("t1", "j1", "default", 42, 2);
  history.Submit("t2", "j2", "default", 42, 1);
  history.Assign("t1", "al1", "a1", "i1", {0, 1});
  history.Hold("t1", true);
  history.Release("t1", "al1", "held until unpaused");
  ProjectionState state;
  for (const auto& event : history.events()) ASSERT_TRUE(state.Apply(event).ok());
  auto queue = MustQueue(state, "default");
  EXPECT_EQ(JobIds(queue), (std::vector<std::string>{"j2"}));
  history.Hold("t1", false);
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  queue = MustQueue(state, "default");
  EXPECT_EQ(JobIds(queue), (std::vector<std::string>{"j1", "j2"}));
  EXPECT_EQ(queue[0].state(), views::JOB_STATE_QUEUED);
  EXPECT_EQ(queue[0].requested_slots(), 2);
  // Held again and then killed: it leaves for good.
  history.Hold("t1", true);
  history.Exit("t1", "", "", std::nullopt, std::nullopt, "killed while paused");
  for (size_t i = history.events().size() - 2; i < history.events().size(); ++i) {
    ASSERT_TRUE(state.Apply(history.events()[i]).ok());
  }
  EXPECT_EQ(JobIds(MustQueue(state, "default")), (std::vector<std::string>{"j2"}));
}

TEST(JobQueueProjectorTest, FairSharePoolsOrderByQueuePositionAlone) {
  History history;  // no recorded configuration: "default" is a fair-share pool
  history.Submit("t1", "j1", "default", 42, 1);
  history.Submit("t2", "j2", "default", 1, 1);
  history.Submit("t3", "j3", "default", 99, 1);
  ProjectionState state = Fold(history);
  EXPECT_EQ(JobIds(MustQueue(state, "default")), (std::vector<std::string>{"j1", "j2", "j3"}))
      << "priority is no part of a fair-share pool's order";

  // Moving j3 ahead of j1 (a position before j1's) puts it first; jobs ahead follow.
  const int64_t j1_position = MustQueue(state, "default")[0].queue_position();
  history.ChangeJob("j3", 99, 1.0, "default", j1_position - 1, 0, "moved ahead of job j1");
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  auto queue = MustQueue(state, "default");
  EXPECT_EQ(JobIds(queue), (std::vector<std::string>{"j3", "j1", "j2"}));
  EXPECT_EQ(JobsAhead(queue), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(queue[0].queue_change_reason(), "moved ahead of job j1");

  // Once the pools are recorded with a priority scheduler, priority leads.
  history.ConfigurePools(History::Pools({{"default", events::SCHEDULER_TYPE_PRIORITY}}));
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  EXPECT_EQ(JobIds(MustQueue(state, "default")), (std::vector<std::string>{"j2", "j1", "j3"}));
}

TEST(JobQueueProjectorTest, ANewJobsPositionIsItsSubmissionOffsetSpacedAsTheWriterSpacesIt) {
  static_assert(projections::kQueuePositionSpacing == commands::kQueuePositionSpacing,
                "the read side must number positions as the decision state does");
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 1);
  ProjectionState state = Fold(history);
  EXPECT_EQ(MustQueue(state, "default")[0].queue_position(), 1 * commands::kQueuePositionSpacing);
}

TEST(JobQueueProjectorTest, JobQueueChangedMovesAJobBetweenPoolsAndPriorities) {
  History history;
  history.ConfigurePools(History::Pools(
      {{"default", events::SCHEDULER_TYPE_PRIORITY}, {"gpu", events::SCHEDULER_TYPE_PRIORITY}}));
  history.Submit("t1", "j1", "default", 42, 1);
  history.Submit("t2", "j2", "default", 42, 1);
  history.ChangeJob("j2", 5, 3.0, "gpu", 77, 4, "resource pool default -> gpu");
  ProjectionState state = Fold(history);
  EXPECT_EQ(JobIds(MustQueue(state, "default")), (std::vector<std::string>{"j1"}));
  auto gpu = MustQueue(state, "gpu");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].priority(), 5);
  EXPECT_EQ(gpu[0].weight(), 3.0);
  EXPECT_EQ(gpu[0].queue_position(), 77);
  EXPECT_EQ(gpu[0].max_slots(), 4);
  // The task view follows its job's parameters too.
  TaskView task = MustGetTask(state, "t2");
  EXPECT_EQ(task.priority(), 5);
  EXPECT_EQ(task.resource_pool(), "gpu");
  EXPECT_EQ(task.weight(), 3.0);
  EXPECT_EQ(MustGetTask(state, "t1").priority(), 42);
  // A change for an unknown job changes nothing.
  History unknown;
  unknown.ChangeJob("nobody", 1, 1.0, "default", 0);
  ProjectionState empty = Fold(unknown);
  EXPECT_TRUE(MustQueue(empty, "").empty());
}

// An experiment's trials share their job: the job sums their slots and is scheduled while any
// of them runs.
events::Envelope& SubmitTrial(History& history, const std::string& task, int slots) {
  events::Envelope& event = history.Submit(task, "exp", "default", 42, slots);
  event.mutable_task_submitted()->mutable_spec()->set_task_type(events::TASK_TYPE_TRIAL);
  return event;
}

TEST(JobQueueProjectorTest, AJobAggregatesItsLiveTasks) {
  History history;
  history.Register("a1", "i1", "default", 8);
  SubmitTrial(history, "trial-1", 2);
  SubmitTrial(history, "trial-2", 2);
  SubmitTrial(history, "trial-3", 1);
  history.Submit("other", "other", "default", 42, 1);
  ProjectionState state = Fold(history);
  auto queue = MustQueue(state, "default");
  ASSERT_EQ(JobIds(queue), (std::vector<std::string>{"exp", "other"}));
  EXPECT_EQ(queue[0].requested_slots(), 5);
  EXPECT_EQ(queue[0].allocated_slots(), 0);
  EXPECT_EQ(queue[0].task_id(), "trial-1") << "the first task names the job";
  EXPECT_EQ(queue[0].state(), views::JOB_STATE_QUEUED);

  auto apply = [&](events::Envelope& event) { ASSERT_TRUE(state.Apply(event).ok()); };
  struct Expect {
    int requested, allocated;
    views::JobState state;
  };
  auto check = [&](const Expect& expected, const std::string& after) {
    auto jobs = MustQueue(state, "default");
    ASSERT_FALSE(jobs.empty()) << after;
    ASSERT_EQ(jobs[0].job_id(), "exp") << after;
    EXPECT_EQ(jobs[0].requested_slots(), expected.requested) << after;
    EXPECT_EQ(jobs[0].allocated_slots(), expected.allocated) << after;
    EXPECT_EQ(jobs[0].state(), expected.state) << after;
  };
  auto& backfilled = history.Assign("trial-2", "al2", "a1", "i1", {0, 1}, "backfilled");
  backfilled.mutable_allocation_assigned()->set_backfilled(true);
  apply(backfilled);
  check({5, 2, views::JOB_STATE_SCHEDULED_BACKFILLED}, "only a backfilled trial runs");
  apply(history.Assign("trial-1", "al1", "a1", "i1", {2, 3}, "fits"));
  check({5, 4, views::JOB_STATE_SCHEDULED}, "a trial runs on its own right");
  apply(history.Release("trial-1", "al1", "preempted; back in the queue"));
  check({5, 2, views::JOB_STATE_SCHEDULED_BACKFILLED}, "the release");
  apply(history.Release("trial-2", "stale-allocation", "ignored"));
  check({5, 2, views::JOB_STATE_SCHEDULED_BACKFILLED}, "a stale release");
  apply(history.Exit("trial-2", "al2", "a1", 0, std::nullopt, "exited"));
  check({3, 0, views::JOB_STATE_QUEUED}, "the running trial's exit");
  EXPECT_EQ(JobsAhead(MustQueue(state, "default")), (std::vector<int>{0, 1}));

  // The job keeps its place while it has live tasks, leaves when the last ends, and a later
  // trial brings it back at its old position.
  apply(history.ChangeJob("exp", 42, 1.0, "default", -5));
  apply(history.Exit("trial-1", "", "", std::nullopt, std::nullopt, "killed"));
  apply(history.Exit("trial-3", "", "", std::nullopt, std::nullopt, "killed"));
  EXPECT_EQ(JobIds(MustQueue(state, "default")), (std::vector<std::string>{"other"}));
  apply(SubmitTrial(history, "trial-4", 3));
  queue = MustQueue(state, "default");
  ASSERT_EQ(JobIds(queue), (std::vector<std::string>{"exp", "other"}));
  EXPECT_EQ(queue[0].queue_position(), -5);
  EXPECT_EQ(queue[0].requested_slots(), 3);
  ASSERT_EQ(queue[0].tasks_size(), 1);
  EXPECT_EQ(queue[0].tasks(0).task_id(), "trial-4");

  // A command's job has one task and leaves nothing behind when it ends.
  ProjectionState commands_only;
  History one;
  one.Submit("c1", "c1", "default", 42, 1);
  ASSERT_TRUE(commands_only.Apply(one.events().back()).ok());
  ProjectionState nothing;
  auto before = nothing.Digest(projections::kJobQueueProjector);
  one.Exit("c1", "", "", std::nullopt, std::nullopt, "killed");
  ASSERT_TRUE(commands_only.Apply(one.events().back()).ok());
  EXPECT_EQ(*commands_only.Digest(projections::kJobQueueProjector), *before);
}

TEST(JobQueueProjectorTest, AGangsAllocatedSlotsAreTheSumOfItsParts) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Register("a2", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 8);
  history.AssignGang(
      "t1", "al1",
      {History::Part("a1", "i1", {0, 1, 2, 3}), History::Part("a2", "i1", {0, 1, 2, 3})});
  ProjectionState state = Fold(history);
  EXPECT_EQ(MustQueue(state, "default")[0].allocated_slots(), 8);
  history.PartExit("t1", "al1", "a2", 0);
  ASSERT_TRUE(state.Apply(history.events().back()).ok());
  EXPECT_EQ(MustQueue(state, "default")[0].allocated_slots(), 4);
  EXPECT_EQ(MustQueue(state, "default")[0].state(), views::JOB_STATE_SCHEDULED);
}

// The latest decision about a task, through a preemption, a release and a new placement.
// A page read from the ordered indexes is the same slice, with the same jobs ahead, as the whole
// queue read and sorted: for random histories of submissions, moves between pools and
// priorities, placements and exits, in pools ordered by priority, by position, and unrecorded.
TEST(JobQueueProjectorTest, APageIsTheSliceOfTheWholeQueue) {
  std::mt19937 random(17);
  const std::vector<std::string> pools = {"default", "gpu", "gpu-old"};
  for (int round = 0; round < 20; ++round) {
    History history;
    history.ConfigurePools(History::Pools({{"default", events::SCHEDULER_TYPE_FAIR_SHARE},
                                           {"gpu", events::SCHEDULER_TYPE_PRIORITY}}));
    std::vector<std::string> live;  // tasks submitted and not exited; task i is job j-i
    int next = 0;
    for (int step = 0; step < 60; ++step) {
      const int choice = static_cast<int>(random() % 10);
      if (choice < 5 || live.empty()) {
        const std::string task = "t" + std::to_string(next);
        history.Submit(task, "j" + std::to_string(next), pools[random() % pools.size()],
                       static_cast<int>(random() % 5) * 10, 1);
        live.push_back(task);
        ++next;
        continue;
      }
      const size_t pick = random() % live.size();
      const std::string task = live[pick];
      const std::string job = "j" + task.substr(1);
      if (choice < 7) {
        history.ChangeJob(job, static_cast<int>(random() % 5) * 10, 1.0,
                          pools[random() % pools.size()], static_cast<int64_t>(random() % 1000));
      } else if (choice < 8) {
        history.Assign(task, "al-" + task, "a1", "i1", {0});
      } else {
        history.Kill(task, "", "");
        history.Exit(task, "", "", std::nullopt, std::nullopt, "killed while queued");
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
      }
    }
    ProjectionState state = Fold(history);
    for (const std::string& pool : {std::string(), pools[0], pools[1], pools[2]}) {
      const std::vector<JobView> whole = MustQueue(state, pool);
      for (bool descending : {false, true}) {
        std::vector<JobView> ordered = whole;
        if (descending) std::reverse(ordered.begin(), ordered.end());
        for (size_t offset : {size_t{0}, size_t{1}, size_t{7}, whole.size(), whole.size() + 3}) {
          for (size_t limit : {size_t{0}, size_t{1}, size_t{5}, size_t{100}}) {
            auto page = state.JobQueuePage(pool, offset, limit, descending);
            ASSERT_TRUE(page.ok()) << page.status().ToString();
            EXPECT_EQ(page->total, whole.size());
            const size_t start = std::min(offset, ordered.size());
            const size_t end =
                limit == 0 ? ordered.size() : std::min(ordered.size(), start + limit);
            std::vector<JobView> expected(ordered.begin() + static_cast<std::ptrdiff_t>(start),
                                          ordered.begin() + static_cast<std::ptrdiff_t>(end));
            EXPECT_EQ(JobIds(page->jobs), JobIds(expected))
                << "round " << round << " pool '" << pool << "' offset " << offset << " limit "
                << limit << (descending ? " descending" : "");
            EXPECT_EQ(JobsAhead(page->jobs), JobsAhead(expected));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cairn
