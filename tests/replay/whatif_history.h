// Recorded histories for the what-if tests, written by the real decider and scheduler (the
// writer-like Cluster of tests/commands/command_builders.h) at chosen times, so that every wait
// in them can be worked out by hand.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/commands/command_builders.h"

namespace cairn::replay::whatif_testing {

using commands::testing::Agent;
using commands::testing::Ask;
using commands::testing::Cluster;
using commands::testing::Exit;
using commands::testing::Submission;

inline constexpr int64_t kStartMicros = 1'700'000'000'000'000;  // 2023-11-14T22:13:20Z
inline int64_t At(int64_t seconds) { return kStartMicros + seconds * 1'000'000; }

// Runs `command` at `seconds`; the histories below are only worth testing when all succeed.
inline void RunAt(Cluster& cluster, int64_t seconds, commands::Command command) {
  cluster.now = At(seconds);
  auto decision = cluster.Run(std::move(command));
  EXPECT_TRUE(decision.ok()) << decision.status().ToString();
}

inline commands::SubmitTask SubmissionBy(const std::string& user, const std::string& task_id,
                                         const Ask& ask) {
  commands::SubmitTask submit = Submission(task_id, ask);
  submit.spec.set_user(user);
  return submit;
}

// A high-priority burst starves a pool, or would have: one pool "default" (fair share, as
// recorded) with one 4-slot agent. Bob submits three 4-slot commands at 0, 1 and 2 s (priority
// 50); Alice then a burst of three (priority 10) at 3, 4 and 5 s. Each runs 10 s. Fair share
// ran them in submission order: b1 0-10, b2 10-20, b3 20-30, a1 30-40, a2 40-50, a3 50-60.
inline std::vector<events::Envelope> StarvationHistory() {
  Cluster cluster;
  RunAt(cluster, 0, Agent("agent-1", 4));
  RunAt(cluster, 0, SubmissionBy("bob", "b1", {.slots = 4, .priority = 50}));
  RunAt(cluster, 1, SubmissionBy("bob", "b2", {.slots = 4, .priority = 50}));
  RunAt(cluster, 2, SubmissionBy("bob", "b3", {.slots = 4, .priority = 50}));
  RunAt(cluster, 3, SubmissionBy("alice", "a1", {.slots = 4, .priority = 10}));
  RunAt(cluster, 4, SubmissionBy("alice", "a2", {.slots = 4, .priority = 10}));
  RunAt(cluster, 5, SubmissionBy("alice", "a3", {.slots = 4, .priority = 10}));
  int64_t seconds = 10;
  for (const char* task : {"b1", "b2", "b3", "a1", "a2", "a3"}) {
    RunAt(cluster, seconds, Exit(task));
    seconds += 10;
  }
  return cluster.all_events;
}

// Preemptible work in the way: one 4-slot agent, fair share as recorded. Bob's trial (4 slots,
// priority 50) is placed at 0 s and runs 10 s; Alice's 4-slot command (priority 10) comes at
// 2 s and runs 5 s. Fair share took nothing back: the trial ran 0-10, the command 10-15.
inline std::vector<events::Envelope> PreemptionHistory() {
  Cluster cluster;
  RunAt(cluster, 0, Agent("agent-1", 4));
  RunAt(cluster, 0,
        SubmissionBy(
            "bob", "trial",
            {.job = "experiment", .slots = 4, .type = events::TASK_TYPE_TRIAL, .priority = 50}));
  RunAt(cluster, 2, SubmissionBy("alice", "command", {.slots = 4, .priority = 10}));
  RunAt(cluster, 10, Exit("trial"));
  RunAt(cluster, 15, Exit("command"));
  return cluster.all_events;
}

}  // namespace cairn::replay::whatif_testing
