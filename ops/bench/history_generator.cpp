#include "ops/bench/history_generator.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "commands/decider.h"
#include "commands/decision_state.h"
#include "commands/experiments/experiment_config.h"
#include "events/envelope_util.h"

namespace cairn::bench {
namespace {

using commands::Command;
using commands::CommandMeta;
using events::Envelope;

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kStartMicros = 1'767'225'600'000'000;  // 2026-01-01T00:00:00Z
constexpr int kSlotsPerAgent = 8;
constexpr int64_t kTick = 10 * kSecond;  // what one batch of the writer takes in
const char* const kPools[] = {"default", "a100", "cpu"};

constexpr const char* kGridConfig = R"(name: sweep
entrypoint: model_def:Trial
hyperparameters:
  lr:
    type: categorical
    vals: [0.1, 0.03, 0.01, 0.003]
searcher:
  name: grid
  metric: loss
  max_length: {batches: 300}
scheduling_unit: 100
max_restarts: 2
checkpoint_storage:
  type: shared_fs
  host_path: /var/cairn/checkpoints
  save_trial_latest: 1
  save_trial_best: 0
)";

// Something a simulated process or person does at a time: a command, valid only while the
// allocation it names is still the task's current one ("" = always).
struct Action {
  Command command;
  std::string actor;
  std::string allocation_id;
  std::string task_id;
};

class Simulation {
 public:
  Simulation(EventLog& log, const HistoryOptions& options)
      : log_(log), options_(options), random_(options.seed) {}

  Result<HistorySummary> Run() {
    CAIRN_ASSIGN_OR_RETURN(uint64_t end, log_.EndOffset());
    if (end != 0) return Status::FailedPrecondition("the log is not empty");
    CAIRN_RETURN_IF_ERROR(SetUp());
    summary_.first_time_unix_micros = now_;
    int64_t next_arrival = now_;
    int64_t next_churn = now_ + 600 * kSecond;
    while (state_.next_offset < options_.events) {
      // One batch of the writer: whatever happens within a tick, decided together, then one
      // round of follow-ups (a scheduling pass), as a master under this load would.
      const int64_t next_action = agenda_.empty() ? INT64_MAX : agenda_.begin()->first;
      now_ = std::max(now_, std::min({next_arrival, next_churn, next_action}));
      const int64_t tick_end = now_ + kTick;
      batch_start_ = pending_.size();
      while (!agenda_.empty() && agenda_.begin()->first < tick_end) {
        auto node = agenda_.extract(agenda_.begin());
        Perform(node.mapped());
      }
      while (next_arrival < tick_end) {
        Arrive();
        next_arrival += Exponential(arrival_mean_micros_);
      }
      if (next_churn < tick_end) {
        Churn();
        next_churn += Exponential(900 * kSecond);
      }
      EndBatch();
      now_ = tick_end;
      if (pending_.size() >= 4096) CAIRN_RETURN_IF_ERROR(Flush());
    }
    CAIRN_RETURN_IF_ERROR(Flush());
    summary_.events = state_.next_offset;
    summary_.last_time_unix_micros = now_;
    return summary_;
  }

 private:
  struct User {
    std::string name;
    int workspace = 0;
  };
  struct Agent {
    std::string id;
    int pool = 0;
    int incarnations = 0;
    bool connected = false;
  };

  int64_t Exponential(int64_t mean) {
    std::exponential_distribution<double> draw(1.0 / static_cast<double>(mean));
    return std::max<int64_t>(kSecond, static_cast<int64_t>(draw(random_)));
  }
  int Pick(int n) { return static_cast<int>(random_() % static_cast<uint64_t>(n)); }
  bool Chance(int percent) { return Pick(100) < percent; }

  std::string NextId(const char* kind) {
    char id[64];
    std::snprintf(id, sizeof id, "%s-%08" PRIx64 "-%04x", kind, ++ids_,
                  static_cast<unsigned>(random_() & 0xffff));
    return id;
  }

