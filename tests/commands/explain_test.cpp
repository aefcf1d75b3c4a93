// Explaining one task stays cheap with a long queue and says what the whole scheduling pass
// would: the ranked index of live jobs (commands/tasks/job_ranks.h) against a walk of every job,
// and the one-task pass (ExplainQueuedTask, with and without kept passes) against Schedule's
// reasons for every queued task.
#include "commands/scheduler/explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "commands/scheduler/scheduler.h"
#include "commands/tasks/job_ranks.h"
#include "tests/commands/scheduler_support.h"

namespace cairn::commands {
namespace {

using namespace scheduler_testing;

TEST(JobRanksTest, CountsAndListsTheJobsAheadInEitherQueueOrder) {
  JobRanks ranks;
  // Added ids must outlive their entries (JobRanks keeps views, as of the JobRecords' ids).
  const std::string a = "a", b = "b", c = "c", other = "other-pool";
  ranks.Add("gpu", 50, 300, c);
  ranks.Add("gpu", 10, 200, b);
  ranks.Add("gpu", 50, 100, a);
  ranks.Add("cpu", 1, 1, other);
  // By position: a (100), b (200), c (300).
  EXPECT_EQ(ranks.CountAhead("gpu", false, 50, 300), 2u);
  EXPECT_EQ(ranks.FirstAhead("gpu", false, 50, 300, 10), (Strings{"a", "b"}));
  EXPECT_EQ(ranks.FirstAhead("gpu", false, 50, 300, 1), (Strings{"a"}));
  // By priority first: b (10), a (50, 100), c (50, 300).
  EXPECT_EQ(ranks.CountAhead("gpu", true, 50, 100), 1u);
  EXPECT_EQ(ranks.FirstAhead("gpu", true, 50, 300, 10), (Strings{"b", "a"}));
  // A job is not ahead of itself, nor of anything in another pool.
  EXPECT_EQ(ranks.CountAhead("gpu", false, 50, 100), 0u);
  EXPECT_EQ(ranks.CountAhead("cpu", true, 1, 1), 0u);
  EXPECT_EQ(ranks.CountAhead("none", true, 99, 999), 0u);
  ranks.Remove("gpu", 10, 200, "b");
  EXPECT_EQ(ranks.CountAhead("gpu", true, 50, 300), 1u);
  EXPECT_EQ(ranks.FirstAhead("gpu", false, 50, 1000, 10), (Strings{"a", "c"}));
}

// What JobsAheadOf answered before the index: every live job of the pool with a smaller
// (priority under the priority scheduler, queue position) key, in that order.
Strings WalkJobsAhead(const DecisionState& state, const JobRecord& job) {
  const events::ResourcePoolConfig* pool = state.FindPool(job.resource_pool);
  const bool by_priority = pool != nullptr && pool->scheduler().type() == kPriority;
  auto key = [&](const JobRecord& other) {
    return std::make_tuple(by_priority ? other.priority : 0, other.queue_position, other.job_id);
  };
  std::vector<std::tuple<int32_t, int64_t, std::string>> ahead;
  for (const auto& [job_id, other] : state.jobs) {
    if (other.live_tasks == 0 || other.resource_pool != job.resource_pool) continue;
    if (std::make_pair(std::get<0>(key(other)), std::get<1>(key(other))) <
        std::make_pair(std::get<0>(key(job)), std::get<1>(key(job)))) {
      ahead.push_back(key(other));
    }
  }
  std::sort(ahead.begin(), ahead.end());
  Strings ids;
  for (const auto& entry : ahead) ids.push_back(std::get<2>(entry));
  return ids;
}

// Submissions (commands and multi-task jobs), priority changes, moves within and across pools,
// kills and exits, in a seeded random order; after each step every live job's jobs ahead match
// the walk, and every queued task's one-task explanation, fresh or from the kept passes, matches
// the full pass.
TEST(ExplainTest, TheIndexAndTheOneTaskPassAgreeWithTheFullPassThroughRandomChanges) {
  Cluster cluster;
  RUN_OK(cluster, Pools({Pool("default", {.type = kPriority, .preemption = true}), Pool("fair"),
                         Pool("empty", {.type = kRoundRobin})}));
  RUN_OK(cluster, Agent("a1", 4));
  RUN_OK(cluster, Agent("f1", 2, "fair"));
  std::mt19937 random(7);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
  const Strings pools = {"default", "fair", "empty"};
  ExplainedPasses passes;  // kept across the steps: each change must renew it
  int next_task = 0;
  for (int step = 0; step < 300; ++step) {
    Strings live_jobs;
    Strings live_tasks;
    for (const auto& [job_id, job] : cluster.state.jobs) {
      if (job.live_tasks > 0) live_jobs.push_back(job.job_id);
    }
    for (const auto& [task_id, task] : cluster.state.tasks) {
      if (task.state != TaskState::kExited) live_tasks.push_back(task.task_id);
    }
    const int action = pick(10);
    if (action < 4 || live_jobs.empty()) {
      Ask ask{
          .slots = pick(3), .priority = 10 * (1 + pick(5)), .pool = pools[pick(3)], .force = true};
      if (pick(4) == 0 && !live_jobs.empty()) {
        // A further task of a live job (as an experiment's next trial): it follows the job.
        ask.job = live_jobs[pick(static_cast<int>(live_jobs.size()))];
        ask.type = events::TASK_TYPE_TRIAL;
        ask.pool.clear();
        ask.priority = 0;
      }
      (void)cluster.Run(Submission("t" + std::to_string(next_task++), ask));
    } else if (action < 7) {
      UpdateJob update;
      update.job_id = live_jobs[pick(static_cast<int>(live_jobs.size()))];
      const std::string& anchor = live_jobs[pick(static_cast<int>(live_jobs.size()))];
      switch (pick(4)) {
        case 0:
          update.priority = 10 * (1 + pick(5));
          break;
        case 1:
          update.resource_pool = pools[pick(3)];
          break;
        case 2:
          update.ahead_of = anchor;
          break;
        default:
          update.behind_of = anchor;
          break;
      }
      (void)cluster.Run(update);
    } else if (action < 9) {
      (void)cluster.Run(KillTask{live_tasks[pick(static_cast<int>(live_tasks.size()))], "test"});
    } else {
      for (const auto& task_id : live_tasks) {
        if (cluster.Task(task_id).holds_allocation()) {
          (void)cluster.Run(Exit(task_id));
          break;
        }
      }
    }

    const DecisionState& state = cluster.state;
    for (const auto& [job_id, job] : state.jobs) {
      if (job.live_tasks == 0) continue;
      const Strings walked = WalkJobsAhead(state, job);
      JobsAhead ahead = JobsAheadOf(state, job, 5);
      ASSERT_EQ(ahead.count, walked.size()) << "job " << job_id << " at step " << step;
      Strings listed;
      for (const auto& entry : ahead.first) listed.push_back(entry.job_id);
      ASSERT_EQ(listed,
                Strings(walked.begin(), walked.begin() + std::min<size_t>(5, walked.size())))
          << "job " << job_id << " at step " << step;
    }
    const SchedulingPass full = Schedule(state, cluster.now, true);
    size_t queued_count = 0;
    for (const auto& [task_id, task] : state.tasks) {
      if (task.state != TaskState::kQueued) continue;
      // The pool queues the pass walks hold exactly the queued tasks.
      ++queued_count;
      const auto pool_queue = state.queues.find(task.pool());
      ASSERT_NE(pool_queue, state.queues.end()) << task_id << " at step " << step;
      const auto& of_kind = task.resources.slots() == 0 ? pool_queue->second.zero_slot_tasks
                                                        : pool_queue->second.slot_tasks;
      const auto entry = of_kind.find(state.QueueKeyOf(task));
      ASSERT_TRUE(entry != of_kind.end() && entry->second == &task) << task_id;
      const QueuedTaskOutlook outlook = ExplainQueuedTask(state, cluster.now, task);
      const QueuedTaskOutlook kept = ExplainQueuedTask(state, cluster.now, task, &passes);
      ASSERT_EQ(kept.kind, outlook.kind) << task.task_id << " at step " << step;
      ASSERT_EQ(kept.waiting_reason, outlook.waiting_reason) << task.task_id;
      auto waiting = full.waiting_reasons.find(task.task_id);
      if (waiting != full.waiting_reasons.end()) {
        ASSERT_EQ(outlook.kind, QueuedTaskOutlook::kWaits) << task.task_id << " at step " << step;
        ASSERT_EQ(outlook.waiting_reason, waiting->second) << task.task_id;
      } else {
        ASSERT_NE(outlook.kind, QueuedTaskOutlook::kWaits) << task.task_id << " at step " << step;
      }
    }
    ASSERT_EQ(state.QueuedTaskCount(), queued_count) << "at step " << step;
  }
  EXPECT_GT(next_task, 50) << "the walk submitted work";
}

TEST(ExplainTest, ALongQueueIsCountedWholeAndListedFromItsHead) {
  Cluster cluster;
  std::vector<Command> submissions;
  for (int i = 0; i < 3000; ++i) {
    submissions.push_back(Submission(Id("job", i), {.force = true}));
  }
  BATCH_OK(cluster, submissions);
  auto explanation = ExplainTask(cluster.state, Id("job", 2999), cluster.now);
  ASSERT_TRUE(explanation.ok()) << explanation.status().ToString();
  EXPECT_EQ(explanation->jobs_ahead_count, 2999u);
  ASSERT_EQ(explanation->jobs_ahead.size(), kJobsAheadListed);
  EXPECT_EQ(explanation->jobs_ahead.front().job_id, Id("job", 0));
  EXPECT_TRUE(
      Contains(explanation->reason, "waiting because pool default has no schedulable agent"))
      << explanation->reason;
  EXPECT_TRUE(Contains(explanation->reason, "2999 job(s) ahead of job " + Id("job", 2999)))
      << explanation->reason;
}

}  // namespace
}  // namespace cairn::commands
