// The cluster-wide projections on plain values: pools (configuration and usage), templates and
// the writers' epoch claims; and the pools' usage checked against the write side's own count.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "commands/decision_state.h"
#include "events/epoch_fence.h"
#include "projections/projections.h"
#include "tests/projections/history.h"
#include "tests/projections/projection_checks.h"

namespace cairn {
namespace {

using testing::Fold;
using testing::History;

std::map<std::string, views::PoolView> PoolsByName(ProjectionState& state) {
  auto pools = state.ListPools();
  EXPECT_TRUE(pools.ok()) << pools.status().ToString();
  std::map<std::string, views::PoolView> by_name;
  if (pools.ok()) {
    for (auto& pool : *pools) by_name[pool.config().pool_name()] = std::move(pool);
  }
  return by_name;
}

TEST(PoolProjectorTest, WithoutAConfigurationThereIsTheDefaultPool) {
  History history;
  history.Register("a1", "i1", "default", 4);
  ProjectionState state = Fold(history);
  auto pools = PoolsByName(state);
  ASSERT_EQ(pools.size(), 1u);
  const views::PoolView& pool = pools.at("default");
  EXPECT_TRUE(pool.default_compute());
  EXPECT_TRUE(pool.default_aux());
  EXPECT_EQ(pool.config().scheduler().type(), events::SCHEDULER_TYPE_FAIR_SHARE);
  EXPECT_EQ(pool.usage().agents(), 1);
  EXPECT_EQ(pool.usage().slots(), 4);
}

TEST(PoolProjectorTest, UsageFollowsAgentsAndAllocations) {
  History history;
  history.ConfigurePools(History::Pools(
      {{"gpu", events::SCHEDULER_TYPE_PRIORITY}, {"cpu", events::SCHEDULER_TYPE_FAIR_SHARE}}));
  history.Register("a1", "i1", "gpu", 8);
  history.Register("a2", "i1", "gpu", 8);
  history.Register("c1", "i1", "cpu", 2);
  history.Submit("t1", "j1", "gpu", 42, 3);
  history.Assign("t1", "al1", "a1", "i1", {0, 1, 2});
  history.Submit("t2", "j2", "cpu", 42, 0);
  history.Assign("t2", "al2", "c1", "i1", {});
  history.Submit("t3", "j3", "gpu", 42, 16);
  history.AssignGang("t3", "al3",
                     {History::Part("a1", "i1", {3, 4, 5, 6, 7}), History::Part("a2", "i1", {})});
  {
    ProjectionState state = Fold(history);
    auto pools = PoolsByName(state);
    ASSERT_EQ(pools.size(), 2u);
    EXPECT_TRUE(pools.at("gpu").default_compute());
    EXPECT_FALSE(pools.at("cpu").default_compute());
    EXPECT_EQ(pools.at("gpu").usage().agents(), 2);
    EXPECT_EQ(pools.at("gpu").usage().slots(), 16);
    EXPECT_EQ(pools.at("gpu").usage().used_slots(), 8);
    EXPECT_EQ(pools.at("cpu").usage().used_slots(), 0);
    EXPECT_EQ(pools.at("cpu").usage().aux_containers(), 1);
  }
  // A gang part ends, then the whole gang (its exit names only the first agent), then t1 is
  // released back to the queue, and a disconnected agent no longer counts.
  history.PartExit("t3", "al3", "a2", 0);
  history.Exit("t3", "al3", "a1", 0, std::nullopt, "exited");
  history.Release("t1", "al1", "preempted");
  history.Disconnect("c1", "i1");
  ProjectionState state = Fold(history);
  auto pools = PoolsByName(state);
  EXPECT_EQ(pools.at("gpu").usage().used_slots(), 0);
  EXPECT_EQ(pools.at("gpu").usage().agents(), 2);
  EXPECT_EQ(pools.at("cpu").usage().agents(), 0);
  EXPECT_EQ(pools.at("cpu").usage().slots(), 0);
  EXPECT_EQ(pools.at("cpu").usage().aux_containers(), 0);
}

TEST(PoolProjectorTest, ANewIncarnationStartsEmptyAndAReconnectKeepsItsAllocations) {
  History history;
  history.Register("a1", "i1", "default", 4);
  history.Submit("t1", "j1", "default", 42, 2);
  history.Assign("t1", "al1", "a1", "i1", {0, 1});
  history.Disconnect("a1", "i1");
  history.Register("a1", "i1", "default", 4, /*reconnect=*/true);
  {
    ProjectionState state = Fold(history);
    EXPECT_EQ(PoolsByName(state).at("default").usage().used_slots(), 2);
  }
  history.Register("a1", "i2", "default", 4);
  ProjectionState state = Fold(history);
  EXPECT_EQ(PoolsByName(state).at("default").usage().used_slots(), 0);
  EXPECT_EQ(PoolsByName(state).at("default").usage().agents(), 1);
}

// The pools' usage is what the write side's own state holds (the decision state: its agents and
// the allocations its tasks hold), at every step of a busy history: agents joining, restarting
// and leaving, gangs, preemptions, releases, kills. (The synthetic history places some tasks on
// slots that others still hold; each slot in use counts once.)
TEST(PoolProjectorTest, UsageEqualsTheWriteSidesStateAtEveryOffset) {
  History history;
  history.AddWorkload(5, 60);
  commands::DecisionState decision;
  ProjectionState state;
  for (const auto& event : history.events()) {
    commands::Apply(decision, event);
    ASSERT_TRUE(state.Apply(event).ok());
    if (event.offset() % 7 != 0 && event.offset() != history.last_offset()) continue;
    std::map<std::string, std::set<int32_t>> used;  // agent -> slots its allocations hold
    std::map<std::string, int> aux;
    for (const auto& [id, task] : decision.tasks) {
      if (!task.holds_allocation()) continue;
      std::vector<events::AllocationPart> parts = task.where().parts;
      if (parts.empty()) {
        events::AllocationPart& only = parts.emplace_back();
        only.set_agent_id(task.agent_id);
        only.set_agent_incarnation(task.where().agent_incarnation);
        only.mutable_slot_ids()->Add(task.where().slot_ids.begin(), task.where().slot_ids.end());
      }
      for (const auto& part : parts) {
        if (task.where().parts_exited.count(part.agent_id())) continue;
        // A new incarnation of an agent runs nothing of the old process's (the synthetic
        // history leaves out the exits a real decider writes first).
        const commands::AgentRecord* agent = decision.FindAgent(part.agent_id());
        if (agent == nullptr || agent->incarnation != part.agent_incarnation()) continue;
        if (part.slot_ids().empty()) aux[part.agent_id()]++;
        used[part.agent_id()].insert(part.slot_ids().begin(), part.slot_ids().end());
      }
    }
    std::map<std::string, views::PoolUsage> expected;
    for (const auto& [id, agent] : decision.agents) {
      if (!agent.connected) continue;
      views::PoolUsage& usage = expected[agent.resource_pool];
      usage.set_agents(usage.agents() + 1);
      usage.set_slots(usage.slots() + agent.slot_count);
      usage.set_used_slots(usage.used_slots() + static_cast<int>(used[id].size()));
      usage.set_aux_containers(usage.aux_containers() + aux[id]);
    }
    for (auto& [name, pool] : PoolsByName(state)) {
      const views::PoolUsage& want = expected[name];
      const views::PoolUsage& got = pool.usage();
      EXPECT_EQ(got.agents(), want.agents()) << name << " at offset " << event.offset();
      EXPECT_EQ(got.slots(), want.slots()) << name << " at offset " << event.offset();
      EXPECT_EQ(got.used_slots(), want.used_slots()) << name << " at offset " << event.offset();
      EXPECT_EQ(got.aux_containers(), want.aux_containers()) << name << " at " << event.offset();
    }
  }
}

// The tenancy projection shows what the write side holds (commands/tenancy/tenancy.h), all along a
// history where workspaces, projects, roles and bindings come and go and experiments move.
TEST(TenancyProjectorTest, ViewsEqualTheWriteSidesStateAtEveryOffset) {
  History history;
  history.AddWorkload(5, 60);
  commands::DecisionState decision;
  ProjectionState state;
  int checked_workspaces = 0;
  for (const auto& event : history.events()) {
    commands::Apply(decision, event);
    ASSERT_TRUE(state.Apply(event).ok());
    if (event.offset() % 5 != 0 && event.offset() != history.last_offset()) continue;
    const commands::TenancyState& tenancy = decision.tenancy;
    auto workspaces = state.ListWorkspaces();
    ASSERT_TRUE(workspaces.ok()) << workspaces.status().ToString();
    ASSERT_EQ(workspaces->size(), tenancy.workspaces.size()) << "at " << event.offset();
    for (const auto& view : *workspaces) {
      const commands::WorkspaceRecord& want = tenancy.workspaces.at(view.id());
      EXPECT_EQ(view.name(), want.name);
      EXPECT_EQ(view.archived(), want.archived);
      EXPECT_EQ(std::set<int32_t>(view.pinned_by().begin(), view.pinned_by().end()),
                want.pinned_by);
      std::set<int32_t> projects;
      int experiments = 0;
      for (const auto& [id, project] : tenancy.projects) {
        if (project.workspace_id == view.id()) projects.insert(id);
      }
      for (const auto& [id, experiment] : decision.experiments) {
        experiments += experiment.workspace_id == view.id() && !experiment.deleted ? 1 : 0;
      }
      EXPECT_EQ(std::set<int32_t>(view.project_ids().begin(), view.project_ids().end()), projects)
          << "workspace " << view.id() << " at " << event.offset();
      EXPECT_EQ(view.num_experiments(), experiments)
          << "workspace " << view.id() << " at " << event.offset();
      ++checked_workspaces;
    }
    auto roles = state.ListRoleAssignments();
    ASSERT_TRUE(roles.ok());
    std::map<std::pair<int32_t, int32_t>, events::Role> viewed;
    for (const auto& role : *roles) viewed[{role.user_id(), role.workspace_id()}] = role.role();
    EXPECT_EQ(viewed, tenancy.roles) << "at " << event.offset();
    auto bindings = state.ListPoolBindings();
    ASSERT_TRUE(bindings.ok());
    std::map<std::string, std::set<int32_t>> bound;
    for (const auto& binding : *bindings) {
      bound[binding.pool_name()] = {binding.workspace_ids().begin(), binding.workspace_ids().end()};
    }
    EXPECT_EQ(bound, tenancy.pool_bindings) << "at " << event.offset();
  }
  EXPECT_GT(checked_workspaces, 20) << "the history must make workspaces to compare";
}

TEST(TemplateProjectorTest, SavedChangedAndDeleted) {
  History history;
  history.SaveTemplate("b", "description: first");
  history.SaveTemplate("a", "description: other");
  history.SaveTemplate("b", "description: second");
  {
    ProjectionState state = Fold(history);
    auto templates = state.ListTemplates();
    ASSERT_TRUE(templates.ok());
    ASSERT_EQ(templates->size(), 2u);
    EXPECT_EQ((*templates)[0].name(), "a");
    EXPECT_EQ((*templates)[1].config_yaml(), "description: second");
  }
  history.DeleteTemplate("b");
  ProjectionState state = Fold(history);
  auto b = state.GetTemplate("b");
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->has_value());
  auto a = state.GetTemplate("a");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->config_yaml(), "description: other");
}

