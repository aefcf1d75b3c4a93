#include "commands/decider.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "base/encoding.h"
#include "commands/experiment_decider.h"
#include "commands/experiment_reactor.h"
#include "commands/pai/pai_decider.h"
#include "commands/queue_decider.h"
#include "commands/registry_decider.h"
#include "commands/scheduler/scheduler.h"
#include "commands/task_events.h"
#include "commands/tenancy_decider.h"
#include "events/envelope_util.h"

namespace cairn::commands {

const char* CommandName(const Command& command) {
  static const char* const kNames[] = {
      "SubmitTask",           "KillTask",           "RegisterAgent",      "DisconnectAgent",
      "EnableAgent",          "DisableAgent",       "ReportTaskStarted",  "ReportTaskExited",
      "ClaimWriterEpoch",     "ConfigurePools",     "UpdateJob",          "ExpirePreemptions",
      "CreateExperiment",     "ExperimentAction",   "ReportWorkload",     "SaveTemplate",
      "DeleteTemplate",       "CreateUser",         "UpdateUser",         "StartSession",
      "EndSession",           "RecordLoginFailure", "RecordAccessDenied", "CreateWorkspace",
      "UpdateWorkspace",      "DeleteWorkspace",    "PinWorkspace",       "CreateProject",
      "UpdateProject",        "DeleteProject",      "MoveExperiment",     "ChangeRoles",
      "SetPoolBindings",      "UpdateExperiment",   "KillTrial",          "ContinueExperiment",
      "DeleteCheckpoints",    "CreateModel",        "UpdateModel",        "DeleteModel",
      "RegisterModelVersion", "UpdateModelVersion", "DeleteModelVersion", "ReportTaskReady",
      "SubmitPaiJob",         "StopPaiJob"};
  static_assert(std::size(kNames) == std::variant_size_v<Command>);
  return kNames[command.index()];
}

namespace {

// An identity decision as a Decision: its entity is the user it is about.
Result<Decision> IdentityDecision(Result<std::vector<events::Envelope>> events,
                                  std::string entity_id = "") {
  if (!events.ok()) return events.status();
  if (entity_id.empty() && !events->empty()) entity_id = EntityIdOf(events->front());
  return Decision{std::move(*events), std::move(entity_id)};
}

}  // namespace

bool IsSafeId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

events::Envelope KillOrderFor(const TaskRecord& task, const std::string& reason, KillBy by) {
  events::Envelope event;
  auto* kill = event.mutable_kill_requested();
  kill->set_task_id(task.task_id);
  kill->set_allocation_id(task.allocation_id);
  kill->set_agent_id(task.agent_id);
  kill->set_agent_incarnation(task.where().agent_incarnation);
  if (task.where().parts.size() > 1) {
    for (const auto& part : task.where().parts) *kill->add_parts() = part;
  }
  kill->set_reason(reason);
  kill->set_by_user(by == KillBy::kUser);
  return event;
}

events::Envelope ExitOf(const TaskRecord& task, const std::string& reason) {
  events::Envelope event;
  auto* exited = event.mutable_task_exited();
  exited->set_task_id(task.task_id);
  exited->set_allocation_id(task.allocation_id);
  exited->set_agent_id(task.agent_id);
  exited->set_reason(reason);
  return event;
}

std::vector<events::Envelope> KillEventsFor(const TaskRecord& task, const std::string& reason,
                                            KillBy by) {
  switch (task.state) {
    case TaskState::kQueued:
      // Nothing runs yet: the kill and the end are decided together.
      return {KillOrderFor(task, reason, by),
              ExitOf(task, "killed before it was scheduled (" + reason + ")")};
    case TaskState::kAssigned:
    case TaskState::kRunning:
      return {KillOrderFor(task, reason, by)};
    case TaskState::kTerminating:
    case TaskState::kExited:
      return {};
  }
  return {};
}

namespace {

constexpr int32_t kMaxSlotsPerTask = 4096;
constexpr int32_t kMaxSlotsPerAgent = 4096;

Result<Decision> DecideSubmit(const DecisionState& state, const SubmitTask& submit) {
  if (!IsSafeId(submit.task_id))
    return Status::InvalidArgument("bad task id '" + submit.task_id + "'");
  if (state.tasks.count(submit.task_id)) {
    return Status::AlreadyExists("task " + submit.task_id + " already exists");
  }
  // A notebook's, shell's or TensorBoard's program is the agent's to choose, never the user's.
  if (IsInteractiveTask(submit.spec.task_type())) {
    if (submit.spec.entrypoint_size() != 0) {
      return Status::InvalidArgument("a notebook, shell or TensorBoard takes no entrypoint");
    }
  } else if (submit.spec.entrypoint_size() == 0 || submit.spec.entrypoint(0).empty()) {
    return Status::InvalidArgument("config.entrypoint must name a program to run");
  }
  const auto& resources = submit.resources;
  if (resources.slots() < 0 || resources.slots() > kMaxSlotsPerTask) {
    return Status::InvalidArgument("config.resources.slots must be between 0 and " +
                                   std::to_string(kMaxSlotsPerTask));
  }
  if (resources.priority() != 0 && (resources.priority() < 1 || resources.priority() > 99)) {
    return Status::InvalidArgument("config.resources.priority must be between 1 and 99");
  }
  if (!(resources.weight() >= 0) || !std::isfinite(resources.weight())) {
    return Status::InvalidArgument("config.resources.weight must be positive");
  }
  if (resources.max_slots() < 0) {
    return Status::InvalidArgument("config.resources.max_slots must not be negative");
  }
  events::Envelope event;
  auto* submitted = event.mutable_task_submitted();
  submitted->set_task_id(submit.task_id);
  submitted->set_job_id(submit.job_id.empty() ? submit.task_id : submit.job_id);
  if (!IsSafeId(submitted->job_id())) {
    return Status::InvalidArgument("bad job id '" + submitted->job_id() + "'");
  }
  *submitted->mutable_spec() = submit.spec;
  *submitted->mutable_resources() = resources;
  auto* resolved = submitted->mutable_resources();
  const JobRecord* job = state.FindJob(submitted->job_id());
  if (job != nullptr) {
    // A job's later tasks (an experiment's trials) run where, and as, the job does now.
    if (!resources.resource_pool().empty() && resources.resource_pool() != job->resource_pool) {
      return Status::InvalidArgument("job " + job->job_id + " runs in resource pool " +
                                     job->resource_pool + "; its tasks cannot ask for " +
                                     resources.resource_pool());
    }
    resolved->set_resource_pool(job->resource_pool);
    resolved->set_priority(job->priority);
    resolved->set_weight(job->weight);
    resolved->set_max_slots(job->max_slots);
  } else {
    CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, submit.workspace_id));
    CAIRN_ASSIGN_OR_RETURN(
        std::string pool,
        ResolveWorkspacePool(state, submit.workspace_id, resolved->resource_pool(),
                             IsAuxTask(submit.spec, resources.slots())));
    resolved->set_resource_pool(pool);
  }
  const events::ResourcePoolConfig* pool = state.FindPool(resolved->resource_pool());
  if (pool == nullptr) return NoSuchPool(state, resolved->resource_pool());
  if (resolved->priority() == 0) {
    int32_t pool_default = pool->scheduler().default_priority();
    resolved->set_priority(pool_default > 0 ? pool_default : kDefaultPriority);
  }
  if (resolved->weight() == 0) resolved->set_weight(1);
  if (!submit.force) {
    CAIRN_RETURN_IF_ERROR(CheckCanEverFit(state, resolved->resource_pool(), resources.slots()));
  }
  submitted->set_config_json(submit.config_json);
  submitted->set_workspace_id(job != nullptr ? job->workspace_id : submit.workspace_id);
  return Decision{{std::move(event)}, submit.task_id};
}

