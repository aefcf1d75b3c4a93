#include "replay/whatif.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/clock.h"
#include "commands/decision_state.h"
#include "commands/scheduler/scheduler.h"
#include "commands/tasks/task_decider.h"
#include "events/envelope_util.h"
#include "events/workspace_defaults.h"

namespace cairn::replay {

namespace {

using commands::DecisionState;
using commands::TaskRecord;
using commands::TaskState;
using Envelope = events::Envelope;
using TaskFacts = WhatIfSimulation::TaskFacts;

// Passes at one instant while the last one preempted: a preemption frees its slots at once in
// this model, and the pass after it places the task it was for. Bounded so that preemptions
// that undo each other cannot spin; 64 is far more than any instant needs.
constexpr int kMaxPassesPerInstant = 64;

bool InWindow(const WhatIfWindow& window, int64_t time) {
  return (!window.from || time >= *window.from) && (!window.until || time <= *window.until);
}

// The events the folds read: submissions, placements and their ends, queue changes, agents,
// pools, and the tenancy events scheduling reads (workspace names for job rules, bindings).
bool Kept(const Envelope& event) {
  switch (event.payload_case()) {
    case Envelope::kTaskSubmitted:
    case Envelope::kAllocationAssigned:
    case Envelope::kTaskStarted:
    case Envelope::kKillRequested:
    case Envelope::kTaskExited:
    case Envelope::kPreemptionRequested:
    case Envelope::kAllocationReleased:
    case Envelope::kAllocationPartExited:
    case Envelope::kJobQueueChanged:
    case Envelope::kResourcePoolsConfigured:
    case Envelope::kAgentRegistered:
    case Envelope::kAgentDisconnected:
    case Envelope::kAgentEnabled:
    case Envelope::kAgentDisabled:
    case Envelope::kWorkspaceCreated:
    case Envelope::kWorkspaceUpdated:
    case Envelope::kWorkspaceDeleted:
    case Envelope::kPoolBindingsChanged:
      return true;
    default:
      return false;
  }
}

// The event as the folds need it: what a placement order or a submission carries for the
// process (argv, environment, configuration) and every reason in words are dropped, so that a
// long log fits in memory. The epoch is cleared (the fence was applied while gathering), the
// trial link too (no experiment is folded), and the time is the gathered, monotone one.
Envelope Stripped(const Envelope& event, int64_t time) {
  Envelope kept;
  kept.set_offset(event.offset());
  kept.set_time_unix_micros(time);
  switch (event.payload_case()) {
    case Envelope::kTaskSubmitted: {
      const auto& from = event.task_submitted();
      auto* submitted = kept.mutable_task_submitted();
      submitted->set_task_id(from.task_id());
      submitted->set_job_id(from.job_id());
      *submitted->mutable_resources() = from.resources();
      submitted->set_workspace_id(from.workspace_id());
      submitted->mutable_spec()->set_task_type(from.spec().task_type());
      submitted->mutable_spec()->set_preemptible(from.spec().preemptible());
      submitted->mutable_spec()->set_user(from.spec().user());
      break;
    }
    case Envelope::kAllocationAssigned:
      *kept.mutable_allocation_assigned() = event.allocation_assigned();
      kept.mutable_allocation_assigned()->clear_spec();
      kept.mutable_allocation_assigned()->clear_reason();
      break;
    default: {
      kept = event;
      kept.set_offset(event.offset());
      kept.set_time_unix_micros(time);
      kept.clear_event_id();
      kept.clear_actor();
      kept.clear_correlation_id();
      kept.clear_causation_id();
      kept.clear_idempotency_key();
      kept.clear_request_fingerprint();
      kept.clear_writer_epoch();
      break;
    }
  }
  return kept;
}

// Whether the event can change the slots held or the slots connected.
bool ChangesSlots(const Envelope& event) {
  switch (event.payload_case()) {
    case Envelope::kAllocationAssigned:
    case Envelope::kTaskExited:
    case Envelope::kAllocationReleased:
    case Envelope::kAllocationPartExited:
    case Envelope::kAgentRegistered:
    case Envelope::kAgentDisconnected:
      return true;
    default:
      return false;
  }
}

// Busy and connected slots over time, as a step function sampled after every change.
class SlotMeter {
 public:
  void Sample(int64_t time, const DecisionState& state) {
    int64_t busy = 0;
    int64_t available = 0;
    for (const auto& [agent_id, agent] : state.agents) {
      if (!agent.connected) continue;
      available += agent.slot_count;
      busy += static_cast<int64_t>(agent.used_slots.size());
    }
    if (!points_.empty() && points_.back().time == time) points_.pop_back();
    if (!points_.empty() && points_.back().busy == busy && points_.back().available == available) {
      return;
    }
    points_.push_back({time, busy, available});
  }

