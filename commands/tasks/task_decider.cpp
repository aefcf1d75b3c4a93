#include "commands/tasks/task_decider.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/yaml_json.h"
#include "commands/policies/config_policies.h"
#include "commands/scheduler/scheduler.h"
#include "commands/tasks/command_config.h"
#include "commands/tasks/generic_tasks.h"
#include "commands/tasks/task_container_defaults.h"
#include "commands/tasks/task_events.h"
#include "commands/templates/template_decider.h"
#include "commands/tenancy/tenancy_decider.h"
#include "events/envelope_util.h"
#include "events/limits.h"

namespace cairn::commands {

namespace {

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

// "TensorBoard (Experiments 1, 2; Trials 7)": what a TensorBoard with the default description
// shows, as Determined names it.
std::string TensorBoardDescription(const std::vector<int64_t>& experiment_ids,
                                   const std::vector<int64_t>& trial_ids) {
  auto joined = [](const std::vector<int64_t>& ids) {
    std::string text;
    for (int64_t id : ids) text += (text.empty() ? "" : ", ") + std::to_string(id);
    return text;
  };
  std::string description = "TensorBoard (";
  if (!experiment_ids.empty()) description += "Experiments " + joined(experiment_ids);
  if (!trial_ids.empty()) {
    description +=
        (experiment_ids.empty() ? "" : "; ") + std::string("Trials ") + joined(trial_ids);
  }
  return description + ")";
}

// The submission `submit.request` configures: its configuration merged under its template (as
// the state holds the template now) and read as Determined's CLI sends it, over the spec the edge
// filled.
Result<SubmitTask> ReadRequest(const DecisionState& state, const SubmitTask& submit,
                               const CommandMeta& meta) {
  const SubmitTask::Request& request = *submit.request;
  nlohmann::json config = nlohmann::json::parse(request.config_json, nullptr, false);
  if (config.is_discarded()) return Status::InvalidArgument("config: not JSON");
  if (!request.template_name.empty()) {
    if (!config.is_object()) return Status::InvalidArgument("config: must be a map");
    CAIRN_ASSIGN_OR_RETURN(std::string merged, ConfigWithTemplate(state, request.template_name,
                                                                  JsonToYamlText(config), meta));
    CAIRN_ASSIGN_OR_RETURN(nlohmann::ordered_json merged_json, YamlTextToJson(merged, "config"));
    config = nlohmann::json::parse(merged_json.dump());
  }
  const bool policed = !state.tenancy.config_policies.empty();
  if (policed) {
    if (!config.is_object()) return Status::InvalidArgument("config: must be a map");
    CAIRN_ASSIGN_OR_RETURN(nlohmann::ordered_json policed_config,
                           WithInvariantConfigs(state.tenancy, submit.workspace_id, kNtscWorkload,
                                                nlohmann::ordered_json::parse(config.dump())));
    config = nlohmann::json::parse(policed_config.dump());
  }
  const events::TaskType type = submit.spec.task_type();
  CAIRN_ASSIGN_OR_RETURN(CommandConfig read, ParseTaskConfig(config, type));
  if (policed) {
    const auto& asked = read.resources;
    Status allowed = CheckConstraints(
        state.tenancy, submit.workspace_id, kNtscWorkload,
        {asked.slots(),
         asked.max_slots() > 0 ? std::optional<int32_t>(asked.max_slots()) : std::nullopt,
         asked.priority() != 0 ? std::optional<int32_t>(asked.priority()) : std::nullopt});
    if (!allowed.ok()) {
      return Status::InvalidArgument("failed constraint check: " + allowed.message());
    }
  }
  SubmitTask configured = submit;
  configured.request.reset();
  configured.spec = std::move(read.spec);
  configured.spec.MergeFrom(submit.spec);
  configured.resources = std::move(read.resources);
  if (type == events::TASK_TYPE_TENSORBOARD) {
    read.effective["experimentIds"] = request.experiment_ids;
    read.effective["trialIds"] = request.trial_ids;
    if (configured.spec.description() == KindName(events::TASK_TYPE_TENSORBOARD)) {
      configured.spec.set_description(
          TensorBoardDescription(request.experiment_ids, request.trial_ids));
    }
  }
  // A generic task shows its config as given (Determined keeps no defaults in it).
  configured.config_json =
      type == events::TASK_TYPE_GENERIC ? config.dump() : read.effective.dump();
  return configured;
}

}  // namespace

bool IsAuxTask(const events::TaskSpec& spec, int32_t slots) {
  return spec.task_type() == events::TASK_TYPE_TENSORBOARD ||
         (slots == 0 && spec.task_type() != events::TASK_TYPE_TRIAL);
}

namespace {

// Bind mounts (det cmd run --volume) are applied by container agents only; a task that asks for
// them in a pool of process agents is refused now rather than run without its mounts. A pool
// with no agents yet is given the benefit of the doubt (the agent refuses what it cannot apply).

}  // namespace

Status CheckMountsApplied(const DecisionState& state, const std::string& pool,
                          const events::TaskSpec& spec, bool from_defaults) {
  if (spec.bind_mounts_size() == 0) return Status::Ok();
  bool any_agent = false;
  for (const auto& [agent_id, agent] : state.agents) {
    if (agent.resource_pool != pool) continue;
    if (agent.runs_containers) return Status::Ok();
    any_agent = true;
  }
  if (!any_agent) return Status::Ok();
  return Status::FailedPrecondition(
      "bind_mounts (--volume) cannot be applied in resource pool " + pool +
      ": its agents run tasks as processes on their hosts, where nothing is mounted; submit to "
      "a pool of container agents (cairn-agent --runtime container)" +
      (from_defaults ? "; these mounts come from master.yaml's task_container_defaults" : ""));
}

Result<Decision> DecideCommand(const DecisionState& state, const SubmitTask& submit,
                               const CommandMeta& meta) {
  if (submit.request) {
    CAIRN_ASSIGN_OR_RETURN(SubmitTask configured, ReadRequest(state, submit, meta));
    return DecideCommand(state, configured, meta);
  }
  if (!IsSafeId(submit.task_id))
    return Status::InvalidArgument("bad task id '" + submit.task_id + "'");
  if (state.tasks.count(submit.task_id)) {
    return Status::AlreadyExists("task " + submit.task_id + " already exists");
  }
  if (submit.spec.has_generic() && submit.spec.task_type() != events::TASK_TYPE_GENERIC) {
    return Status::InvalidArgument("only a generic task has a parent, a fork source or no_pause");
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
  if (resources.priority() != 0 &&
      (resources.priority() < kMinPriority || resources.priority() > kMaxPriority)) {
    return Status::InvalidArgument("config.resources.priority must be " + PriorityRangeText());
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
  if (pool == nullptr) return state.NoSuchPool(resolved->resource_pool());
  if (resolved->priority() == 0) {
    int32_t pool_default = pool->scheduler().default_priority();
    resolved->set_priority(pool_default > 0 ? pool_default : kDefaultPriority);
  }
  if (resolved->weight() == 0) resolved->set_weight(1);
  if (!submit.force) {
    CAIRN_RETURN_IF_ERROR(CheckCanEverFit(state, resolved->resource_pool(), resources.slots()));
  }
  auto* spec = submitted->mutable_spec();
  if (submit.spec.task_type() != events::TASK_TYPE_TRIAL) {
    ApplyTaskContainerDefaults(
        TaskContainerDefaultsIn(state.pools_config, resolved->resource_pool()), resources.slots(),
        *spec);
  }
  if (spec->startup_hook().empty()) {
    spec->set_startup_hook(StartupHookIn(state.pools_config, resolved->resource_pool()));
  }
  CAIRN_RETURN_IF_ERROR(
      CheckMountsApplied(state, resolved->resource_pool(), submitted->spec(),
                         submitted->spec().bind_mounts_size() > submit.spec.bind_mounts_size()));
  submitted->set_config_json(submit.config_json);
  if (submit.spec.task_type() == events::TASK_TYPE_GENERIC) {
    CAIRN_RETURN_IF_ERROR(CheckGenericLinks(state, submit.spec.generic()));
  }
  submitted->set_workspace_id(job != nullptr ? job->workspace_id : submit.workspace_id);
  CAIRN_RETURN_IF_ERROR(SetRunAs(state.identity,
                                 state.tenancy.WorkspaceAgentUser(submitted->workspace_id()),
                                 *submitted->mutable_spec()));
  if (submitted->spec().has_run_as() && submit.spec.task_type() == events::TASK_TYPE_SHELL) {
    return Status::NotSupported(
        "shells of users linked to an agent user are not supported yet (their sshd would run as "
        "that account); start a notebook or a command instead");
  }
  return Decision{{std::move(event)}, submit.task_id};
}

Result<Decision> DecideCommand(const DecisionState& state, const KillTask& kill,
                               const CommandMeta&) {
  const TaskRecord* task = state.FindTask(kill.task_id);
  if (!task) return Status::NotFound("task " + kill.task_id + " not found");
  std::string reason = kill.reason.empty() ? "kill requested" : kill.reason;
  if (task->task_type != events::TASK_TYPE_GENERIC) {
    return Decision{KillEventsFor(*task, reason, KillBy::kUser), task->task_id};
  }
  // A generic task's descendants go with it; --root kills the whole tree it belongs to.
  const TaskRecord& root = kill.from_root ? GenericRoot(state, *task) : *task;
  Decision decision{{}, task->task_id};
  for (const TaskRecord* member : LiveGenericSubtree(state, root)) {
    for (auto& event : KillEventsFor(*member, reason, KillBy::kUser)) {
      decision.events.push_back(std::move(event));
    }
  }
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const ReportTaskReady& report,
                               const CommandMeta&) {
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

Result<Decision> DecideCommand(const DecisionState& state, const ReportTaskStarted& report,
                               const CommandMeta&) {
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

Result<Decision> DecideCommand(const DecisionState& state, const ReportTaskExited& report,
                               const CommandMeta&) {
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
  if (task.preempting || task.held) {
    events::Envelope event;
    auto* released = event.mutable_allocation_released();
    released->set_task_id(task.task_id);
    released->set_allocation_id(task.allocation_id);
    if (report.exit_code) released->set_exit_code(*report.exit_code);
    if (report.signal) released->set_signal(*report.signal);
    released->set_reason(task.held ? "paused; " + DescribeExit(report, task.kill_requested) +
                                         "; held until unpaused"
                                   : "preempted; " + DescribeExit(report, task.kill_requested) +
                                         "; back in the queue at its old position");
    return Decision{{std::move(event)}, task.task_id};
  }
  events::Envelope event = ExitOf(task, DescribeExit(report, task.kill_requested));
  if (report.exit_code) event.mutable_task_exited()->set_exit_code(*report.exit_code);
  if (report.signal) event.mutable_task_exited()->set_signal(*report.signal);
  return Decision{{std::move(event)}, task.task_id};
}

Status MayRun(const DecisionState& state, const UserRecord& user, const SubmitTask& command) {
  const std::string& job_id = command.job_id.empty() ? command.task_id : command.job_id;
  if (const JobRecord* job = state.FindJob(job_id)) {
    return AuthorizeJobChange(state, user, *job, "add a task to job " + job->job_id);
  }
  // A task hung under another is stopped with it: only one who may change the parent adds one.
  if (const TaskRecord* parent = state.FindTask(command.spec.generic().parent_task_id())) {
    CAIRN_RETURN_IF_ERROR(
        AuthorizeJobChange(state, user, *parent->job, "add a task under task " + parent->task_id));
  }
  return Authorize(state.tenancy, user, Permission::kCreateNsc, command.workspace_id,
                   "create a task");
}

Status MayRun(const DecisionState& state, const UserRecord& user, const KillTask& command) {
  const TaskRecord* task = state.FindTask(command.task_id);
  if (task == nullptr) return Status::Ok();
  const TaskRecord& root = command.from_root && task->task_type == events::TASK_TYPE_GENERIC
                               ? GenericRoot(state, *task)
                               : *task;
  return MayChangeGenericTree(state, user, root, "kill task ");
}

Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateJob& command) {
  const JobRecord* job = state.FindJob(command.job_id);
  if (job == nullptr) return Status::Ok();
  return AuthorizeJobChange(state, user, *job, "change job " + job->job_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateJobs& command) {
  for (const auto& update : command.updates) CAIRN_RETURN_IF_ERROR(MayRun(state, user, update));
  return Status::Ok();
}

// An agent's reports and the master's timer reach the decider only through their own routes.
Status MayRun(const DecisionState&, const UserRecord&, const ReportTaskStarted&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const ReportTaskReady&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const ReportTaskExited&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const ExpirePreemptions&) {
  return Status::Ok();
}

Status MayRun(const DecisionState& state, const UserRecord& user, const ExpireTaskLogs&) {
  return Authorize(state.tenancy, user, Permission::kUpdateMasterConfig, kEveryWorkspace,
                   "remove task logs");
}

Result<Decision> DecideCommand(const DecisionState& state, const ExpireTaskLogs& command,
                               const CommandMeta&) {
  // One event stays small: a sweep over many tasks records several.
  constexpr size_t kMaxTasksPerExpiry = 10'000;
  if (command.task_ids.size() > kMaxTasksPerExpiry) {
    return Status::InvalidArgument("at most 10000 tasks' logs expire in one command");
  }
  events::Envelope event;
  auto* expired = event.mutable_task_logs_expired();
  for (const auto& task_id : command.task_ids) {
    const TaskRecord* task = state.FindTask(task_id);
    if (task != nullptr && task->state == TaskState::kExited) expired->add_task_ids(task_id);
  }
  if (expired->task_ids().empty()) return NoChange("task-logs");
  expired->set_reason(command.reason);
  return Decision{{std::move(event)}, "task-logs"};
}

}  // namespace cairn::commands