  Status SetUp() {
    CAIRN_ASSIGN_OR_RETURN(auto grid, experiments::ParseExperimentConfig(kGridConfig));
    grid_config_json_ = grid.effective.dump();
    now_ = kStartMicros;
    Decide(commands::ClaimWriterEpoch{"generator"}, "system:master");
    commands::ConfigurePools pools;
    for (int i = 0; i < 3; ++i) {
      auto* pool = pools.config.add_pools();
      pool->set_pool_name(kPools[i]);
      pool->mutable_scheduler()->set_type(i == 1 ? events::SCHEDULER_TYPE_PRIORITY
                                                 : events::SCHEDULER_TYPE_FAIR_SHARE);
      pool->mutable_scheduler()->set_preemption(i == 1);
      pool->mutable_scheduler()->set_default_priority(kDefaultPriority);
      pool->set_max_aux_containers_per_agent(i == 2 ? 32 : 0);
    }
    pools.config.set_default_compute_pool("default");
    pools.config.set_default_aux_pool("cpu");
    pools.config.set_source("history generator");
    pools.config.set_preemption_grace_seconds(30);
    Decide(pools, "system:master");
    EndBatch();
    for (int w = 0; w < options_.workspaces; ++w) {
      Decide(commands::CreateWorkspace{"team-" + std::to_string(w), "", ""}, "system:generator");
      const int32_t workspace_id = state_.tenancy.last_workspace_id;
      Decide(commands::CreateProject{workspace_id, "research", ""}, "system:generator");
      workspaces_.push_back({workspace_id, state_.tenancy.last_project_id});
    }
    for (int u = 0; u < options_.users; ++u) {
      const std::string name = "user" + std::to_string(u);
      // A hash no password matches: generated users never log in.
      Decide(commands::CreateUser{name, "", false, true, "generated:no-login"}, "system:generator");
      const int32_t user_id = state_.identity.last_user_id;
      const int workspace = u % options_.workspaces;
      Decide(commands::ChangeRoles{{{user_id, workspaces_[workspace].first, events::ROLE_EDITOR}},
                                   false},
             "system:generator");
      users_.push_back({name, workspace});
    }
    for (int pool = 0; pool < 3; ++pool) {
      for (int a = 0; a < options_.agents_per_pool; ++a) {
        const std::string agent = std::string(kPools[pool]) + "-node-" + std::to_string(a);
        agents_.push_back({agent, pool, 0, true});
        Register(agents_.size() - 1);
      }
    }
    EndBatch();
    // Busy but draining: an arrival asks for about 4,200 slot-seconds on average, and arrivals
    // come often enough to keep 80% of the slots busy, so queues form in bursts and drain.
    const int64_t slots = 3 * options_.agents_per_pool * kSlotsPerAgent;
    arrival_mean_micros_ = std::max<int64_t>(kSecond / 4, 4200 * kSecond * 10 / (slots * 8));
    return Status::Ok();
  }

  void Register(size_t index) {
    Agent& agent = agents_[index];
    events::AgentRegistered registration;
    registration.set_agent_id(agent.id);
    registration.set_incarnation(agent.id + "-i" + std::to_string(++agent.incarnations));
    registration.set_resource_pool(kPools[agent.pool]);
    registration.set_slot_count(kSlotsPerAgent);
    registration.set_hostname(agent.id + ".cluster.local");
    registration.set_version("0.9.0");
    for (int slot = 0; slot < kSlotsPerAgent; ++slot) {
      auto* device = registration.add_devices();
      device->set_id(slot);
      device->set_type("cuda");
      device->set_brand("NVIDIA A100-SXM4-80GB");
      device->set_uuid("GPU-" + agent.id + "-" + std::to_string(slot));
    }
    agent.connected = true;
    Decide(commands::RegisterAgent{registration}, "agent:" + agent.id);
  }

  // Agents leave (their work ends with them) and come back a while later as a new process.
  void Churn() {
    const size_t index = static_cast<size_t>(Pick(static_cast<int>(agents_.size())));
    Agent& agent = agents_[index];
    if (!agent.connected) return;
    agent.connected = false;
    ++summary_.agent_departures;
    Decide(commands::DisconnectAgent{agent.id, agent.id + "-i" + std::to_string(agent.incarnations),
                                     "heartbeats stopped"},
           "system:heartbeat-monitor");
    returns_.emplace(now_ + Exponential(1200 * kSecond), index);
  }

  void Arrive() {
    while (!returns_.empty() && returns_.begin()->first <= now_) {
      Register(returns_.begin()->second);
      returns_.erase(returns_.begin());
    }
    const User& user = users_[static_cast<size_t>(Pick(static_cast<int>(users_.size())))];
    if (Pick(options_.experiment_every) == 0) return SubmitExperiment(user);
    if (Chance(1)) {
      // A burst: one user floods the priority pool at a high priority, preempting others.
      for (int i = 0; i < 24; ++i) SubmitCommand(user, 1, 8, 5);
      return;
    }
    const int pool = Chance(50) ? 0 : Chance(60) ? 1 : 2;
    static const int kSlotChoices[] = {1, 1, 1, 2, 2, 4, 8};
    const int slots = pool == 2 ? 0 : kSlotChoices[Pick(7)];
    SubmitCommand(user, pool, slots, pool == 1 ? 30 + Pick(30) : 0);
  }