  // Slot-microseconds {busy, available} over [begin, end).
  std::pair<int64_t, int64_t> Integrate(int64_t begin, int64_t end) const {
    int64_t busy = 0;
    int64_t available = 0;
    for (size_t i = 0; i < points_.size(); ++i) {
      const int64_t from = std::max(begin, points_[i].time);
      const int64_t to = std::min(end, i + 1 < points_.size() ? points_[i + 1].time : end);
      if (to <= from) continue;
      busy += points_[i].busy * (to - from);
      available += points_[i].available * (to - from);
    }
    return {busy, available};
  }

 private:
  struct Point {
    int64_t time;
    int64_t busy;
    int64_t available;
  };
  std::vector<Point> points_;
};

// How one of the window's tasks fared in one column.
struct Outcome {
  const TaskFacts* facts = nullptr;
  std::optional<int64_t> first_start;
  std::string pool;
  std::optional<int64_t> end;  // it finished then
  int64_t preemptions = 0;
};

WaitFigures Figures(std::vector<int64_t> waits, int64_t tasks) {
  WaitFigures figures;
  figures.tasks = tasks;
  figures.started = static_cast<int64_t>(waits.size());
  if (waits.empty()) return figures;
  std::sort(waits.begin(), waits.end());
  // Nearest rank: the smallest wait that at least p% of the waits do not exceed.
  auto rank = [&](size_t percent) { return waits[(percent * waits.size() + 99) / 100 - 1]; };
  figures.p50 = rank(50);
  figures.p95 = rank(95);
  figures.max = waits.back();
  return figures;
}

WhatIfColumn Score(const std::vector<Outcome>& outcomes, const SlotMeter& meter,
                   int64_t first_submission) {
  struct Group {
    std::vector<int64_t> waits;
    int64_t tasks = 0;
  };
  Group all;
  std::map<std::string, Group> pools;
  std::map<std::string, Group> users;
  std::map<int32_t, Group> workspaces;
  WhatIfColumn column;
  std::optional<int64_t> last_end;
  for (const Outcome& outcome : outcomes) {
    const TaskFacts& task = *outcome.facts;
    for (Group* group :
         {&all, &pools[outcome.pool], &users[task.user], &workspaces[task.workspace_id]}) {
      ++group->tasks;
      if (outcome.first_start) group->waits.push_back(*outcome.first_start - task.submitted);
    }
    if (outcome.end) {
      ++column.finished;
      last_end = std::max(last_end.value_or(*outcome.end), *outcome.end);
    }
    column.preemptions += outcome.preemptions;
  }
  column.all = Figures(all.waits, all.tasks);
  for (auto& [pool, group] : pools) column.by_pool[pool] = Figures(group.waits, group.tasks);
  for (auto& [user, group] : users) column.by_user[user] = Figures(group.waits, group.tasks);
  for (auto& [workspace, group] : workspaces) {
    column.by_workspace[workspace] = Figures(group.waits, group.tasks);
  }
  if (last_end) {
    column.makespan = *last_end - first_submission;
    std::tie(column.busy_slot_micros, column.available_slot_micros) =
        meter.Integrate(first_submission, *last_end);
  }
  return column;
}

// The what-if column: the recorded history replayed through the scheduler under the other
// configuration. Before the window opens the log is folded as recorded (placements included);
// from then on the scheduler decides, and each task holds its slots for its recorded run time.
class Simulator {
 public:
  Simulator(const WhatIfConfig& config, const WhatIfWindow& window,
            const std::map<std::string, TaskFacts>& facts, int64_t log_end)
      : config_(config), window_(window), facts_(facts), log_end_(log_end) {
    state_.pools_config = config.pools;
  }

