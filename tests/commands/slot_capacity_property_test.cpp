// A property of the write side, over random histories: however agents come and go and reports
// arrive (late, repeated, or forged by an agent that does not hold the allocation), no agent's
// slot is ever given to two allocations, and no agent holds more than its capacity.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "commands/decider.h"
#include "tests/commands/command_builders.h"

namespace cairn::commands {
namespace {

// Every slot held on every agent: fails the test (naming the step) on a slot held twice or past
// the agent's slot count.
void ExpectNoSlotDoubleBooked(const DecisionState& state, int step, uint32_t seed) {
  std::map<std::string, std::set<int32_t>> held;
  for (const auto& [task_id, task] : state.tasks) {
    if (!task.holds_allocation()) continue;
    for (const auto& part : task.where().parts) {
      if (task.where().parts_exited.count(part.agent_id()))
        continue;  // that gang part gave its slots back
      auto agent = state.agents.find(part.agent_id());
      ASSERT_NE(agent, state.agents.end()) << "seed " << seed << " step " << step;
      for (int32_t slot : part.slot_ids()) {
        EXPECT_TRUE(held[part.agent_id()].insert(slot).second)
            << "seed " << seed << " step " << step << ": slot " << slot << " of " << part.agent_id()
            << " double-booked (task " << task_id << ")";
        EXPECT_LT(slot, agent->second.slot_count)
            << "seed " << seed << " step " << step << ": " << part.agent_id();
      }
    }
  }
}

TEST(SlotCapacityPropertyTest, RandomHistoriesNeverDoubleBookASlot) {
  constexpr int kHistories = 200;
  constexpr int kSteps = 150;
  const std::vector<std::string> agents = {"a1", "a2", "a3"};
  int refused_forgeries = 0;
  for (uint32_t seed = 1; seed <= kHistories; ++seed) {
    std::mt19937 random(seed);
    auto pick = [&](int n) { return static_cast<int>(random() % static_cast<uint32_t>(n)); };
    testing::Cluster cluster;
    std::vector<std::string> tasks;
    for (int step = 0; step < kSteps; ++step) {
      cluster.now += 1'000'000;
      const std::string agent = agents[pick(3)];
      switch (pick(7)) {
        case 0:  // an agent (re)starts, maybe as a new process
          (void)cluster.Run(
              testing::Agent(agent, 1 + pick(4), kDefaultPool, "i" + std::to_string(pick(3))));
          break;
        case 1:
        case 2: {  // a submission of 0 to 4 slots
          const std::string id = "t" + std::to_string(tasks.size());
          if (cluster.Run(testing::Submission(id, {.slots = pick(5), .force = true})).ok()) {
            tasks.push_back(id);
          }
          break;
        }
        case 3: {  // an exit report, from the holder or from any other agent
          if (tasks.empty()) break;
          const TaskRecord& task = cluster.Task(tasks[pick(static_cast<int>(tasks.size()))]);
          if (task.allocation_id.empty()) break;
          const bool holder =
              !task.where().parts.empty() && task.where().parts[0].agent_id() == agent;
          const bool running = task.holds_allocation();
          const bool gang = task.where().parts.size() > 1;
          ReportTaskExited exited{
              task.allocation_id, task.task_id, agent, pick(2), std::nullopt, ""};
          // Read before Run: commands_snapshot_test replaces the state (and `task`) in it.
          auto decision = cluster.Run(exited);
          if (running && !holder && !gang) {
            EXPECT_FALSE(decision.ok()) << "seed " << seed << " step " << step << ": an exit from "
                                        << agent << " for " << exited.allocation_id << " was taken";
            ++refused_forgeries;
          }
          break;
        }
        case 4: {  // a started report, maybe for a stale allocation
          if (tasks.empty()) break;
          const TaskRecord& task = cluster.Task(tasks[pick(static_cast<int>(tasks.size()))]);
          if (task.allocation_id.empty()) break;
          (void)cluster.Run(ReportTaskStarted{task.allocation_id, task.task_id, agent, 100});
          break;
        }
        case 5:  // a kill
          if (!tasks.empty()) {
            (void)cluster.Run(KillTask{tasks[pick(static_cast<int>(tasks.size()))], "test"});
          }
          break;
        case 6: {  // the heartbeat monitor gives up on an agent
          const AgentRecord* known = cluster.state.FindAgent(agent);
          if (known != nullptr) {
            (void)cluster.Run(DisconnectAgent{agent, known->incarnation, "missed heartbeats"});
          }
          break;
        }
      }
      ExpectNoSlotDoubleBooked(cluster.state, step, seed);
      if (::testing::Test::HasFailure()) {
        // The history that led here, for whoever has to find out why.
        const auto& events = cluster.all_events;
        for (size_t i = events.size() > 30 ? events.size() - 30 : 0; i < events.size(); ++i) {
          std::printf("%s\n", events[i].ShortDebugString().c_str());
        }
        return;
      }
    }
  }
  // The property is only as good as the forgeries it saw.
  EXPECT_GT(refused_forgeries, 100);
}

}  // namespace
}  // namespace cairn::commands
