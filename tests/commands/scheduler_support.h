// Shared by the scheduler's tests: terse builders for tasks, trials and pools, and what the
// last scheduling pass decided.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands/scheduler/explain.h"
#include "commands/scheduler/scheduler.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands::scheduler_testing {

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
inline std::string Id(const std::string& job, int number) {
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%02d", number);
  return job + suffix;
}

inline Strings Ids(const std::string& job, int first, int last) {
  Strings ids;
  for (int i = first; i <= last; ++i) ids.push_back(Id(job, i));
  return ids;
}

// `count` trials of one job (an experiment), each asking for `ask`.
inline std::vector<Command> Trials(const std::string& job, int count, Ask ask = {}) {
  ask.job = job;
  ask.type = events::TASK_TYPE_TRIAL;
  std::vector<Command> trials;
  for (int i = 1; i <= count; ++i) trials.push_back(Submission(Id(job, i), ask));
  return trials;
}

inline std::vector<Command> Join(std::vector<Command> a, const std::vector<Command>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline ConfigurePools PriorityPool(bool preemption, double grace_seconds = 3600) {
  return Pools({Pool("default", {.type = kPriority, .preemption = preemption})}, "", "",
               grace_seconds);
}

inline const events::AllocationAssigned* AssignmentOf(const Cluster& cluster,
                                                      const std::string& task) {
  for (const auto& event : cluster.last_events) {
    if (event.has_allocation_assigned() && event.allocation_assigned().task_id() == task) {
      return &event.allocation_assigned();
    }
  }
  return nullptr;
}

inline bool Contains(const std::string& text, const std::string& part) {
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
inline void Occupy(Cluster& cluster, const std::string& task_id, const std::string& agent_id,
                   int slots) {
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

}  // namespace cairn::commands::scheduler_testing