  void Run(const std::vector<Envelope>& history) {
    size_t next = 0;
    while (next < history.size() && window_.from &&
           history[next].time_unix_micros() < *window_.from) {
      now_ = history[next].time_unix_micros();
      FoldAsRecorded(history[next++]);
      meter_.Sample(now_, state_);
    }
    // The window opens: the scheduler decides from here, and what runs ends after its run time.
    // A preemption under way completes at once, as the simulation's own do.
    if (next < history.size()) now_ = std::max(now_, history[next].time_unix_micros());
    for (auto& [task_id, task] : tasks_) {
      if (!task.placed_at) continue;
      if (state_.tasks.at(task_id).preempting) {
        Requeue(task_id);
      } else {
        StartTimer(task_id, task);
      }
    }
    Settle();
    meter_.Sample(now_, state_);
    while (true) {
      std::optional<int64_t> due;
      auto earliest = [&](int64_t time) { due = std::min(due.value_or(time), time); };
      if (next < history.size()) earliest(history[next].time_unix_micros());
      if (!timers_.empty()) earliest(timers_.begin()->first);
      if (!withdrawals_.empty()) earliest(withdrawals_.begin()->first);
      if (!due) break;
      now_ = std::max(now_, *due);
      // At one instant: allocations end, then the log's events, then the scheduler decides.
      while (!timers_.empty() && timers_.begin()->first <= now_) {
        std::string task_id = timers_.begin()->second;
        timers_.erase(timers_.begin());
        Finish(task_id);
      }
      while (!withdrawals_.empty() && withdrawals_.begin()->first <= now_) {
        std::string task_id = withdrawals_.begin()->second;
        withdrawals_.erase(withdrawals_.begin());
        Withdraw(task_id);
      }
      while (next < history.size() && history[next].time_unix_micros() <= now_) {
        Simulate(history[next++]);
      }
      Settle();
      meter_.Sample(now_, state_);
    }
  }

  std::vector<Outcome> Outcomes() const {
    std::vector<Outcome> outcomes;
    for (const auto& [task_id, task] : tasks_) {
      if (!task.facts->in_window) continue;
      Outcome outcome;
      outcome.facts = task.facts;
      outcome.first_start = task.first_start;
      outcome.pool = task.first_start ? task.first_pool : state_.tasks.at(task_id).pool();
      outcome.end = task.end;
      outcome.preemptions = task.preemptions;
      outcomes.push_back(std::move(outcome));
    }
    return outcomes;
  }

  const SlotMeter& meter() const { return meter_; }

 private:
  struct SimTask {
    const TaskFacts* facts = nullptr;
    // Run time still to go, for a task the log saw run; nullopt: it holds its slots until
    // hold_until (the log saw it killed while queued, or never saw it run).
    std::optional<int64_t> remaining;
    int64_t hold_until = 0;
    bool finishes = true;              // its end is an end the log saw (not the log's end)
    std::optional<int64_t> placed_at;  // while it holds an allocation
    std::optional<int64_t> timer;      // when that allocation ends
    std::optional<int64_t> first_start;
    std::string first_pool;
    std::optional<int64_t> end;
    bool over = false;
    int64_t preemptions = 0;
  };

  // A recorded event before the window: folded as it happened, the pools aside.
  void FoldAsRecorded(const Envelope& recorded) {
    if (recorded.has_resource_pools_configured()) return;
    std::optional<Envelope> event = Translated(recorded);
    if (!event) return;
    Apply(*event);
    const std::string& task_id = TaskIdOf(*event);
    SimTask* task = Find(task_id);
    if (event->has_task_submitted()) Begin(task_id);
    if (task == nullptr) return;
    // The run time is counted as the fold took the event: one it ignored (a stale allocation)
    // changes nothing here either.
    const TaskRecord& record = state_.tasks.at(task_id);
    switch (event->payload_case()) {
      case Envelope::kAllocationAssigned:
        if (!task->placed_at && record.holds_allocation() &&
            record.allocation_id == event->allocation_assigned().allocation_id()) {
          Placed(*task, *event);
        }
        break;
      case Envelope::kAllocationReleased:
        if (record.state == TaskState::kQueued) Stopped(*task);
        break;
      case Envelope::kTaskExited:
        Stopped(*task);
        task->over = true;
        break;
      default:
        break;
    }
  }

