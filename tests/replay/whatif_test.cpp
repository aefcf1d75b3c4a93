// The what-if simulation (replay/whatif.h) over small recorded histories whose every figure is
// worked out by hand in the comments: waits per user under another policy, the actual column
// read straight from the log, preemption with resumption, windows, job rules, pools the other
// configuration lacks, determinism, and the configuration's errors.
#include "replay/whatif.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "replay/whatif_format.h"
#include "tests/replay/whatif_history.h"

namespace cairn::replay {
namespace {

using namespace whatif_testing;

constexpr int64_t kSecond = 1'000'000;

const char kFairShare[] = "resource_manager:\n  scheduler:\n    type: fair_share\n";
const char kPriority[] = "resource_manager:\n  scheduler:\n    type: priority\n";
const char kPriorityWithPreemption[] =
    "resource_manager:\n  scheduler:\n    type: priority\n    preemption: true\n";

WhatIfConfig Config(const std::string& yaml) {
  auto config = ParseWhatIfConfig(yaml, "whatif.yaml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : WhatIfConfig{};
}

Result<WhatIfReport> Simulate(const std::vector<events::Envelope>& history, const std::string& yaml,
                              WhatIfWindow window = {}) {
  WhatIfSimulation simulation(Config(yaml), window);
  for (const auto& event : history) simulation.Add(event);
  return simulation.Run();
}

WhatIfReport MustSimulate(const std::vector<events::Envelope>& history, const std::string& yaml,
                          WhatIfWindow window = {}) {
  auto report = Simulate(history, yaml, window);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *report : WhatIfReport{};
}

// {tasks, started, p50, p95, max} with the waits in whole seconds.
struct Waits {
  int64_t tasks, started, p50, p95, max;
  bool operator==(const Waits&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Waits& waits) {
  return out << "{" << waits.tasks << ", " << waits.started << ", " << waits.p50 << ", "
             << waits.p95 << ", " << waits.max << "}";
}
Waits InSeconds(const WaitFigures& figures) {
  return {figures.tasks, figures.started, figures.p50 / kSecond, figures.p95 / kSecond,
          figures.max / kSecond};
}
template <typename Key>
Waits Group(const std::map<Key, WaitFigures>& groups, const Key& key) {
  auto it = groups.find(key);
  EXPECT_NE(it, groups.end()) << key;
  return it == groups.end() ? Waits{} : InSeconds(it->second);
}
Waits User(const WhatIfColumn& column, const std::string& user) {
  return Group(column.by_user, user);
}

// A column's overall figures, durations in whole seconds.
struct Totals {
  int64_t finished, preemptions, makespan, busy_slot_seconds, available_slot_seconds;
  bool operator==(const Totals&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Totals& totals) {
  return out << "{finished " << totals.finished << ", preemptions " << totals.preemptions
             << ", makespan " << totals.makespan << ", busy " << totals.busy_slot_seconds
             << ", available " << totals.available_slot_seconds << "}";
}
Totals TotalsOf(const WhatIfColumn& column) {
  return {column.finished, column.preemptions, column.makespan / kSecond,
          column.busy_slot_micros / kSecond, column.available_slot_micros / kSecond};
}

// The case. Under fair share every 4-slot task needs the whole pool, so it runs in
// queue (submission) order, and Alice's burst waits behind Bob's earlier work:
//   b1 0-10 (waited 0), b2 10-20 (9), b3 20-30 (18), a1 30-40 (27), a2 40-50 (36), a3 50-60 (45).
// Under the priority scheduler (no preemption) Alice's priority 10 goes first whenever the pool
// frees up, and Bob's queued work starves behind the burst:
//   b1 0-10 (0), a1 10-20 (7), a2 20-30 (16), a3 30-40 (25), b2 40-50 (39), b3 50-60 (48).
// Three waits each: p50 is the middle one (nearest rank 2 of 3), p95 and max the largest.
TEST(WhatIfTest, APriorityPolicyStarvesWhatFairShareServedInOrder) {
  const auto history = StarvationHistory();
  WhatIfReport priority = MustSimulate(history, kPriority);
  EXPECT_EQ(User(priority.whatif, "alice"), (Waits{3, 3, 16, 25, 25}));
  EXPECT_EQ(User(priority.whatif, "bob"), (Waits{3, 3, 39, 48, 48}));
  EXPECT_EQ(User(priority.actual, "alice"), (Waits{3, 3, 36, 45, 45}));
  EXPECT_EQ(User(priority.actual, "bob"), (Waits{3, 3, 9, 18, 18}));

  WhatIfReport fair_share = MustSimulate(history, kFairShare);
  EXPECT_EQ(User(fair_share.whatif, "alice"), (Waits{3, 3, 36, 45, 45}));
  EXPECT_EQ(User(fair_share.whatif, "bob"), (Waits{3, 3, 9, 18, 18}));
  EXPECT_NE(User(priority.whatif, "alice"), User(fair_share.whatif, "alice"));
  EXPECT_NE(User(priority.whatif, "bob"), User(fair_share.whatif, "bob"));

  // Either way the pool is busy from the first submission to the last end, 60 s.
  for (const WhatIfColumn* column : {&priority.whatif, &fair_share.whatif, &priority.actual}) {
    EXPECT_EQ(TotalsOf(*column), (Totals{6, 0, 60, 4 * 60, 4 * 60}));
  }
  // All six tasks: waits {0, 7, 16, 25, 39, 48}: nearest rank 3 of 6 is 16, rank 6 is 48.
  EXPECT_EQ(InSeconds(priority.whatif.all), (Waits{6, 6, 16, 48, 48}));
  EXPECT_EQ(Group(priority.whatif.by_pool, std::string("default")), (Waits{6, 6, 16, 48, 48}));
  EXPECT_EQ(Group(priority.whatif.by_workspace, 1), (Waits{6, 6, 16, 48, 48}));
  EXPECT_EQ(priority.workspace_names.at(1), "Uncategorized");
}

// Replayed under the configuration it was recorded with, the simulation gives back the log.
TEST(WhatIfTest, TheRecordedConfigurationReproducesTheLog) {
  WhatIfReport report = MustSimulate(StarvationHistory(), kFairShare);
  nlohmann::json json = nlohmann::json::parse(WhatIfJson(report));
  EXPECT_EQ(json["overall"]["actual"], json["overall"]["whatif"]);
  EXPECT_EQ(json["users"]["alice"]["actual"], json["users"]["alice"]["whatif"]);
  EXPECT_EQ(json["users"]["bob"]["actual"], json["users"]["bob"]["whatif"]);
}

// The actual column is the log's own story, and the simulation's assumptions show on a log
// written by hand (one 2-slot agent, fair share):
//   0 s  t1 submitted (1 slot)        1 s  t2 submitted (1 slot)
//   2 s  t1 placed (t1.1)             4 s  t2 killed while queued
//   5 s  t1 preempted                 6 s  t1.1 released (ran 4 s)
//   8 s  t1 placed again (t1.2)      12 s  t1 exits (ran 4 s more: 8 s in all)
// Actual: t1 waited 2 s, t2 never started; 1 preemption; both ended, the last at 12 s; busy
// 1 slot for 4 + 4 s of 2 slots for 12 s = 8 / 24.
// What if (fair share again): t1 is placed at once and runs its 8 s (0-8); t2 finds the other
// slot free at 1 s and holds it until the moment it was killed (4 s). Waits 0 and 0; makespan
// 8 s; busy 8 + 3 = 11 of 16 slot-seconds.
TEST(WhatIfTest, TheActualColumnIsWhatTheLogSays) {
  Cluster cluster;
  auto record = [&](int64_t seconds, events::Envelope event) {
    cluster.now = At(seconds);
    cluster.Append(std::move(event));
  };
  RunAt(cluster, 0, Agent("agent-1", 2));
  auto submitted = [](const std::string& task_id) {
    events::Envelope event;
    auto* task = event.mutable_task_submitted();
    task->set_task_id(task_id);
    task->set_job_id(task_id);
    task->mutable_spec()->set_user("carol");
    task->mutable_resources()->set_slots(1);
    task->mutable_resources()->set_resource_pool("default");
    task->mutable_resources()->set_priority(42);
    task->mutable_resources()->set_weight(1);
    return event;
  };
  auto assigned = [](const std::string& allocation_id, int slot) {
    events::Envelope event;
    auto* allocation = event.mutable_allocation_assigned();
    allocation->set_task_id("t1");
    allocation->set_allocation_id(allocation_id);
    allocation->set_agent_id("agent-1");
    allocation->set_agent_incarnation("i1");
    allocation->add_slot_ids(slot);
    allocation->set_resource_pool("default");
    return event;
  };
  record(0, submitted("t1"));
  record(1, submitted("t2"));
  record(2, assigned("t1.1", 0));
  events::Envelope killed;
  killed.mutable_task_exited()->set_task_id("t2");
  record(4, killed);
  events::Envelope preempted;
  preempted.mutable_preemption_requested()->set_task_id("t1");
  preempted.mutable_preemption_requested()->set_allocation_id("t1.1");
  record(5, preempted);
  events::Envelope released;
  released.mutable_allocation_released()->set_task_id("t1");
  released.mutable_allocation_released()->set_allocation_id("t1.1");
  record(6, released);
  record(8, assigned("t1.2", 1));
  events::Envelope exited;
  exited.mutable_task_exited()->set_task_id("t1");
  exited.mutable_task_exited()->set_allocation_id("t1.2");
  record(12, exited);

  WhatIfReport report = MustSimulate(cluster.all_events, kFairShare);
  EXPECT_EQ(User(report.actual, "carol"), (Waits{2, 1, 2, 2, 2}));
  EXPECT_EQ(TotalsOf(report.actual), (Totals{2, 1, 12, 8, 24}));
  EXPECT_EQ(User(report.whatif, "carol"), (Waits{2, 2, 0, 0, 0}));
  EXPECT_EQ(TotalsOf(report.whatif), (Totals{2, 0, 8, 11, 16}));
}

// Priority with preemption: at 2 s Alice's command takes the slots of Bob's trial, which has run
// 2 of its 10 s; the command runs 2-7, and the trial resumes at 7 for its remaining 8 s, to 15.
// Waits: the trial 0 (its first placement), the command 0 (actual: 8, behind the trial).
TEST(WhatIfTest, APreemptedTaskResumesForTheRunTimeItHasLeft) {
  WhatIfReport report = MustSimulate(PreemptionHistory(), kPriorityWithPreemption);
  EXPECT_EQ(User(report.actual, "alice"), (Waits{1, 1, 8, 8, 8}));
  EXPECT_EQ(User(report.whatif, "alice"), (Waits{1, 1, 0, 0, 0}));
  EXPECT_EQ(User(report.whatif, "bob"), (Waits{1, 1, 0, 0, 0}));
  EXPECT_EQ(TotalsOf(report.actual), (Totals{2, 0, 15, 4 * 15, 4 * 15}));
  EXPECT_EQ(TotalsOf(report.whatif), (Totals{2, 1, 15, 4 * 15, 4 * 15}));

  // Without preemption the priority scheduler waits for the trial, as fair share did.
  WhatIfReport no_preemption = MustSimulate(PreemptionHistory(), kPriority);
  EXPECT_EQ(User(no_preemption.whatif, "alice"), (Waits{1, 1, 8, 8, 8}));
  EXPECT_EQ(no_preemption.whatif.preemptions, 0);
}

// --from 3 s: only Alice's burst is simulated and counted; Bob's work is folded as recorded up
// to then (b1 running since 0 s, b2 and b3 queued) and is simulated as load. Alice's waits are
// those of the whole-log case. --until 2 s: only Bob's work, which then runs in order under
// either policy: waits 0, 9, 18.
TEST(WhatIfTest, TheWindowChoosesTheSubmissionsSimulated) {
  const auto history = StarvationHistory();
  WhatIfReport from = MustSimulate(history, kPriority, {At(3), std::nullopt});
  EXPECT_EQ(from.whatif.by_user.size(), 1u);
  EXPECT_EQ(User(from.whatif, "alice"), (Waits{3, 3, 16, 25, 25}));
  EXPECT_EQ(User(from.actual, "alice"), (Waits{3, 3, 36, 45, 45}));
  EXPECT_EQ(from.first_submission, At(3));
  EXPECT_EQ(from.actual.makespan, (60 - 3) * kSecond);
  EXPECT_EQ(from.whatif.makespan, (40 - 3) * kSecond);  // a3 ends at 40 s

  WhatIfReport until = MustSimulate(history, kPriority, {std::nullopt, At(2)});
  EXPECT_EQ(until.whatif.by_user.size(), 1u);
  EXPECT_EQ(User(until.whatif, "bob"), (Waits{3, 3, 9, 18, 18}));

  auto empty = Simulate(history, kPriority, {At(61), std::nullopt});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(empty.status().message().find("no task was submitted between"), std::string::npos)
      << empty.status().message();
  EXPECT_NE(empty.status().message().find("6 submission(s)"), std::string::npos)
      << empty.status().message();
}

// whatif.jobs: Bob's jobs at priority 5 put his work ahead of Alice's burst under the priority
// scheduler, so each of them waits as under fair share.
TEST(WhatIfTest, JobRulesChangePrioritiesAndWeights) {
  WhatIfReport report = MustSimulate(StarvationHistory(), std::string(kPriority) +
                                                              "whatif:\n"
                                                              "  jobs:\n"
                                                              "    - user: bob\n"
                                                              "      priority: 5\n");
  EXPECT_EQ(report.job_rules, 1u);
  EXPECT_EQ(User(report.whatif, "bob"), (Waits{3, 3, 9, 18, 18}));
  EXPECT_EQ(User(report.whatif, "alice"), (Waits{3, 3, 36, 45, 45}));

  // A rule for a workspace no job is in changes nothing.
  WhatIfReport elsewhere = MustSimulate(StarvationHistory(), std::string(kPriority) +
                                                                 "whatif:\n"
                                                                 "  jobs:\n"
                                                                 "    - workspace: research\n"
                                                                 "      priority: 5\n");
  EXPECT_EQ(User(elsewhere.whatif, "bob"), (Waits{3, 3, 39, 48, 48}));
}

// The other configuration names its pools differently: work and agents of a pool it lacks go to
// its default compute pool.
TEST(WhatIfTest, PoolsTheConfigurationLacksGoToItsDefaults) {
  WhatIfReport report = MustSimulate(StarvationHistory(),
                                     "resource_manager:\n"
                                     "  default_compute_resource_pool: gpu\n"
                                     "  default_aux_resource_pool: gpu\n"
                                     "resource_pools:\n"
                                     "  - pool_name: gpu\n"
                                     "    scheduler:\n"
                                     "      type: priority\n");
  EXPECT_EQ(report.whatif.by_pool.size(), 1u);
  EXPECT_EQ(Group(report.whatif.by_pool, std::string("gpu")), (Waits{6, 6, 16, 48, 48}));
  // Actual waits {0, 9, 18, 27, 36, 45}: nearest rank 3 of 6 is 18.
  EXPECT_EQ(Group(report.actual.by_pool, std::string("default")), (Waits{6, 6, 18, 45, 45}));
  EXPECT_NE(WhatIfTable(report).find("pool gpu"), std::string::npos);
}

TEST(WhatIfTest, TheSameInputGivesTheSameBytes) {
  const auto history = StarvationHistory();
  WhatIfReport first = MustSimulate(history, kPriorityWithPreemption);
  WhatIfReport second = MustSimulate(history, kPriorityWithPreemption);
  EXPECT_EQ(WhatIfJson(first), WhatIfJson(second));
  EXPECT_EQ(WhatIfTable(first), WhatIfTable(second));
  // One simulation run twice as well: Run changes nothing it gathered.
  WhatIfSimulation simulation(Config(kPriority), {});
  for (const auto& event : history) simulation.Add(event);
  auto once = simulation.Run();
  auto twice = simulation.Run();
  ASSERT_TRUE(once.ok() && twice.ok());
  EXPECT_EQ(WhatIfJson(*once), WhatIfJson(*twice));
}

TEST(WhatIfTest, TheTableShowsBothColumnsForEveryGroup) {
  const std::string table = WhatIfTable(MustSimulate(StarvationHistory(), kPriority));
  for (const char* expected :
       {"actual:  default fair_share, best fit (as recorded)",
        "what-if: default priority without preemption, best fit (whatif.yaml)", "user alice",
        "user bob", "pool default", "workspace Uncategorized (#1)", "makespan (s)",
        "slot utilization", "preemptions"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << expected << "\n" << table;
  }
  // Bob: 3 tasks, 3 started, fair share 9/18/18, priority 39/48/48.
  EXPECT_NE(table.find("     3       3      9.0     18.0     18.0 |     3       3     39.0     "
                       "48.0     48.0"),
            std::string::npos)
      << table;
}

TEST(WhatIfConfigTest, ErrorsNameTheFileTheLineAndTheField) {
  struct Case {
    std::string yaml;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "whatif.yaml: empty"},
      {"- a\n", "whatif.yaml: expected a map at the top"},
      {"resource_manager:\n  scheduler:\n    type: lottery\n",
       "whatif.yaml:3: resource_manager.scheduler.type: must be fair_share, priority or "
       "round_robin, got 'lottery'"},
      {"whatif:\n  jobs:\n    - user: bob\n", "whatif.yaml:3: whatif.jobs[0]: sets neither"},
      {"whatif:\n  jobs:\n    - user: bob\n      priority: 100\n",
       "whatif.yaml:4: whatif.jobs[0].priority: must be between 1 and 99"},
      {"whatif:\n  jobs:\n    - weight: -1\n",
       "whatif.yaml:3: whatif.jobs[0].weight: must be a positive number"},
      {"whatif:\n  jobs:\n    - owner: bob\n", "whatif.yaml:3: whatif.jobs[0].owner: unknown"},
      {"whatif:\n  job: []\n", "whatif.yaml:2: whatif.job: unknown field"},
      {"whatif:\n  jobs: bob\n", "whatif.yaml:2: whatif.jobs: expected a list"},
      {"resource_pools: [\n", "whatif.yaml"},
  };
  for (const auto& [yaml, message] : cases) {
    auto config = ParseWhatIfConfig(yaml, "whatif.yaml");
    ASSERT_FALSE(config.ok()) << yaml;
    EXPECT_NE(config.status().message().find(message), std::string::npos)
        << yaml << "\n"
        << config.status().message();
  }
  // A whole master.yaml is read for its pools; the rest of it is not the simulation's.
  auto master = ParseWhatIfConfig(
      "port: 8080\ndata_dir: /var/lib/cairn\nresource_pools:\n  - pool_name: default\n"
      "    scheduler:\n      type: round_robin\n",
      "master.yaml");
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  ASSERT_EQ(master->pools.pools_size(), 1);
  EXPECT_EQ(master->pools.pools(0).scheduler().type(), events::SCHEDULER_TYPE_ROUND_ROBIN);
}

}  // namespace
}  // namespace cairn::replay
