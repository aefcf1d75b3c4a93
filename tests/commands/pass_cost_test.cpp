// What a scheduling pass costs as the queue grows (issue 17): a pass over a pool where nothing
// can change walks none of its queue, so a submission to a full pool costs the same with a long
// queue as with a short one; and skipping such a pool never changes what the pass decides.
// Work is counted (SchedulingPass::queued_tasks_walked), never timed.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "commands/decision_state.h"
#include "commands/scheduler/scheduler.h"
#include "events.pb.h"
#include "events/pool_defaults.h"

namespace cairn::commands {
namespace {

constexpr int64_t kNow = 1'800'000'000'000'000;

// A decision state built from raw events, so that a test can look at a state no pass has
// settled yet (the decider runs a pass after every batch).
class RawState {
 public:
  void Agent(const std::string& agent_id, int32_t slots) {
    events::Envelope event;
    auto* registered = event.mutable_agent_registered();
    registered->set_agent_id(agent_id);
    registered->set_incarnation("inc-" + agent_id);
    registered->set_resource_pool(kDefaultPool);
    registered->set_slot_count(slots);
    Apply(std::move(event));
  }
  void Submit(const std::string& task_id, int32_t slots, int32_t priority, bool trial,
              const std::string& job_id = "") {
    events::Envelope event;
    auto* submitted = event.mutable_task_submitted();
    submitted->set_task_id(task_id);
    submitted->set_job_id(job_id.empty() ? task_id : job_id);
    submitted->mutable_spec()->add_entrypoint("true");
    submitted->mutable_spec()->set_task_type(trial ? events::TASK_TYPE_TRIAL
                                                   : events::TASK_TYPE_COMMAND);
    submitted->mutable_resources()->set_slots(slots);
    submitted->mutable_resources()->set_priority(priority);
    submitted->mutable_resources()->set_resource_pool(kDefaultPool);
    Apply(std::move(event));
  }
  void Assign(const std::string& task_id, const std::string& agent_id,
              const std::vector<int32_t>& slot_ids) {
    events::Envelope event;
    auto* assigned = event.mutable_allocation_assigned();
    assigned->set_task_id(task_id);
    assigned->set_allocation_id(task_id + ".1");
    assigned->set_agent_id(agent_id);
    assigned->set_agent_incarnation("inc-" + agent_id);
    assigned->set_resource_pool(kDefaultPool);
    for (int32_t slot : slot_ids) assigned->add_slot_ids(slot);
    Apply(std::move(event));
  }
  void Preempt(const std::string& task_id) {
    const TaskRecord& task = *state.FindTask(task_id);
    events::Envelope event;
    auto* preemption = event.mutable_preemption_requested();
    preemption->set_task_id(task_id);
    preemption->set_allocation_id(task.allocation_id);
    preemption->set_agent_id(task.agent_id);
    preemption->set_agent_incarnation(task.where().agent_incarnation);
    preemption->set_deadline_unix_micros(kNow + 1'000'000);
    Apply(std::move(event));
  }
  void Policy(events::SchedulerType type, bool preemption) {
    auto* scheduler = state.pools_config.mutable_pools(0)->mutable_scheduler();
    scheduler->set_type(type);
    scheduler->set_preemption(preemption);
  }

  DecisionState state;