  // A recorded event once the window is open: what the cluster was given (work, agents, queue
  // changes) is replayed; what the scheduler and the tasks did is the simulation's to decide.
  void Simulate(const Envelope& recorded) {
    switch (recorded.payload_case()) {
      case Envelope::kTaskSubmitted:
        if (window_.until && recorded.time_unix_micros() > *window_.until) return;
        break;
      case Envelope::kAgentRegistered: {
        const auto& registered = recorded.agent_registered();
        const commands::AgentRecord* agent = state_.FindAgent(registered.agent_id());
        if (agent != nullptr && agent->incarnation != registered.incarnation()) {
          RequeueOn(registered.agent_id());  // a new process: what ran there is gone
        }
        break;
      }
      case Envelope::kAgentDisabled:
        if (!recorded.agent_disabled().drain()) RequeueOn(recorded.agent_disabled().agent_id());
        break;
      case Envelope::kJobQueueChanged:
      case Envelope::kAgentDisconnected:
      case Envelope::kAgentEnabled:
      case Envelope::kWorkspaceCreated:
      case Envelope::kWorkspaceUpdated:
      case Envelope::kWorkspaceDeleted:
      case Envelope::kPoolBindingsChanged:
        break;
      default:
        return;
    }
    std::optional<Envelope> event = Translated(recorded);
    if (!event) return;
    Apply(*event);
    if (event->has_task_submitted()) Begin(event->task_submitted().task_id());
  }

  // The recorded event under the other configuration: pools it lacks are replaced by its
  // defaults, job rules set priorities and weights. nullopt: it has no meaning there.
  std::optional<Envelope> Translated(Envelope event) {
    switch (event.payload_case()) {
      case Envelope::kTaskSubmitted: {
        auto* submitted = event.mutable_task_submitted();
        auto* resources = submitted->mutable_resources();
        if (state_.FindPool(resources->resource_pool()) == nullptr) {
          resources->set_resource_pool(commands::IsAuxTask(submitted->spec(), resources->slots())
                                           ? config_.pools.default_aux_pool()
                                           : config_.pools.default_compute_pool());
        }
        ApplyJobRules(submitted->spec().user(), WorkspaceOrUncategorized(submitted->workspace_id()),
                      resources);
        break;
      }
      case Envelope::kJobQueueChanged: {
        auto* changed = event.mutable_job_queue_changed();
        const commands::JobRecord* job = state_.FindJob(changed->job_id());
        if (job == nullptr) return std::nullopt;
        // A move to a pool this configuration lacks leaves the job where it is.
        if (state_.FindPool(changed->resource_pool()) == nullptr) {
          changed->set_resource_pool(job->resource_pool);
        }
        events::Resources values;
        values.set_priority(changed->priority());
        values.set_weight(changed->weight());
        ApplyJobRules(job->user, job->workspace_id, &values);
        changed->set_priority(values.priority());
        changed->set_weight(values.weight());
        break;
      }
      case Envelope::kAllocationAssigned: {
        auto* assigned = event.mutable_allocation_assigned();
        const TaskRecord* task = state_.FindTask(assigned->task_id());
        if (task != nullptr) assigned->set_resource_pool(task->pool());
        break;
      }
      case Envelope::kAgentRegistered: {
        auto* registered = event.mutable_agent_registered();
        if (state_.FindPool(registered->resource_pool()) == nullptr) {
          registered->set_resource_pool(config_.pools.default_compute_pool());
        }
        break;
      }
      case Envelope::kPoolBindingsChanged:
        if (state_.FindPool(event.pool_bindings_changed().pool_name()) == nullptr) {
          return std::nullopt;
        }
        break;
      default:
        break;
    }
    return event;
  }

