// Commands, pool configurations and a writer-like driver that the write-side tests build again
// and again: plain values in, events out.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "commands/decider.h"
#include "commands/decision_snapshot.h"
#include "commands/decision_state.h"
#include "commands/scheduler/scheduler.h"
#include "events.pb.h"
#include "events/envelope_util.h"

namespace cairn::commands::testing {

// A one-slot `true` command with default priority and pool, forced into the queue so that it is
// accepted before any agent has joined.
inline SubmitTask OneSlotSubmit(const std::string& task_id) {
  SubmitTask submit;
  submit.task_id = task_id;
  submit.spec.add_entrypoint("true");
  submit.resources.set_slots(1);
  submit.force = true;
  return submit;
}

// What a submission asks for; every field left alone takes the decider's default.
struct Ask {
  std::string job{};  // "" = a job of its own
  int32_t slots = 1;
  events::TaskType type = events::TASK_TYPE_COMMAND;
  int32_t priority = 0;  // 0 = the pool's default
  double weight = 0;     // 0 = 1
  int32_t max_slots = 0;
  std::string pool{};  // "" = routed by the seeds' rules
  bool force = false;
};

inline SubmitTask Submission(const std::string& task_id, const Ask& ask) {
  SubmitTask submit;
  submit.task_id = task_id;
  submit.job_id = ask.job;
  submit.spec.set_task_type(ask.type);
  // A notebook's, shell's or TensorBoard's program is the agent's: it takes no entrypoint.
  if (!IsInteractiveTask(ask.type)) submit.spec.add_entrypoint("true");
  submit.resources.set_slots(ask.slots);
  submit.resources.set_priority(ask.priority);
  submit.resources.set_weight(ask.weight);
  submit.resources.set_max_slots(ask.max_slots);
  submit.resources.set_resource_pool(ask.pool);
  submit.force = ask.force;
  return submit;
}

struct PoolOptions {
  events::SchedulerType type = events::SCHEDULER_TYPE_FAIR_SHARE;
  events::FittingPolicy fitting = events::FITTING_POLICY_BEST;
  bool preemption = false;
  int32_t max_aux_containers_per_agent = kMaxZeroSlotContainersPerAgent;
};

inline events::ResourcePoolConfig Pool(const std::string& name, const PoolOptions& options = {}) {
  events::ResourcePoolConfig pool;
  pool.set_pool_name(name);
  pool.mutable_scheduler()->set_type(options.type);
  pool.mutable_scheduler()->set_fitting_policy(options.fitting);
  pool.mutable_scheduler()->set_preemption(options.preemption);
  pool.mutable_scheduler()->set_default_priority(kDefaultPriority);
  pool.set_max_aux_containers_per_agent(options.max_aux_containers_per_agent);
  return pool;
}

// The pools in order; the first is the default compute pool unless named otherwise.
inline ConfigurePools Pools(std::initializer_list<events::ResourcePoolConfig> pools,
                            std::string default_compute = "", std::string default_aux = "",
                            double preemption_grace_seconds = 3600) {
  ConfigurePools command;
  for (const auto& pool : pools) *command.config.add_pools() = pool;
  const std::string first = command.config.pools(0).pool_name();
  command.config.set_default_compute_pool(default_compute.empty() ? first : default_compute);
  command.config.set_default_aux_pool(default_aux.empty() ? first : default_aux);
  command.config.set_source("test");
  command.config.set_preemption_grace_seconds(preemption_grace_seconds);
  return command;
}

inline RegisterAgent Agent(const std::string& agent_id, int32_t slots,
                           const std::string& pool = kDefaultPool,
                           const std::string& incarnation = "i1") {
  events::AgentRegistered registration;
  registration.set_agent_id(agent_id);
  registration.set_incarnation(incarnation);
  registration.set_slot_count(slots);
  registration.set_resource_pool(pool);
  return RegisterAgent{registration};
}

inline ReportTaskExited Exit(const std::string& task_id, int32_t exit_code = 0,
                             const std::string& agent_id = "") {
  // Every test task gets allocations numbered from 1; callers of later allocations pass ids.
  return ReportTaskExited{"", task_id, agent_id, exit_code, std::nullopt, ""};
}

// Drives a DecisionState the way the writer does: a command's events are applied, then one
// scheduling pass runs at the command's time and its decisions are applied too.
class Cluster {
 public:
  // Commands run as user "test" unless Run names another actor; "test" is a cluster admin; "other"
  // is a plain user (an Editor of the Uncategorized workspace, as every user is). Seeded into the
  // state directly: the users' own events are tested apart (identity_test), and these keep every
  // offset as it was.
  Cluster() {
    for (const auto& user :
         {UserRecord{1, "test", "", true, true, ""}, UserRecord{2, "other", "", false, true, ""}}) {
      state.identity.users[user.id] = user;
      state.identity.user_ids[user.username] = user.id;
    }
    state.identity.last_user_id = 2;
  }

  // A user of the state (not of the log), as the constructor adds them; returns their id.
  int32_t AddUser(const std::string& username, bool admin = false) {
    const int32_t id = ++state.identity.last_user_id;
    state.identity.users[id] = UserRecord{id, username, "", admin, true, ""};
    state.identity.user_ids[username] = id;
    return id;
  }