Result<Decision> DecideKill(const DecisionState& state, const KillTask& kill) {
  const TaskRecord* task = state.FindTask(kill.task_id);
  if (!task) return Status::NotFound("task " + kill.task_id + " not found");
  std::string reason = kill.reason.empty() ? "kill requested" : kill.reason;
  return Decision{KillEventsFor(*task, reason, KillBy::kUser), task->task_id};
}

Result<Decision> DecideRegister(const DecisionState& state, const RegisterAgent& command) {
  const auto& registration = command.registration;
  if (!IsSafeId(registration.agent_id())) {
    return Status::InvalidArgument("bad agent id '" + registration.agent_id() +
                                   "' (letters, digits, '-', '_', '.'; at most 128)");
  }
  if (registration.incarnation().empty()) return Status::InvalidArgument("incarnation is required");
  if (registration.slot_count() < 0 || registration.slot_count() > kMaxSlotsPerAgent) {
    return Status::InvalidArgument("slots must be between 0 and " +
                                   std::to_string(kMaxSlotsPerAgent));
  }
  if (!registration.resource_pool().empty() && !IsSafeId(registration.resource_pool())) {
    return Status::InvalidArgument("bad resource pool name '" + registration.resource_pool() + "'");
  }
  const std::string pool_name =
      registration.resource_pool().empty() ? kDefaultPool : registration.resource_pool();
  if (state.FindPool(pool_name) == nullptr) {
    return Status::InvalidArgument("resource pool " + pool_name +
                                   " is not configured on this master (configured pools: " +
                                   PoolNames(state) + "); start the agent with --pool NAME");
  }
  Decision decision;
  decision.entity_id = registration.agent_id();
  events::Envelope event;
  *event.mutable_agent_registered() = registration;
  auto* registered = event.mutable_agent_registered();
  if (registered->resource_pool().empty()) registered->set_resource_pool(kDefaultPool);
  registered->set_reconnect(false);
  registered->set_reason("first registration");

  const AgentRecord* known = state.FindAgent(registration.agent_id());
  if (known && known->incarnation == registration.incarnation()) {
    bool unchanged = known->connected && known->slot_count == registered->slot_count() &&
                     known->resource_pool == registered->resource_pool();
    if (unchanged) return decision;
    if (known->resource_pool != registered->resource_pool() && !known->allocations.empty()) {
      return Status::FailedPrecondition("agent " + known->agent_id +
                                        " cannot change resource pool while it runs tasks");
    }
    // The same process cannot lose slots its tasks run on (found by the slot property test).
    if (known->slot_count != registered->slot_count() && !known->allocations.empty()) {
      return Status::FailedPrecondition(
          "agent " + known->agent_id + " cannot change its slot count (" +
          std::to_string(known->slot_count) + " to " + std::to_string(registered->slot_count()) +
          ") while it runs tasks; a new process registers with a new incarnation");
    }
    registered->set_reconnect(true);
    registered->set_reason("reconnected with the same incarnation");
  } else if (known) {
    registered->set_reason("a new process (incarnation " + registration.incarnation() +
                           ") replaced incarnation " + known->incarnation + "; its " +
                           std::to_string(known->allocations.size()) +
                           " running allocation(s) ended with it");
    // A new process replaced the old one: its tasks are gone with it.
    for (const auto& allocation_id : known->allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      decision.events.push_back(
          ExitOf(task, "agent " + known->agent_id + " restarted; the task was lost"));
    }
  }
  decision.events.push_back(std::move(event));
  return decision;
}