  void ApplyJobRules(const std::string& user, int32_t workspace_id, events::Resources* resources) {
    const auto* workspace = state_.tenancy.FindWorkspace(workspace_id);
    for (const WhatIfJobRule& rule : config_.job_rules) {
      if (!rule.user.empty() && rule.user != user) continue;
      if (!rule.workspace.empty() && (workspace == nullptr || workspace->name != rule.workspace)) {
        continue;
      }
      if (rule.priority) resources->set_priority(*rule.priority);
      if (rule.weight) resources->set_weight(*rule.weight);
    }
  }

  // Applies an event to the simulated state at this instant. Recorded events keep their offsets
  // (a job's queue position is its submission's offset); the simulation's own take the last
  // recorded one, which orders nothing.
  void Apply(Envelope& event) {
    event.set_offset(std::max(offset_, event.offset()));
    offset_ = event.offset();
    event.set_time_unix_micros(now_);
    commands::Apply(state_, event);
  }

  SimTask* Find(const std::string& task_id) {
    auto it = tasks_.find(task_id);
    return it == tasks_.end() ? nullptr : &it->second;
  }

  // A task submitted to the simulation: how long it runs there comes from what the log saw.
  void Begin(const std::string& task_id) {
    auto facts = facts_.find(task_id);
    if (facts == facts_.end() || tasks_.count(task_id)) return;
    const TaskFacts& seen = facts->second;
    SimTask task;
    task.facts = &seen;
    if (seen.first_assigned) {
      // Every allocation's time, so a run the log cut short by a kill is cut as short here; a run
      // still going at the log's end counts up to it and does not finish.
      task.remaining = seen.worked + (seen.open_since ? log_end_ - *seen.open_since : 0);
      task.finishes = seen.ended.has_value();
    } else if (seen.ended) {
      // Killed (or withdrawn) before it ever ran: it ends at the same moment here.
      task.hold_until = *seen.ended;
      withdrawals_.insert({*seen.ended, task_id});
    } else {
      // Never ran and never ended: nothing is known of its run beyond the log's end.
      task.hold_until = log_end_;
      task.finishes = false;
    }
    tasks_.emplace(task_id, std::move(task));
  }

  void Placed(SimTask& task, const Envelope& assigned) {
    task.placed_at = now_;
    if (!task.first_start) {
      task.first_start = now_;
      task.first_pool = assigned.allocation_assigned().resource_pool();
    }
  }

  // The allocation ended (preempted, lost, or over): the run time it used is done.
  void Stopped(SimTask& task) {
    if (!task.placed_at) return;
    if (task.remaining)
      task.remaining = std::max<int64_t>(0, *task.remaining - (now_ - *task.placed_at));
    task.placed_at.reset();
  }

  void StartTimer(const std::string& task_id, SimTask& task) {
    const int64_t end = task.remaining ? *task.placed_at + *task.remaining
                                       : std::max(task.hold_until, *task.placed_at);
    task.timer = std::max(end, now_);
    timers_.insert({*task.timer, task_id});
  }

  void CancelTimer(const std::string& task_id, SimTask& task) {
    if (task.timer) timers_.erase({*task.timer, task_id});
    task.timer.reset();
  }

  void Finish(const std::string& task_id) {
    SimTask& task = tasks_.at(task_id);
    task.timer.reset();
    const TaskRecord& record = state_.tasks.at(task_id);
    Envelope event;
    auto* exited = event.mutable_task_exited();
    exited->set_task_id(task_id);
    exited->set_allocation_id(record.allocation_id);
    exited->set_agent_id(record.agent_id);
    Apply(event);
    Stopped(task);
    task.over = true;
    if (task.finishes) task.end = now_;
  }

  // The log saw the task killed while it waited: if it still waits here, it goes the same way.
  void Withdraw(const std::string& task_id) {
    SimTask& task = tasks_.at(task_id);
    if (task.over || state_.tasks.at(task_id).state != TaskState::kQueued) return;
    Envelope event;
    event.mutable_task_exited()->set_task_id(task_id);
    Apply(event);
    task.over = true;
    task.end = now_;
  }

