// Shared by the projection tests: folding a history into memory, and reads that fail the test
// instead of returning an error.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "projections/projections.h"
#include "tests/projections/history.h"

namespace cairn::testing {

// How long a test waits for live projections to reach an offset.
inline constexpr std::chrono::seconds kProjectionWait{20};

// The first `count` events of `history` (all by default), folded into memory.
inline ProjectionState Fold(const History& history, size_t count = SIZE_MAX) {
  ProjectionState state;
  for (size_t i = 0; i < history.events().size() && i < count; ++i) {
    Status status = state.Apply(history.events()[i]);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  return state;
}

// Every projection's digest from anything with Digest(name): live, folded in memory, or past.
template <typename Source>
std::map<std::string, std::string> DigestsOf(Source& source) {
  std::map<std::string, std::string> digests;
  for (const auto& name : projections::ProjectorNames()) {
    auto digest = source.Digest(name);
    EXPECT_TRUE(digest.ok()) << digest.status().ToString();
    if (digest.ok()) digests[name] = *digest;
  }
  return digests;
}

// The digests of `history` folded up to and including `last_offset`.
inline std::map<std::string, std::string> FoldDigests(const History& history,
                                                      uint64_t last_offset) {
  ProjectionState state = Fold(history, last_offset + 1);
  return DigestsOf(state);
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