// The task of an allocation an agent reports on, when the report is about its current
// allocation on that agent.
Result<const TaskRecord*> ReportedTask(const DecisionState& state, const std::string& allocation_id,
                                       const std::string& task_id, const std::string& agent_id) {
  CAIRN_ASSIGN_OR_RETURN(const TaskRecord* allocation, state.AllocationNamed(allocation_id));
  const TaskRecord& task = *allocation;
  if (!task_id.empty() && task_id != task.task_id) {
    return Status::InvalidArgument("allocation " + allocation_id + " belongs to task " +
                                   task.task_id);
  }
  if (task.allocation_id != allocation_id || task.state == TaskState::kExited) {
    return Status::FailedPrecondition("allocation " + allocation_id + " already ended");
  }
  if (!agent_id.empty() && agent_id != task.agent_id) {
    return Status::FailedPrecondition("allocation " + allocation_id + " is assigned to agent " +
                                      task.agent_id);
  }
  return &task;
}

Result<Decision> DecideReady(const DecisionState& state, const ReportTaskReady& report) {
  CAIRN_ASSIGN_OR_RETURN(const TaskRecord* task, ReportedTask(state, report.allocation_id,
                                                              report.task_id, report.agent_id));
  if (!IsInteractiveTask(task->task_type)) {
    return Status::InvalidArgument("task " + task->task_id +
                                   " is not a notebook, shell or TensorBoard: it has no service");
  }
  if (report.service_host.empty() || report.service_port <= 0 || report.service_port > 65535) {
    return Status::InvalidArgument("a ready report needs the service's host and port (1-65535)");
  }
  if (!task->started) {
    return Status::FailedPrecondition("allocation " + report.allocation_id + " has not started");
  }
  if (task->ready) return NoChange(task->task_id);
  events::Envelope event;
  auto* ready = event.mutable_task_ready();
  ready->set_task_id(task->task_id);
  ready->set_allocation_id(task->allocation_id);
  ready->set_agent_id(task->agent_id);
  ready->set_service_host(report.service_host);
  ready->set_service_port(report.service_port);
  ready->set_service_user(report.service_user);
  return Decision{{std::move(event)}, task->task_id};
}

