// Shared by the projection tests: folding a history into memory, and reads that fail the test
// instead of returning an error.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "projections/projections.h"
#include "tests/projections/history.h"

namespace cairn::testing {

inline ProjectionState Fold(const History& history) {
  ProjectionState state;
  for (const auto& event : history.events()) {
    Status status = state.Apply(event);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  return state;
}

inline TaskView MustGetTask(ProjectionState& state, const std::string& id) {
  auto task = state.GetTask(id);
  EXPECT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_TRUE(task.ok() && task->has_value()) << "no task " << id;
  return task.ok() && task->has_value() ? **task : TaskView();
}

inline std::vector<AgentView> MustListAgents(ProjectionState& state) {
  auto agents = state.ListAgents();
  EXPECT_TRUE(agents.ok()) << agents.status().ToString();
  return agents.ok() ? *agents : std::vector<AgentView>();
}

inline std::vector<JobView> MustQueue(ProjectionState& state, const std::string& pool) {
  auto jobs = state.JobQueue(pool);
  EXPECT_TRUE(jobs.ok()) << jobs.status().ToString();
  return jobs.ok() ? *jobs : std::vector<JobView>();
}

inline std::vector<std::string> JobIds(const std::vector<JobView>& jobs) {
  std::vector<std::string> ids;
  for (const auto& job : jobs) ids.push_back(job.job_id());
  return ids;
}

inline std::vector<int> JobsAhead(const std::vector<JobView>& jobs) {
  std::vector<int> ahead;
  for (const auto& job : jobs) ahead.push_back(job.jobs_ahead());
  return ahead;
}

}  // namespace cairn::testing