TEST(WriterProjectorTest, TheNewestEpochClaimedBeforeAnOffset) {
  History history;
  history.Claim(1);                            // offset 0
  history.Register("a1", "i1", "default", 4);  // 1
  history.Claim(2);                            // 2
  history.Register("a2", "i1", "default", 4);  // 3
  history.Claim(3);                            // 4
  ProjectionState state = Fold(history);
  for (auto [offset, epoch] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 0}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {100, 3}}) {
    auto newest = state.NewestEpochBefore(offset);
    ASSERT_TRUE(newest.ok());
    EXPECT_EQ(*newest, epoch) << "before offset " << offset;
  }
}

TEST(EpochFenceTest, ClaimsRaiseTheFenceAndOlderWritersAreFencedOff) {
  History history;
  history.Register("a1", "i1", "default", 4);  // epoch 0, before any claim: a fact
  history.Claim(2);
  history.set_epoch(1);
  history.Register("a2", "i1", "default", 4);  // a straggler of epoch 1
  history.set_epoch(2);
  history.Register("a3", "i1", "default", 4);
  history.Claim(1);  // an older claim arriving late changes nothing
  history.set_epoch(2);
  history.Register("a4", "i1", "default", 4);
  EpochFence fence;
  std::vector<EpochFence::Verdict> verdicts;
  for (const auto& event : history.events()) verdicts.push_back(fence.Admit(event));
  using V = EpochFence::Verdict;
  EXPECT_EQ(verdicts,
            (std::vector<V>{V::kFact, V::kClaim, V::kFenced, V::kFact, V::kClaim, V::kFact}));
  EXPECT_EQ(fence.newest_epoch(), 2u);
}

}  // namespace
}  // namespace cairn