 private:
  void Apply(events::Envelope event) {
    event.set_offset(offset_++);
    event.set_time_unix_micros(kNow - 1'000'000 + static_cast<int64_t>(offset_));
    commands::Apply(state, event);
  }
  uint64_t offset_ = 0;
};

struct PolicyCase {
  events::SchedulerType type;
  bool preemption;
  const char* name;
};

const PolicyCase kPolicies[] = {
    {events::SCHEDULER_TYPE_FAIR_SHARE, false, "fair_share"},
    {events::SCHEDULER_TYPE_PRIORITY, true, "priority+preemption"},
    {events::SCHEDULER_TYPE_PRIORITY, false, "priority"},
    {events::SCHEDULER_TYPE_ROUND_ROBIN, false, "round_robin"},
};

// One agent of 4 slots, busy with `running` (non-preemptible commands unless `trials`), and
// `queued` 1-slot tasks behind: the queued-task work of the pass after one more submission.
size_t WalkAfterOneMoreSubmission(const PolicyCase& policy, int queued, bool trials) {
  RawState raw;
  raw.Policy(policy.type, policy.preemption);
  raw.Agent("a1", 4);
  for (int slot = 0; slot < 4; ++slot) {
    const std::string id = "running-" + std::to_string(slot);
    // Running work is the least important, so that priority preemption could take it back.
    raw.Submit(id, 1, 90, trials);
    raw.Assign(id, "a1", {slot});
  }
  for (int i = 0; i < queued; ++i) raw.Submit("queued-" + std::to_string(i), 1, 10, false);
  raw.Submit("one-more", 1, 10, false);
  const SchedulingPass pass = Schedule(raw.state, kNow);
  EXPECT_TRUE(pass.decisions.empty() || trials) << policy.name;
  return pass.queued_tasks_walked;
}

TEST(PassCostTest, ASubmissionToAFullPoolWalksNoneOfItsQueueHoweverLong) {
  for (const PolicyCase& policy : kPolicies) {
    EXPECT_EQ(WalkAfterOneMoreSubmission(policy, 100, false), 0u) << policy.name;
    EXPECT_EQ(WalkAfterOneMoreSubmission(policy, 2000, false), 0u) << policy.name;
  }
}

TEST(PassCostTest, APoolWithWorkToTakeBackIsStillWalked) {
  // Running trials can be preempted (fair share, priority with preemption): the pass must look.
  EXPECT_EQ(WalkAfterOneMoreSubmission(kPolicies[0], 100, true), 101u);
  EXPECT_EQ(WalkAfterOneMoreSubmission(kPolicies[1], 100, true), 101u);
  // Round robin and priority without preemption never take back: a full pool stays unwalked.
  EXPECT_EQ(WalkAfterOneMoreSubmission(kPolicies[2], 100, true), 0u);
  EXPECT_EQ(WalkAfterOneMoreSubmission(kPolicies[3], 100, true), 0u);
}

TEST(PassCostTest, AFreeSlotMakesThePassWalkTheQueue) {
  RawState raw;
  raw.Agent("a1", 2);
  raw.Submit("running", 1, 42, false);
  raw.Assign("running", "a1", {0});
  for (int i = 0; i < 10; ++i) raw.Submit("queued-" + std::to_string(i), 1, 42, false);
  const SchedulingPass pass = Schedule(raw.state, kNow);
  EXPECT_EQ(pass.queued_tasks_walked, 10u);
  ASSERT_EQ(pass.decisions.size(), 1u);
  EXPECT_EQ(pass.decisions[0].allocation_assigned().task_id(), "queued-0");
}

std::vector<std::string> Serialized(const SchedulingPass& pass) {
  std::vector<std::string> decisions;
  for (const auto& decision : pass.decisions) decisions.push_back(decision.SerializeAsString());
  return decisions;
}

// Random unsettled states (agents full or not, running commands and trials of small and large
// jobs, some already being preempted, queued work of every size and priority): the pass that may
// skip pools decides exactly what the explaining pass, which never skips, decides.
TEST(PassCostTest, SkippingAPoolNeverChangesWhatThePassDecides) {
  std::mt19937 random(17);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
  int skipped = 0;
  int walked = 0;
  for (int round = 0; round < 400; ++round) {
    RawState raw;
    const int agents = 1 + pick(3);
    int task_number = 0;
    for (int a = 0; a < agents; ++a) {
      const std::string agent_id = "a" + std::to_string(a);
      const int32_t slots = 1 + pick(4);
      raw.Agent(agent_id, slots);
      // Fill most agents completely, some partly.
      const int32_t busy = pick(4) == 0 ? pick(slots + 1) : slots;
      for (int32_t slot = 0; slot < busy; ++slot) {
        const std::string id = "r" + std::to_string(task_number++);
        // Often one of two large jobs, which then hold more than their fair share.
        const std::string job = pick(2) == 0 ? "big" + std::to_string(pick(2)) : "";
        raw.Submit(id, 1, 10 * (1 + pick(9)), pick(2) == 0, job);
        raw.Assign(id, agent_id, {slot});
        if (pick(6) == 0) raw.Preempt(id);
      }
    }
    const int queued = 1 + pick(12);
    for (int q = 0; q < queued; ++q) {
      raw.Submit("q" + std::to_string(task_number++), pick(4), 10 * (1 + pick(9)), pick(2) == 0);
    }
    for (const PolicyCase& policy : kPolicies) {
      raw.Policy(policy.type, policy.preemption);
      const SchedulingPass pass = Schedule(raw.state, kNow);
      const SchedulingPass full = Schedule(raw.state, kNow, /*explain_waiting=*/true);
      ASSERT_EQ(Serialized(pass), Serialized(full)) << policy.name << " in round " << round;
      (pass.queued_tasks_walked == 0 ? skipped : walked)++;
    }
  }
  // Both kinds of pool were met, so the comparison covered the skip.
  EXPECT_GT(skipped, 50);
  EXPECT_GT(walked, 100);
}

}  // namespace
}  // namespace cairn::commands