Result<Decision> DecideStarted(const DecisionState& state, const ReportTaskStarted& report) {
  CAIRN_ASSIGN_OR_RETURN(const TaskRecord* reported, ReportedTask(state, report.allocation_id,
                                                                  report.task_id, report.agent_id));
  const TaskRecord& task = *reported;
  if (task.started) return NoChange(task.task_id);
  events::Envelope event;
  auto* started = event.mutable_task_started();
  started->set_task_id(task.task_id);
  started->set_allocation_id(task.allocation_id);
  started->set_agent_id(task.agent_id);
  started->set_pid(report.pid);
  return Decision{{std::move(event)}, task.task_id};
}

std::string DescribeExit(const ReportTaskExited& report, bool kill_requested) {
  std::string text;
  if (report.signal) {
    const char* name = sigabbrev_np(*report.signal);
    text = "killed by signal " + std::to_string(*report.signal) +
           (name ? " (SIG" + std::string(name) + ")" : "");
  } else if (report.exit_code) {
    text = "exited with code " + std::to_string(*report.exit_code);
  } else {
    text = "ended";
  }
  if (kill_requested) text += " after a kill request";
  if (!report.reason.empty()) text += ": " + report.reason;
  return text;
}

Result<Decision> DecideExited(const DecisionState& state, const ReportTaskExited& report) {
  CAIRN_ASSIGN_OR_RETURN(const TaskRecord* allocation, state.AllocationNamed(report.allocation_id));
  const TaskRecord& task = *allocation;
  if (task.allocation_id != report.allocation_id) {
    return Status::FailedPrecondition("allocation " + report.allocation_id + " is stale");
  }
  if (task.state == TaskState::kExited || task.state == TaskState::kQueued) {
    return NoChange(task.task_id);
  }
  if (report.exit_code && report.signal) {
    return Status::InvalidArgument("an exit has an exit code or a signal, not both");
  }
  const bool failed = (report.exit_code && *report.exit_code != 0) || report.signal;
  if (task.where().parts.size() <= 1 && !report.agent_id.empty() &&
      report.agent_id != task.agent_id) {
    // Only the agent running it knows whether the process ended.
    return Status::FailedPrecondition("allocation " + report.allocation_id +
                                      " is assigned to agent " + task.agent_id + ", not " +
                                      report.agent_id);
  }
  if (task.where().parts.size() > 1) {
    // One part of a gang: the allocation ends with its last part; a failed part takes the
    // others down with it.
    const std::string& agent_id = report.agent_id.empty() ? task.agent_id : report.agent_id;
    bool known = false;
    size_t running = 0;
    for (const auto& part : task.where().parts) {
      known |= part.agent_id() == agent_id;
      running += !task.where().parts_exited.count(part.agent_id()) && part.agent_id() != agent_id;
    }
    if (!known) {
      return Status::FailedPrecondition("allocation " + report.allocation_id +
                                        " has no part on agent " + agent_id);
    }
    if (task.where().parts_exited.count(agent_id)) return NoChange(task.task_id);
    if (running > 0) {
      Decision decision{{}, task.task_id};
      events::Envelope event;
      auto* part_exited = event.mutable_allocation_part_exited();
      part_exited->set_task_id(task.task_id);
      part_exited->set_allocation_id(task.allocation_id);
      part_exited->set_agent_id(agent_id);
      if (report.exit_code) part_exited->set_exit_code(*report.exit_code);
      if (report.signal) part_exited->set_signal(*report.signal);
      decision.events.push_back(std::move(event));
      if (failed && !task.kill_requested) {
        events::Envelope kill =
            KillOrderFor(task, "the part on agent " + agent_id + " " + DescribeExit(report, false));
        // A gang being preempted stays preempted: it goes back to the queue, not to its end.
        kill.mutable_kill_requested()->set_preemption_expired(task.preempting);
        decision.events.push_back(std::move(kill));
      }
      return decision;
    }
  }
  if (task.preempting) {
    events::Envelope event;
    auto* released = event.mutable_allocation_released();
    released->set_task_id(task.task_id);
    released->set_allocation_id(task.allocation_id);
    if (report.exit_code) released->set_exit_code(*report.exit_code);
    if (report.signal) released->set_signal(*report.signal);
    released->set_reason("preempted; " + DescribeExit(report, task.kill_requested) +
                         "; back in the queue at its old position");
    return Decision{{std::move(event)}, task.task_id};
  }
  events::Envelope event = ExitOf(task, DescribeExit(report, task.kill_requested));
  if (report.exit_code) event.mutable_task_exited()->set_exit_code(*report.exit_code);
  if (report.signal) event.mutable_task_exited()->set_signal(*report.signal);
  return Decision{{std::move(event)}, task.task_id};
}