  // The allocation goes and the task waits again at its place, for the run time it has left.
  void Requeue(const std::string& task_id) {
    SimTask& task = tasks_.at(task_id);
    const TaskRecord& record = state_.tasks.at(task_id);
    Envelope event;
    auto* released = event.mutable_allocation_released();
    released->set_task_id(task_id);
    released->set_allocation_id(record.allocation_id);
    Apply(event);
    CancelTimer(task_id, task);
    Stopped(task);
  }

  void RequeueOn(const std::string& agent_id) {
    const commands::AgentRecord* agent = state_.FindAgent(agent_id);
    if (agent == nullptr) return;
    std::set<std::string> task_ids;
    for (const auto& allocation_id : agent->allocations) {
      task_ids.insert(state_.TaskOfLiveAllocation(allocation_id).task_id);
    }
    for (const auto& task_id : task_ids) {
      if (tasks_.count(task_id) && state_.tasks.at(task_id).holds_allocation()) Requeue(task_id);
    }
  }

  // The scheduler's pass at this instant, its decisions applied as the writer applies them, as
  // the master runs one pass after each batch. A preempted task leaves at once, and its release
  // is a batch of its own in the master: another pass follows at the same instant.
  void Settle() {
    bool preempted = true;
    for (int pass = 0; pass < kMaxPassesPerInstant && preempted; ++pass) {
      preempted = false;
      std::vector<Envelope> decisions = commands::Schedule(state_, now_).decisions;
      for (Envelope& decision : decisions) {
        if (decision.has_allocation_assigned()) {
          const std::string task_id = decision.allocation_assigned().task_id();
          Apply(decision);
          SimTask& task = tasks_.at(task_id);
          Placed(task, decision);
          StartTimer(task_id, task);
        } else if (decision.has_preemption_requested()) {
          const std::string task_id = decision.preemption_requested().task_id();
          Apply(decision);
          ++tasks_.at(task_id).preemptions;
          Requeue(task_id);
          preempted = true;
        }
      }
    }
  }

