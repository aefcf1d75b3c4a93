// The utilization projection (projections/utilization_projector.h): slots and the queue over
// time, read as a window of steps. Checked on a hand-made history, and on the mixed workload
// against a recount from the events at every moment.
#include <gtest/gtest.h>

#include <map>

#include "events/envelope_util.h"
#include "events/epoch_fence.h"
#include "projections/projections.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"

namespace cairn {
namespace {

using testing::Fold;
using testing::History;

constexpr int64_t kSecond = 1'000'000;

// The time of the history's event `index` (events are a second apart).
int64_t EventTime(int index) { return History::kStartMicros + index * kSecond; }

struct Counts {
  int32_t total = 0;
  int32_t used = 0;
  int32_t waiting = 0;
  bool operator==(const Counts&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Counts& counts) {
  return out << "{total " << counts.total << ", used " << counts.used << ", waiting "
             << counts.waiting << "}";
}

Counts CountsOf(const views::UtilizationSample& sample) {
  return {sample.slots_total(), sample.slots_used(), sample.tasks_waiting()};
}

// One step per second from just before the first event: point i holds the counts after event i.
projections::UtilizationRead PerEvent(ProjectionState& state, int events) {
  auto read = state.Utilization(EventTime(0) - kSecond, EventTime(events - 1), events);
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  return read.ok() ? *read : projections::UtilizationRead();
}

TEST(UtilizationProjectorTest, CountsFollowAgentsPlacementsPreemptionsPausesAndExits) {
  History history;
  history.Register("a1", "i1", "default", 4);       // 0
  history.Register("a2", "i1", "default", 4);       // 1
  history.Submit("t1", "j1", "default", 42, 2);     // 2
  history.Submit("t2", "j2", "default", 42, 8);     // 3
  history.Assign("t1", "al1", "a1", "i1", {0, 1});  // 4
  history.AssignGang("t2", "al2",                   // 5
                     {History::Part("a1", "i1", {2, 3}), History::Part("a2", "i1", {0, 1, 2, 3})});
  history.PartExit("t2", "al2", "a2", 0);                                         // 6
  history.Release("t1", "al1", "preempted");                                      // 7
  history.Hold("t1", true);                                                       // 8
  history.Hold("t1", false);                                                      // 9
  history.Disconnect("a2", "i0");                                                 // 10: stale
  history.Disconnect("a2", "i1");                                                 // 11
  history.Exit("t2", "al2", "a1", 0, std::nullopt, "exited");                     // 12
  history.Exit("t1", "", "", std::nullopt, std::nullopt, "killed while queued");  // 13
  ProjectionState state = Fold(history);
  const int events = static_cast<int>(history.events().size());
  projections::UtilizationRead read = PerEvent(state, events);
  ASSERT_EQ(read.points.size(), static_cast<size_t>(events));
  const std::vector<Counts> expected = {{4, 0, 0}, {8, 0, 0}, {8, 0, 1}, {8, 0, 2}, {8, 2, 1},
                                        {8, 8, 0}, {8, 4, 0}, {8, 2, 1}, {8, 2, 0}, {8, 2, 1},
                                        {8, 2, 1}, {4, 2, 1}, {4, 0, 1}, {4, 0, 0}};
  for (int i = 0; i < events; ++i) {
    EXPECT_EQ(CountsOf(read.points[i].at_end), expected[i]) << "after event " << i;
    EXPECT_EQ(read.points[i].end_unix_micros, EventTime(i));
  }
  EXPECT_EQ(CountsOf(read.at_start), Counts{}) << "nothing before the first event";
  // The last point names the event that set its counts: where the history view opens.
  EXPECT_EQ(read.points.back().at_end.offset(), static_cast<uint64_t>(events - 1));

  // Coarser steps keep the counts at each step's end and the highest within it.
  auto halves = state.Utilization(EventTime(1), EventTime(9), 2);
  ASSERT_TRUE(halves.ok()) << halves.status().ToString();
  EXPECT_EQ(CountsOf(halves->at_start), (Counts{8, 0, 0}));
  ASSERT_EQ(halves->points.size(), 2u);
  EXPECT_EQ(CountsOf(halves->points[0].at_end), (Counts{8, 8, 0}));  // after event 5 (time 5)
  EXPECT_EQ(halves->points[0].peak_slots_used, 8);
  EXPECT_EQ(halves->points[0].peak_tasks_waiting, 2);
  EXPECT_EQ(CountsOf(halves->points[1].at_end), (Counts{8, 2, 1}));
  EXPECT_EQ(halves->points[1].peak_slots_used, 8);  // held until event 6, inside the step
  EXPECT_EQ(halves->points[1].peak_tasks_waiting, 1);

  // A window after the last event carries the counts as they stand; one before any is empty.
  auto later = state.Utilization(EventTime(events + 100), EventTime(events + 200), 4);
  ASSERT_TRUE(later.ok());
  for (const auto& point : later->points) EXPECT_EQ(CountsOf(point.at_end), (Counts{4, 0, 0}));
  auto before = state.Utilization(EventTime(-100), EventTime(-50), 5);
  ASSERT_TRUE(before.ok());
  for (const auto& point : before->points) EXPECT_EQ(CountsOf(point.at_end), Counts{});

  EXPECT_EQ(state.Utilization(EventTime(0), EventTime(0), 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(state.Utilization(EventTime(0), EventTime(0) + 3, 4).status().code(),
            StatusCode::kInvalidArgument);
}

// The counts recomputed from scratch from the events folded so far, as anyone reading the log
// would (docs/events.md, "Utilization"): not the projector's bookkeeping of changes.
class Recount {
 public:
  void Apply(const events::Envelope& event) {
    if (fence_.Admit(event) != EpochFence::Verdict::kFact) return;
    switch (event.payload_case()) {
      case events::Envelope::kAgentRegistered: {
        const auto& registered = event.agent_registered();
        agents_[registered.agent_id()] = {registered.incarnation(), registered.slot_count(), true};
        break;
      }
      case events::Envelope::kAgentDisconnected: {
        auto agent = agents_.find(event.agent_disconnected().agent_id());
        const std::string& incarnation = event.agent_disconnected().incarnation();
        if (agent != agents_.end() &&
            (incarnation.empty() || incarnation == agent->second.incarnation)) {
          agent->second.connected = false;
        }
        break;
      }
      case events::Envelope::kTaskSubmitted:
        tasks_.try_emplace(event.task_submitted().task_id());
        break;
      case events::Envelope::kTaskExited:
        tasks_.erase(event.task_exited().task_id());
        break;
      case events::Envelope::kTaskHeld:
        if (auto task = tasks_.find(event.task_held().task_id()); task != tasks_.end()) {
          task->second.held = event.task_held().held();
        }
        break;
      case events::Envelope::kAllocationAssigned: {
        auto task = tasks_.find(event.allocation_assigned().task_id());
        if (task == tasks_.end() || !task->second.allocation.empty()) break;
        task->second.allocation = event.allocation_assigned().allocation_id();
        for (const auto& part : AllocationPartsOf(event.allocation_assigned())) {
          task->second.parts[part.agent_id()] += part.slot_ids_size();
        }
        break;
      }
      case events::Envelope::kAllocationPartExited: {
        auto task = tasks_.find(event.allocation_part_exited().task_id());
        if (task != tasks_.end() &&
            task->second.allocation == event.allocation_part_exited().allocation_id()) {
          task->second.parts.erase(event.allocation_part_exited().agent_id());
        }
        break;
      }
      case events::Envelope::kAllocationReleased: {
        auto task = tasks_.find(event.allocation_released().task_id());
        if (task != tasks_.end() &&
            task->second.allocation == event.allocation_released().allocation_id()) {
          task->second.allocation.clear();
          task->second.parts.clear();
        }
        break;
      }
      default:
        break;
    }
  }

  Counts Now() const {
    Counts counts;
    for (const auto& [id, agent] : agents_) counts.total += agent.connected ? agent.slots : 0;
    for (const auto& [id, task] : tasks_) {
      for (const auto& [agent, slots] : task.parts) counts.used += slots;
      counts.waiting += !task.held && task.allocation.empty();
    }
    return counts;
  }

 private:
  struct Agent {
    std::string incarnation;
    int32_t slots = 0;
    bool connected = false;
  };
  struct Task {
    bool held = false;
    std::string allocation;
    std::map<std::string, int32_t> parts;
  };
  EpochFence fence_;
  std::map<std::string, Agent> agents_;
  std::map<std::string, Task> tasks_;
};

TEST(UtilizationProjectorTest, EveryMomentOfAMixedWorkloadMatchesARecountFromTheLog) {
  History history;
  history.AddWorkload(/*agents=*/5, /*tasks=*/120);
  ProjectionState state = Fold(history);
  const int events = static_cast<int>(history.events().size());
  projections::UtilizationRead read = PerEvent(state, events);
  ASSERT_EQ(read.points.size(), static_cast<size_t>(events));
  Recount recount;
  Counts highest;
  for (int i = 0; i < events; ++i) {
    ASSERT_EQ(history.events()[i].time_unix_micros(), EventTime(i));
    recount.Apply(history.events()[i]);
    const Counts expected = recount.Now();
    ASSERT_EQ(CountsOf(read.points[i].at_end), expected) << "after event " << i;
    highest.used = std::max(highest.used, expected.used);
    highest.waiting = std::max(highest.waiting, expected.waiting);
  }
  // The workload exercises what it is meant to: slots held and tasks waiting at once.
  EXPECT_GT(highest.used, 4);
  EXPECT_GT(highest.waiting, 2);
}

}  // namespace
}  // namespace cairn