Result<Decision> DecideDisconnect(const DecisionState& state, const DisconnectAgent& command) {
  const AgentRecord* agent = state.FindAgent(command.agent_id);
  if (!agent) return Status::NotFound("agent " + command.agent_id + " not found");
  if (!agent->connected || agent->incarnation != command.incarnation) {
    return NoChange(agent->agent_id);
  }
  events::Envelope event;
  auto* disconnected = event.mutable_agent_disconnected();
  disconnected->set_agent_id(agent->agent_id);
  disconnected->set_incarnation(agent->incarnation);
  disconnected->set_reason(command.reason);
  return Decision{{std::move(event)}, agent->agent_id};
}

Result<Decision> DecideEnable(const DecisionState& state, const EnableAgent& command) {
  const AgentRecord* agent = state.FindAgent(command.agent_id);
  if (!agent) return Status::NotFound("agent " + command.agent_id + " not found");
  if (agent->enabled && !agent->draining) return NoChange(agent->agent_id);
  events::Envelope event;
  event.mutable_agent_enabled()->set_agent_id(agent->agent_id);
  return Decision{{std::move(event)}, agent->agent_id};
}

Result<Decision> DecideDisable(const DecisionState& state, const DisableAgent& command) {
  const AgentRecord* agent = state.FindAgent(command.agent_id);
  if (!agent) return Status::NotFound("agent " + command.agent_id + " not found");
  if (!agent->enabled && agent->draining == command.drain) return NoChange(agent->agent_id);
  Decision decision;
  decision.entity_id = agent->agent_id;
  events::Envelope event;
  event.mutable_agent_disabled()->set_agent_id(agent->agent_id);
  event.mutable_agent_disabled()->set_drain(command.drain);
  decision.events.push_back(std::move(event));
  if (!command.drain) {
    for (const auto& allocation_id : agent->allocations) {
      const TaskRecord& task = state.TaskOfLiveAllocation(allocation_id);
      if (!task.kill_requested) {
        decision.events.push_back(KillOrderFor(task, "agent " + agent->agent_id + " disabled"));
      }
    }
  }
  return decision;
}

}  // namespace