  const WhatIfConfig& config_;
  const WhatIfWindow& window_;
  const std::map<std::string, TaskFacts>& facts_;
  const int64_t log_end_;
  DecisionState state_;
  std::map<std::string, SimTask> tasks_;
  // (time, task id), so that one instant's ends are taken in one order.
  std::set<std::pair<int64_t, std::string>> timers_;
  std::set<std::pair<int64_t, std::string>> withdrawals_;
  uint64_t offset_ = 0;
  int64_t now_ = 0;
  SlotMeter meter_;
};

}  // namespace

std::optional<double> WhatIfColumn::utilization() const {
  if (available_slot_micros <= 0) return std::nullopt;
  return static_cast<double>(busy_slot_micros) / static_cast<double>(available_slot_micros);
}

WhatIfSimulation::WhatIfSimulation(WhatIfConfig config, WhatIfWindow window)
    : config_(std::move(config)), window_(window) {}

WhatIfSimulation::~WhatIfSimulation() = default;

void WhatIfSimulation::Add(const Envelope& event) {
  ++events_;
  if (fence_.Admit(event) != EpochFence::Verdict::kFact) return;
  clock_ = std::max(clock_, event.time_unix_micros());
  const int64_t now = clock_;
  auto find = [&](const std::string& task_id) -> TaskFacts* {
    auto it = tasks_.find(task_id);
    return it == tasks_.end() ? nullptr : &it->second;
  };
  switch (event.payload_case()) {
    case Envelope::kResourcePoolsConfigured:
      current_pools_ = event.resource_pools_configured();
      break;
    case Envelope::kTaskSubmitted: {
      const auto& submitted = event.task_submitted();
      auto [it, inserted] = tasks_.try_emplace(submitted.task_id());
      if (!inserted) return;  // the fold ignores a repeated submission too
      TaskFacts& task = it->second;
      task.submitted = now;
      task.in_window = InWindow(window_, now);
      task.user = submitted.spec().user();
      task.workspace_id = WorkspaceOrUncategorized(submitted.workspace_id());
      task.submitted_pool = submitted.resources().resource_pool();
      if (task.in_window && !pools_at_first_submission_)
        pools_at_first_submission_ = current_pools_;
      break;
    }
    case Envelope::kAllocationAssigned: {
      const auto& assigned = event.allocation_assigned();
      TaskFacts* task = find(assigned.task_id());
      if (task == nullptr || task->ended || task->open_since) break;
      if (!task->first_assigned) {
        task->first_assigned = now;
        task->first_pool = assigned.resource_pool();
      }
      task->open_since = now;
      task->allocation_id = assigned.allocation_id();
      break;
    }
    case Envelope::kPreemptionRequested: {
      TaskFacts* task = find(event.preemption_requested().task_id());
      if (task != nullptr && task->open_since &&
          task->allocation_id == event.preemption_requested().allocation_id()) {
        ++task->preemptions;
      }
      break;
    }
    case Envelope::kAllocationReleased: {
      TaskFacts* task = find(event.allocation_released().task_id());
      if (task != nullptr && task->open_since &&
          task->allocation_id == event.allocation_released().allocation_id()) {
        task->worked += now - *task->open_since;
        task->open_since.reset();
      }
      break;
    }
    case Envelope::kTaskExited: {
      TaskFacts* task = find(event.task_exited().task_id());
      if (task == nullptr || task->ended) break;
      if (task->open_since) task->worked += now - *task->open_since;
      task->open_since.reset();
      task->ended = now;
      break;
    }
    default:
      break;
  }
  if (Kept(event)) history_.push_back(Stripped(event, now));
}

Result<WhatIfReport> WhatIfSimulation::Run() const {
  WhatIfReport report;
  report.window = window_;
  report.log_end = clock_;
  report.events = events_;
  report.config_source = config_.source;
  report.whatif_pools = config_.pools;
  report.job_rules = config_.job_rules.size();
  std::vector<Outcome> actual;
  for (const auto& [task_id, task] : tasks_) {
    if (!task.in_window) continue;
    if (actual.empty() || task.submitted < report.first_submission) {
      report.first_submission = task.submitted;
    }
    report.last_submission = std::max(report.last_submission, task.submitted);
    Outcome outcome;
    outcome.facts = &task;
    outcome.first_start = task.first_assigned;
    outcome.pool = task.first_assigned ? task.first_pool : task.submitted_pool;
    outcome.end = task.ended;
    outcome.preemptions = task.preemptions;
    actual.push_back(std::move(outcome));
  }
  if (actual.empty()) {
    std::string seen = "the log has no submission";
    if (!tasks_.empty()) {
      int64_t first = tasks_.begin()->second.submitted;
      int64_t last = first;
      for (const auto& [task_id, task] : tasks_) {
        first = std::min(first, task.submitted);
        last = std::max(last, task.submitted);
      }
      seen = "the log's " + std::to_string(tasks_.size()) + " submission(s) are from " +
             FormatRfc3339(first) + " to " + FormatRfc3339(last);
    }
    return Status::FailedPrecondition(
        "no task was submitted between " +
        (window_.from ? FormatRfc3339(*window_.from) : std::string("the log's start")) + " and " +
        (window_.until ? FormatRfc3339(*window_.until) : std::string("the log's end")) + " (" +
        seen + "); nothing to simulate");
  }
  report.recorded_pools = pools_at_first_submission_.value_or(current_pools_);

  // What happened: the log folded as it is, for the slots it kept busy.
  DecisionState recorded;
  SlotMeter recorded_meter;
  for (const Envelope& event : history_) {
    commands::Apply(recorded, event);
    if (ChangesSlots(event)) recorded_meter.Sample(event.time_unix_micros(), recorded);
  }
  for (const auto& [id, workspace] : recorded.tenancy.workspaces) {
    report.workspace_names[id] = workspace.name;
  }
  report.actual = Score(actual, recorded_meter, report.first_submission);

  Simulator simulator(config_, window_, tasks_, clock_);
  simulator.Run(history_);
  report.whatif = Score(simulator.Outcomes(), simulator.meter(), report.first_submission);
  return report;
}

}  // namespace cairn::replay