  // Workspace 2 "team" (made by "test") and its people: alice an Editor, bob a Viewer, wanda its
  // WorkspaceAdmin. The tenancy and registry tests share them.
  struct Team {
    int32_t alice = 0, bob = 0, wanda = 0;
  };
  Result<Team> AddTeam() {
    Team team{AddUser("alice"), AddUser("bob"), AddUser("wanda")};
    CAIRN_RETURN_IF_ERROR(Run(CreateWorkspace{"team", "", ""}).status());
    CAIRN_RETURN_IF_ERROR(Run(ChangeRoles{{{team.alice, 2, events::ROLE_EDITOR},
                                           {team.bob, 2, events::ROLE_VIEWER},
                                           {team.wanda, 2, events::ROLE_WORKSPACE_ADMIN}},
                                          false})
                              .status());
    return team;
  }

  Result<Decision> Run(Command command, const std::string& idempotency_key = "",
                       const std::string& actor = "user:test") {
    // An exit report for the task's current allocation, so tests need not track allocation ids.
    if (auto* exited = std::get_if<ReportTaskExited>(&command);
        exited != nullptr && exited->allocation_id.empty()) {
      exited->allocation_id = state.tasks.at(exited->task_id).allocation_id;
    }
    RoundTripState();
    CommandMeta meta{actor, "req", idempotency_key, now};
    auto decision = Decide(state, command, meta);
    if (!decision.ok()) return decision;
    last_events.clear();
    for (const auto& event : decision->events) Append(event, idempotency_key);
    if (!decision->events.empty()) FollowUps();
    return decision;
  }

  // Decides several commands as one batch of the writer: their events, then one scheduling pass.
  Status RunBatch(const std::vector<Command>& commands) {
    RoundTripState();
    last_events.clear();
    for (const auto& command : commands) {
      auto decision = Decide(state, command, CommandMeta{"user:test", "req", "", now});
      if (!decision.ok()) return decision.status();
      for (const auto& event : decision->events) Append(event);
    }
    if (!last_events.empty()) FollowUps();
    return Status::Ok();
  }

  // In commands_snapshot_test, every command is decided against a state that went through a
  // decision snapshot (commands/decision_snapshot.h): a field a snapshot loses or rebuilds
  // differently fails the tests whose decisions depend on it.
  void RoundTripState() {
#ifdef CAIRN_ROUND_TRIP_DECISION_STATE
    auto decoded = DecodeDecisionState(EncodeDecisionState(state, {}));
    if (!decoded.ok()) {
      ADD_FAILURE() << "the decision snapshot does not decode: " << decoded.status().ToString();
      return;
    }
    state = std::move((*decoded)->state);
#endif
  }

  // What the writer decides after a batch: experiment reactions, then one scheduling pass.
  void FollowUps() {
    DecideFollowUps(state, now, [&](events::Envelope event, const char*) { Append(event, ""); });
  }

  // Applies an event as the writer would record it.
  void Append(events::Envelope event, const std::string& idempotency_key = "") {
    event.set_offset(state.next_offset);
    event.set_idempotency_key(idempotency_key);
    event.set_actor("user:test");
    event.set_time_unix_micros(now);
    if (event.writer_epoch() == 0) event.set_writer_epoch(state.writer_epoch);
    Apply(state, event);
    last_events.push_back(std::move(event));
    all_events.push_back(last_events.back());
  }

  const TaskRecord& Task(const std::string& task_id) const { return state.tasks.at(task_id); }

  // The last command's events (and its scheduling pass's) of one payload type.
  std::vector<events::Envelope> Last(events::Envelope::PayloadCase payload) const {
    std::vector<events::Envelope> found;
    for (const auto& event : last_events) {
      if (event.payload_case() == payload) found.push_back(event);
    }
    return found;
  }

  // Task ids of the last command's AllocationAssigned / PreemptionRequested events, in order.
  std::vector<std::string> Assigned() const {
    std::vector<std::string> ids;
    for (const auto& event : Last(events::Envelope::kAllocationAssigned)) {
      ids.push_back(event.allocation_assigned().task_id());
    }
    return ids;
  }
  std::vector<std::string> Preempted() const {
    std::vector<std::string> ids;
    for (const auto& event : Last(events::Envelope::kPreemptionRequested)) {
      ids.push_back(event.preemption_requested().task_id());
    }
    return ids;
  }

  // Tasks holding an allocation (in task-id order), optionally only those of one job.
  std::vector<std::string> Holding(const std::string& job_id = "") const {
    std::vector<std::string> ids;
    for (const auto& [task_id, task] : state.tasks) {
      if (task.holds_allocation() && (job_id.empty() || task.job_id() == job_id)) {
        ids.push_back(task.task_id);
      }
    }
    return ids;
  }
  // Tasks holding an allocation that no preemption or kill is taking away.
  std::vector<std::string> Keeping(const std::string& job_id = "") const {
    std::vector<std::string> ids;
    for (const auto& task_id : Holding(job_id)) {
      const TaskRecord& task = state.tasks.at(task_id);
      if (!task.preempting && !task.kill_requested) ids.push_back(task_id);
    }
    return ids;
  }

  DecisionState state;
  int64_t now = 1'000'000;
  std::vector<events::Envelope> last_events;
  std::vector<events::Envelope> all_events;
};

}  // namespace cairn::commands::testing