  void SubmitCommand(const User& user, int pool, int slots, int priority) {
    commands::SubmitTask submit;
    submit.task_id = NextId("task");
    submit.job_id = submit.task_id;
    submit.spec.set_task_type(events::TASK_TYPE_COMMAND);
    submit.spec.add_entrypoint("python3");
    submit.spec.add_entrypoint("train.py");
    submit.spec.add_entrypoint("--epochs=" + std::to_string(1 + Pick(90)));
    submit.spec.add_environment_variables("NCCL_DEBUG=WARN");
    submit.spec.set_user(user.name);
    submit.spec.set_description("sweep point of " + user.name);
    submit.spec.set_preemptible(pool == 1);
    submit.resources.set_slots(slots);
    submit.resources.set_resource_pool(kPools[pool]);
    submit.resources.set_priority(priority);
    submit.config_json =
        R"({"entrypoint":"python3 train.py","resources":{"slots":)" + std::to_string(slots) + "}}";
    submit.workspace_id = workspaces_[static_cast<size_t>(user.workspace)].first;
    durations_[submit.task_id] = Exponential(1800 * kSecond);
    if (Decide(std::move(submit), "user:" + user.name)) ++summary_.commands;
  }

  void SubmitExperiment(const User& user) {
    commands::CreateExperiment command;
    auto& created = command.created;
    created.set_name("sweep-" + user.name);
    created.set_owner(user.name);
    created.set_original_config(kGridConfig);
    created.set_config_json(grid_config_json_);
    created.set_seed(random_() & 0xffffffff);
    created.set_context_digest("sha256:" + std::string(64, 'a'));
    created.set_context_bytes(4096);
    created.set_activate(true);
    created.set_project_id(workspaces_[static_cast<size_t>(user.workspace)].second);
    created.mutable_resources()->set_resource_pool(Chance(50) ? "default" : "a100");
    created.mutable_resources()->set_weight(1);
    if (Decide(std::move(command), "user:" + user.name)) ++summary_.experiments;
  }

  void Perform(Action& action) {
    if (!action.allocation_id.empty()) {
      const commands::TaskRecord* task = state_.FindTask(action.task_id);
      if (task == nullptr || task->allocation_id != action.allocation_id ||
          !task->holds_allocation()) {
        return;  // the allocation ended meanwhile (a kill, its agent left)
      }
    }
    Decide(std::move(action.command), action.actor);
  }

  void Schedule(int64_t after, Command command, const std::string& agent_id,
                const std::string& allocation_id, const std::string& task_id) {
    agenda_.emplace(now_ + after,
                    Action{std::move(command), "agent:" + agent_id, allocation_id, task_id});
  }

  // Plays the agents and harnesses: reacts to what the master decided.
  void React(const Envelope& event) {
    if (event.has_allocation_assigned()) {
      const auto& assigned = event.allocation_assigned();
      const std::string& task_id = assigned.task_id();
      Schedule(2 * kSecond,
               commands::ReportTaskStarted{assigned.allocation_id(), task_id, assigned.agent_id(),
                                           10000 + Pick(50000)},
               assigned.agent_id(), assigned.allocation_id(), task_id);
      const commands::TaskRecord* task = state_.FindTask(task_id);
      if (task != nullptr && task->trial_id != 0) {
        commands::ReportWorkload hello;
        hello.allocation_id = assigned.allocation_id();
        Schedule(10 * kSecond, hello, assigned.agent_id(), assigned.allocation_id(), task_id);
        return;
      }
      auto duration = durations_.find(task_id);
      const int64_t runs_for = duration == durations_.end() ? 600 * kSecond : duration->second;
      commands::ReportTaskExited exited{assigned.allocation_id(), task_id,      assigned.agent_id(),
                                        Chance(4) ? 1 : 0,        std::nullopt, "exited"};
      Schedule(2 * kSecond + runs_for, exited, assigned.agent_id(), assigned.allocation_id(),
               task_id);
    } else if (event.has_kill_requested() && !event.kill_requested().allocation_id().empty()) {
      const auto& kill = event.kill_requested();
      if (!kill.by_user()) ++summary_.preemptions;
      commands::ReportTaskExited exited{
          kill.allocation_id(), kill.task_id(), kill.agent_id(), std::nullopt, 15, "terminated"};
      Schedule(3 * kSecond, exited, kill.agent_id(), kill.allocation_id(), kill.task_id());
    } else if (event.has_trial_workload_assigned()) {
      Answer(event.trial_workload_assigned());
    } else if (event.has_task_exited()) {
      durations_.erase(event.task_exited().task_id());
    }
  }