bool IsAuxTask(const events::TaskSpec& spec, int32_t slots) {
  return spec.task_type() == events::TASK_TYPE_TENSORBOARD ||
         (slots == 0 && spec.task_type() != events::TASK_TYPE_TRIAL);
}

Result<Decision> Decide(const DecisionState& state, const Command& command,
                        const CommandMeta& meta) {
  if (!meta.idempotency_key.empty()) {
    auto seen = state.idempotency.find(meta.idempotency_key);
    // A key older than the window is new again (its entry is dropped with the next event).
    if (seen != state.idempotency.end() &&
        meta.time_unix_micros - seen->second.time_unix_micros <= kIdempotencyWindowMicros) {
      // A retry is the same request from the same caller; anything else reusing the key is a
      // mistake that must not be answered with someone else's result.
      const char* first_event = std::holds_alternative<SubmitTask>(command) ? "TaskSubmitted"
                                : std::holds_alternative<KillTask>(command) ? "KillRequested"
                                : std::holds_alternative<CreateExperiment>(command)
                                    ? "ExperimentCreated"
                                    : nullptr;
      const bool other_request = !seen->second.request_fingerprint.empty() &&
                                 !meta.request_fingerprint.empty() &&
                                 seen->second.request_fingerprint != meta.request_fingerprint;
      if (seen->second.actor != meta.actor || other_request ||
          (first_event != nullptr && seen->second.command != first_event)) {
        return Status::AlreadyExists("idempotency key " + meta.idempotency_key +
                                     " was already used for a different request");
      }
      return NoChange(seen->second.entity_id);
    }
  }
  CAIRN_RETURN_IF_ERROR(AuthorizeCommand(state, command, meta));
  return std::visit(
      [&](const auto& c) -> Result<Decision> {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, SubmitTask>) {
          return DecideSubmit(state, c);
        } else if constexpr (std::is_same_v<T, KillTask>) {
          return DecideKill(state, c);
        } else if constexpr (std::is_same_v<T, RegisterAgent>) {
          return DecideRegister(state, c);
        } else if constexpr (std::is_same_v<T, DisconnectAgent>) {
          return DecideDisconnect(state, c);
        } else if constexpr (std::is_same_v<T, EnableAgent>) {
          return DecideEnable(state, c);
        } else if constexpr (std::is_same_v<T, DisableAgent>) {
          return DecideDisable(state, c);
        } else if constexpr (std::is_same_v<T, ReportTaskStarted>) {
          return DecideStarted(state, c);
        } else if constexpr (std::is_same_v<T, ReportTaskReady>) {
          return DecideReady(state, c);
        } else if constexpr (std::is_same_v<T, ReportTaskExited>) {
          return DecideExited(state, c);
        } else if constexpr (std::is_same_v<T, ConfigurePools>) {
          return DecideConfigurePools(state, c);
        } else if constexpr (std::is_same_v<T, UpdateJob>) {
          return DecideUpdateJob(state, c);
        } else if constexpr (std::is_same_v<T, ExpirePreemptions>) {
          return DecideExpirePreemptions(state, meta.time_unix_micros);
        } else if constexpr (std::is_same_v<T, CreateExperiment>) {
          return DecideCreateExperiment(state, c, meta);
        } else if constexpr (std::is_same_v<T, ExperimentAction>) {
          return DecideExperimentAction(state, c);
        } else if constexpr (std::is_same_v<T, ReportWorkload>) {
          return DecideReportWorkload(state, c);
        } else if constexpr (std::is_same_v<T, SaveTemplate>) {
          return DecideSaveTemplate(state, c);
        } else if constexpr (std::is_same_v<T, DeleteTemplate>) {
          return DecideDeleteTemplate(state, c);
        } else if constexpr (std::is_same_v<T, CreateUser>) {
          return IdentityDecision(DecideCreateUser(state.identity, c));
        } else if constexpr (std::is_same_v<T, UpdateUser>) {
          return IdentityDecision(DecideUpdateUser(state.identity, c),
                                  "user/" + std::to_string(c.user_id));
        } else if constexpr (std::is_same_v<T, StartSession>) {
          return IdentityDecision(DecideStartSession(state.identity, c, meta.time_unix_micros),
                                  "user/" + std::to_string(c.user_id));
        } else if constexpr (std::is_same_v<T, EndSession>) {
          return IdentityDecision(DecideEndSession(state.identity, c));
        } else if constexpr (std::is_same_v<T, RecordLoginFailure>) {
          return IdentityDecision(DecideRecordLoginFailure(c));
        } else if constexpr (std::is_same_v<T, RecordAccessDenied>) {
          return IdentityDecision(DecideRecordAccessDenied(c));
        } else if constexpr (std::is_same_v<T, CreateWorkspace>) {
          return DecideCreateWorkspace(state, c, ActingUser(state, meta));
        } else if constexpr (std::is_same_v<T, UpdateWorkspace>) {
          return DecideUpdateWorkspace(state, c);
        } else if constexpr (std::is_same_v<T, DeleteWorkspace>) {
          return DecideDeleteWorkspace(state, c);
        } else if constexpr (std::is_same_v<T, PinWorkspace>) {
          return DecidePinWorkspace(state, c, ActingUser(state, meta));
        } else if constexpr (std::is_same_v<T, CreateProject>) {
          return DecideCreateProject(state, c, ActingUser(state, meta));
        } else if constexpr (std::is_same_v<T, UpdateProject>) {
          return DecideUpdateProject(state, c);
        } else if constexpr (std::is_same_v<T, DeleteProject>) {
          return DecideDeleteProject(state, c);
        } else if constexpr (std::is_same_v<T, MoveExperiment>) {
          return DecideMoveExperiment(state, c);
        } else if constexpr (std::is_same_v<T, ChangeRoles>) {
          return DecideChangeRoles(state, c);
        } else if constexpr (std::is_same_v<T, SetPoolBindings>) {
          return DecideSetPoolBindings(state, c);
        } else if constexpr (std::is_same_v<T, UpdateExperiment>) {
          return DecideUpdateExperiment(state, c);
        } else if constexpr (std::is_same_v<T, KillTrial>) {
          return DecideKillTrial(state, c);
        } else if constexpr (std::is_same_v<T, ContinueExperiment>) {
          return DecideContinueExperiment(state, c);
        } else if constexpr (std::is_same_v<T, DeleteCheckpoints>) {
          return DecideDeleteCheckpoints(state, c);
        } else if constexpr (std::is_same_v<T, SubmitPaiJob>) {
          return DecideSubmitPaiJob(state, c);
        } else if constexpr (std::is_same_v<T, StopPaiJob>) {
          return DecideStopPaiJob(state, c);
        } else if constexpr (IsRegistryCommand<T>) {
          return DecideRegistryCommand(state, c, ActingUser(state, meta));
        } else {
          events::Envelope event;
          event.mutable_writer_epoch_claimed()->set_epoch(state.writer_epoch + 1);
          event.mutable_writer_epoch_claimed()->set_master_id(c.master_id);
          return Decision{{std::move(event)}, c.master_id};
        }
      },
      command);
}

void DecideFollowUps(DecisionState& state, int64_t now,
                     const std::function<void(events::Envelope event, const char* actor)>& record) {
  bool settled = false;
  for (int round = 0; round < kMaxReactorRounds && !settled; ++round) {
    auto reactions = ReactToExperiments(state);
    settled = reactions.empty();
    for (auto& event : reactions) record(std::move(event), "system:experiments");
  }
  // Unsettled experiments stay dirty: the next batch goes on where this one stopped.
  if (settled) state.dirty_experiments.clear();
  // OpenPAI jobs: kills of what an attempt's end leaves running, the end itself, retries. One
  // round reacts to everything the batch did; a second sees the kills of queued tasks end.
  settled = false;
  for (int round = 0; round < kMaxReactorRounds && !settled; ++round) {
    auto reactions = ReactToPaiJobs(state);
    settled = reactions.empty();
    for (auto& event : reactions) record(std::move(event), "system:openpai");
  }
  if (settled) state.dirty_pai_jobs.clear();
  for (auto& event : Schedule(state, now).decisions) record(std::move(event), "system:scheduler");
}

}  // namespace cairn::commands
