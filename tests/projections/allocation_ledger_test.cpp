// The allocation ledger (projections/allocation_projector.h) and Determined's reports over it
// (projections/allocation_reports.h): slot-seconds split by UTC day, gang parts ending apart,
// labels and workspaces as their experiments have them now, windows clipping, and, for every
// prefix of a history, the aggregated report equal to a sum computed here straight from the
// events.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "projections/allocation_reports.h"
#include "projections/projections.h"
#include "tests/replay/usage_events.h"

namespace cairn::projections {
namespace {

using testing::UsageHistory;

constexpr int64_t kSecond = 1'000'000;
// UsageHistory's second 0 is 2023-11-14T22:13:20Z: the next UTC midnight is at second 6400.
constexpr int64_t kMidnight = 6400;

int64_t At(int64_t second) { return UsageHistory::kStartMicros + second * kSecond; }

// The history's first `count` events folded.
ProjectionState Fold(const UsageHistory& history, size_t count) {
  ProjectionState state;
  for (size_t i = 0; i < count; ++i) {
    Status applied = state.Apply(history.events()[i]);
    EXPECT_TRUE(applied.ok()) << applied.ToString();
  }
  return state;
}

std::vector<AggregatedUsage> Daily(ProjectionState& state, const std::string& from,
                                   const std::string& to, int64_t now,
                                   AggregationPeriod period = AggregationPeriod::kDaily) {
  auto window = ParseDateWindow(from, to, period);
  EXPECT_TRUE(window.ok()) << window.status().ToString();
  auto ledger = state.AllocationLedger(window->start_unix_micros, window->end_unix_micros);
  EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
  return AggregateUsage(*ledger, *window, period, now);
}

TEST(AllocationLedgerTest, AnAllocationAcrossMidnightIsChargedToEachUtcDayItsShare) {
  UsageHistory history;
  history.Submit(0, "t1", "alice", 0, 2)
      .Assign(100, "t1", "t1.1", "a1", 2)
      .Exit(kMidnight + 600, "t1", "t1.1");
  ProjectionState state = Fold(history, history.events().size());
  auto usage = Daily(state, "2023-11-13", "2023-11-16", At(kMidnight + 86'400 + 100));
  // The days before the first allocation are left out; the last day has no usage and says 0.
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage[0].period_start, "2023-11-14");
  EXPECT_DOUBLE_EQ(usage[0].seconds, 2.0 * (kMidnight - 100));
  EXPECT_DOUBLE_EQ(usage[0].by_username.at("alice"), 2.0 * (kMidnight - 100));
  EXPECT_DOUBLE_EQ(usage[0].by_resource_pool.at("default"), 2.0 * (kMidnight - 100));
  EXPECT_EQ(usage[1].period_start, "2023-11-15");
  EXPECT_DOUBLE_EQ(usage[1].seconds, 2.0 * 600);
  EXPECT_DOUBLE_EQ(usage[2].seconds, 0);

  const nlohmann::json json = AggregatedUsageJson(usage, AggregationPeriod::kDaily);
  ASSERT_EQ(json["resourceEntries"].size(), 3u);
  const nlohmann::json& first = json["resourceEntries"][0];
  EXPECT_EQ(first["period"], "RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY");
  EXPECT_EQ(first["periodStart"], "2023-11-14");
  EXPECT_TRUE(first["byExperimentLabel"].is_object()) << first.dump();
  EXPECT_EQ(AggregatedUsageCsv({usage[1]}),
            "aggregation_type,aggregation_key,date,seconds\n"
            "username,alice,2023-11-15,1200.000000\n"
            "resource_pool,default,2023-11-15,1200.000000\n"
            "total,total,2023-11-15,1200.000000\n");

  // Monthly: November's days in one entry.
  auto monthly =
      Daily(state, "2023-11", "2023-12", At(kMidnight + 10'000), AggregationPeriod::kMonthly);
  ASSERT_EQ(monthly.size(), 1u);
  EXPECT_EQ(monthly[0].period_start, "2023-11");
  EXPECT_DOUBLE_EQ(monthly[0].seconds, 2.0 * (kMidnight - 100 + 600));
}

TEST(AllocationLedgerTest, AGangsPartsAreChargedUntilEachEnds) {
  UsageHistory history;
  history.Submit(0, "g", "bob", 0, 8)
      .AssignGang(0, "g", "g.1", {{"a1", 4}, {"a2", 4}})
      .PartExit(100, "g", "g.1", "a2")
      .Release(300, "g", "g.1");
  ProjectionState state = Fold(history, history.events().size());
  auto usage = Daily(state, "2023-11-14", "2023-11-14", At(1000));
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_DOUBLE_EQ(usage[0].by_username.at("bob"), 4.0 * 300 + 4.0 * 100);
}

TEST(AllocationLedgerTest, LabelsWorkspacesAndTheHeldAllocationAreAsTheyAreNow) {
  UsageHistory history;
  history.Workspace(0, 2, "vision")
      .Workspace(0, 3, "speech")
      .Experiment(0, 7, "exp-7", 2, {"baseline", "gpu"})
      .Submit(1, "trial-1", "carol", 2, 1, "exp-7")
      .Assign(10, "trial-1", "trial-1.1", "a1", 1)
      .Exit(110, "trial-1", "trial-1.1")
      .Relabel(200, 7, "exp-7", {"tuned"})
      .Move(210, "exp-7", 3)
      .Submit(300, "cmd", "dave", 0, 2)
      .Assign(400, "cmd", "cmd.1", "a2", 2);
  ProjectionState state = Fold(history, history.events().size());
  const int64_t now = At(1000);
  auto usage = Daily(state, "2023-11-14", "2023-11-14", now);
  ASSERT_EQ(usage.size(), 1u);
  // The experiment's labels now, not when it ran.
  EXPECT_EQ(usage[0].by_experiment_label.count("baseline"), 0u);
  EXPECT_DOUBLE_EQ(usage[0].by_experiment_label.at("tuned"), 100);
  // The held command counts up to now.
  EXPECT_DOUBLE_EQ(usage[0].by_username.at("dave"), 2.0 * 600);

  // A window inside the trial: slot_hours are its part inside; the moved experiment's workspace.
  auto ledger = state.AllocationLedger(At(60), At(500));
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  const std::string csv = AllocationsCsv(*ledger, At(60), At(500), now);
  EXPECT_NE(csv.find("trial-1.1,UNSPECIFIED,carol,speech,7,1,2023-11-14T22:13:30Z,"
                     "2023-11-14T22:15:10Z,0.0," +
                     std::to_string(50.0 / 3600).substr(0, 8)),
            std::string::npos)
      << csv;
  // Held: no end time; its slot-hours run to the window's end.
  EXPECT_NE(csv.find("cmd.1,UNSPECIFIED,dave,Uncategorized,,2,2023-11-14T22:20:00Z,,0.0," +
                     std::to_string(2.0 * 100 / 3600).substr(0, 8)),
            std::string::npos)
      << csv;
  const nlohmann::json raw = RawAllocationsJson(*ledger, At(60), At(500), now, {{"carol", 5}});
  ASSERT_EQ(raw["resourceEntries"].size(), 2u) << raw.dump();
  EXPECT_EQ(raw["resourceEntries"][0]["userId"], 5);
  EXPECT_EQ(raw["resourceEntries"][0]["labels"], nlohmann::json({"tuned"}));
  EXPECT_DOUBLE_EQ(raw["resourceEntries"][0]["seconds"].get<double>(), 50);
  EXPECT_TRUE(raw["resourceEntries"][1]["endTime"].is_null());
  EXPECT_FALSE(raw["resourceEntries"][1].contains("userId"));
  const std::string raw_csv = RawAllocationsCsv(*ledger, At(60), At(500), now);
  EXPECT_NE(raw_csv.find("\n7,unspecified,carol,tuned,1,2023-11-14T22:13:30Z,2023-11-14T22:15:10Z,"
                         "50.000000\n"),
            std::string::npos)
      << raw_csv;

  // A window after the trial ended leaves it out.
  auto later = state.AllocationLedger(At(200), At(500));
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->allocations.size(), 1u);
  EXPECT_EQ(later->allocations[0].allocation_id(), "cmd.1");
}

TEST(AllocationLedgerTest, BadDatesAndPeriodsAreRefusedByName) {
  EXPECT_EQ(ParseAggregationPeriod("weekly").status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ParseAggregationPeriod("RESOURCE_ALLOCATION_AGGREGATION_PERIOD_MONTHLY").ok());
  auto bad = ParseDateWindow("2023-13-01", "2023-12-01", AggregationPeriod::kDaily);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("invalid start date '2023-13-01'"), std::string::npos);
  EXPECT_FALSE(ParseDateWindow("2023-12-01", "2023-11-30", AggregationPeriod::kDaily).ok());
  EXPECT_FALSE(ParseDateWindow("2023-11-01", "2023-11", AggregationPeriod::kDaily).ok());
  auto months = ParseDateWindow("2024-02", "2024-02", AggregationPeriod::kMonthly);
  ASSERT_TRUE(months.ok());
  EXPECT_EQ(months->end_unix_micros - months->start_unix_micros, 29 * 86'400 * kSecond);
}

// Per day and user, slot-seconds counted straight from the events: every assignment's parts, each
// until its own exit, the allocation's release or the task's exit, else `now`.
std::map<std::pair<std::string, std::string>, double> CountedFromEvents(
    const std::vector<events::Envelope>& events, int64_t now) {
  struct Part {
    int64_t slots = 0;
    int64_t end = 0;
  };
  struct Held {
    std::string user;
    int64_t start = 0;
    std::map<std::string, Part> parts;
  };
  std::map<std::string, std::string> users;  // task -> user
  std::map<std::string, std::string> live;   // task -> its allocation held
  std::map<std::string, Held> allocations;
  std::set<std::string> exited;
  auto end_all = [&](const std::string& allocation_id, int64_t time) {
    for (auto& [agent, part] : allocations[allocation_id].parts) {
      if (part.end == 0) part.end = time;
    }
  };
  for (const events::Envelope& event : events) {
    const int64_t time = event.time_unix_micros();
    if (event.has_task_submitted()) {
      users.emplace(event.task_submitted().task_id(), event.task_submitted().spec().user());
    } else if (event.has_allocation_assigned()) {
      const auto& assigned = event.allocation_assigned();
      if (exited.count(assigned.task_id()) || live.count(assigned.task_id())) continue;
      Held& held = allocations[assigned.allocation_id()];
      held.user = users[assigned.task_id()];
      held.start = time;
      if (assigned.parts().empty()) {
        held.parts[assigned.agent_id()].slots = assigned.slot_ids_size();
      }
      for (const auto& part : assigned.parts())
        held.parts[part.agent_id()].slots += part.slot_ids_size();
      live[assigned.task_id()] = assigned.allocation_id();
    } else if (event.has_allocation_part_exited()) {
      const auto& part = event.allocation_part_exited();
      auto held = live.find(part.task_id());
      if (held == live.end() || held->second != part.allocation_id()) continue;
      Part& ended = allocations[held->second].parts[part.agent_id()];
      if (ended.end == 0) ended.end = time;
    } else if (event.has_allocation_released() || event.has_task_exited()) {
      const std::string& task = event.has_allocation_released()
                                    ? event.allocation_released().task_id()
                                    : event.task_exited().task_id();
      if (exited.count(task)) continue;
      if (event.has_task_exited()) exited.insert(task);
      auto held = live.find(task);
      if (held == live.end()) continue;
      if (event.has_allocation_released() &&
          held->second != event.allocation_released().allocation_id()) {
        continue;
      }
      end_all(held->second, time);
      live.erase(held);
    }
  }
  constexpr int64_t kDay = 86'400 * kSecond;
  std::map<std::pair<std::string, std::string>, double> counted;
  for (const auto& [id, held] : allocations) {
    for (const auto& [agent, part] : held.parts) {
      const int64_t end = part.end ? part.end : now;
      for (int64_t day = held.start / kDay * kDay; day < end; day += kDay) {
        const int64_t overlap = std::min(end, day + kDay) - std::max(held.start, day);
        if (overlap <= 0) continue;
        const auto date =
            std::chrono::year_month_day(std::chrono::sys_days(std::chrono::days(day / kDay)));
        char text[16];
        std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()),
                      static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
        counted[{text, held.user}] += static_cast<double>(part.slots * overlap) / kSecond;
      }
    }
  }
  return counted;
}

TEST(AllocationLedgerTest, AtEveryOffsetTheDailyReportEqualsTheSumCountedFromTheEvents) {
  UsageHistory history;
  history.Submit(0, "a", "alice", 0, 2)
      .Submit(5, "b", "bob", 0, 8)
      .Assign(10, "a", "a.1", "n1", 2)
      .AssignGang(20, "b", "b.1", {{"n2", 4}, {"n3", 4}})
      .Release(3000, "a", "a.1")  // preempted
      .Assign(3100, "a", "a.2", "n1", 2)
      .PartExit(kMidnight - 50, "b", "b.1", "n3")
      .Exit(kMidnight + 4000, "b", "b.1")
      .Other(kMidnight + 4100)
      .Submit(kMidnight + 5000, "c", "carol", 0, 1)
      .Assign(kMidnight + 5000, "c", "c.1", "n2", 1)
      .Exit(kMidnight + 9000, "a", "a.2")
      .Exit(2 * kMidnight + 86'400, "c", "c.1");
  const auto& events = history.events();
  for (size_t count = 1; count <= events.size(); ++count) {
    ProjectionState state = Fold(history, count);
    const int64_t now = events[count - 1].time_unix_micros();
    const std::vector<events::Envelope> prefix(events.begin(), events.begin() + count);
    const auto counted = CountedFromEvents(prefix, now);
    std::map<std::pair<std::string, std::string>, double> reported;
    for (const AggregatedUsage& day : Daily(state, "2023-11-01", "2023-11-30", now)) {
      double total = 0;
      for (const auto& [user, seconds] : day.by_username) {
        reported[{day.period_start, user}] = seconds;
        total += seconds;
      }
      EXPECT_DOUBLE_EQ(day.seconds, total) << day.period_start << " after " << count;
    }
    std::map<std::pair<std::string, std::string>, double> nonzero;
    for (const auto& [key, seconds] : counted) {
      if (seconds > 0) nonzero[key] = seconds;
    }
    EXPECT_EQ(reported, nonzero) << "after the first " << count << " events";
  }
}

}  // namespace
}  // namespace cairn::projections