  // A trial's harness does what the master answered, taking simulated time for it.
  void Answer(const events::TrialWorkloadAssigned& answer) {
    const commands::TrialRecord* trial = state_.FindTrial(answer.trial_id());
    if (trial == nullptr || trial->task_id.empty()) return;
    const commands::TaskRecord* task = state_.FindTask(trial->task_id);
    if (task == nullptr || task->allocation_id != answer.allocation_id()) return;
    if (answer.kind() == events::WORKLOAD_KIND_EXIT) {
      Schedule(2 * kSecond,
               commands::ReportTaskExited{answer.allocation_id(), task->task_id, task->agent_id, 0,
                                          std::nullopt, "exited"},
               task->agent_id, answer.allocation_id(), task->task_id);
      return;
    }
    commands::ReportWorkload report;
    report.allocation_id = answer.allocation_id();
    report.sequence = answer.sequence() + 1;
    report.completed = answer.kind();
    int64_t takes = 30 * kSecond;
    if (answer.kind() == events::WORKLOAD_KIND_TRAIN) {
      report.batches = answer.batches();
      report.metrics_json = R"({"loss": )" + std::to_string(1.0 / (1 + answer.start_batch())) + "}";
      takes = Exponential(600 * kSecond);
    } else if (answer.kind() == events::WORKLOAD_KIND_VALIDATE) {
      report.metrics_json = R"({"loss": )" + std::to_string(0.5 + 0.001 * Pick(400)) + "}";
    } else if (answer.kind() == events::WORKLOAD_KIND_CHECKPOINT) {
      char uuid[40];
      std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012" PRIx64, ++checkpoints_);
      report.checkpoint.set_uuid(uuid);
      report.checkpoint.set_total_batches(trial->batches);
      report.checkpoint.set_size_bytes(64 << 20);
    }
    Schedule(takes, report, task->agent_id, answer.allocation_id(), task->task_id);
  }

  // Decides `command` as the writer does, against the state its batch left so far. Returns
  // whether it was accepted; refusals are part of life here.
  bool Decide(Command command, const std::string& actor) {
    CommandMeta meta{actor, NextId("req"), "", now_};
    auto decision = commands::Decide(state_, command, meta);
    if (!decision.ok()) return false;
    for (auto& event : decision->events) {
      Stamp(event, meta, "command:" + meta.correlation_id);
      last_cause_ = pending_.back().event_id();
    }
    return true;
  }

  // Ends a batch as the writer does: the follow-ups (experiment reactions, one scheduling pass),
  // then the simulated agents and harnesses react to everything the batch decided.
  void EndBatch() {
    if (pending_.size() != batch_start_ || !state_.dirty_experiments.empty()) {
      commands::DecideFollowUps(state_, now_, [&](Envelope event, const char* follow_actor) {
        Stamp(event, CommandMeta{follow_actor, "", "", now_}, last_cause_);
      });
    }
    for (size_t i = batch_start_; i < pending_.size(); ++i) React(pending_[i]);
  }

  void Stamp(Envelope& event, const CommandMeta& meta, const std::string& causation) {
    event.set_offset(state_.next_offset);
    char id[32];
    std::snprintf(id, sizeof id, "gen-%012" PRIu64, state_.next_offset);
    event.set_event_id(id);
    event.set_time_unix_micros(meta.time_unix_micros);
    event.set_actor(meta.actor);
    event.set_correlation_id(meta.correlation_id);
    event.set_causation_id(causation);
    event.set_writer_epoch(event.has_writer_epoch_claimed() ? event.writer_epoch_claimed().epoch()
                                                            : state_.writer_epoch);
    event.set_schema_version(kSchemaVersion);
    commands::Apply(state_, event);
    pending_.push_back(std::move(event));
  }

  Status Flush() {
    if (pending_.empty()) return Status::Ok();
    CAIRN_RETURN_IF_ERROR(log_.Append(pending_).status());
    pending_.clear();
    return Status::Ok();
  }

  EventLog& log_;
  const HistoryOptions options_;
  std::mt19937_64 random_;
  commands::DecisionState state_;
  int64_t now_ = 0;
  int64_t arrival_mean_micros_ = kSecond;
  uint64_t ids_ = 0;
  uint64_t checkpoints_ = 0;
  std::string grid_config_json_;
  std::vector<Envelope> pending_;  // decided, applied, not yet appended
  size_t batch_start_ = 0;         // pending_'s first event of the batch being decided
  std::string last_cause_;
  std::multimap<int64_t, Action> agenda_;
  std::multimap<int64_t, size_t> returns_;  // when a departed agent comes back
  std::map<std::string, int64_t> durations_;
  std::vector<std::pair<int32_t, int32_t>> workspaces_;  // (workspace id, its project)
  std::vector<User> users_;
  std::vector<Agent> agents_;
  HistorySummary summary_;
};

}  // namespace

Result<HistorySummary> GenerateHistory(EventLog& log, const HistoryOptions& options) {
  Simulation simulation(log, options);
  return simulation.Run();
}

}  // namespace cairn::bench
