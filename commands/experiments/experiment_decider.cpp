#include "commands/experiments/experiment_decider.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/ids.h"
#include "commands/experiments/experiment_reactor.h"
#include "commands/experiments/experiment_request.h"
#include "commands/experiments/experiment_state.h"
#include "commands/scheduler/scheduler.h"
#include "commands/tasks/task_decider.h"
#include "commands/tasks/task_events.h"
#include "commands/tenancy/tenancy_decider.h"
#include "events/envelope_util.h"
#include "events/limits.h"

namespace cairn::commands {

namespace {

// searcher.source_trial_id's latest checkpoint, or searcher.source_checkpoint_uuid once found
// among the trials' checkpoints; "" for neither. The source must be one the creator may see.
Result<std::string> WarmStartCheckpoint(const DecisionState& state,
                                        const experiments::SearcherConfig& searcher,
                                        const CommandMeta& meta) {
  const TrialRecord* source = nullptr;
  std::string uuid;
  if (searcher.source_trial_id) {
    const int64_t trial_id = *searcher.source_trial_id;
    source = state.FindTrial(trial_id);
    if (source == nullptr) {
      return Status::NotFound("searcher.source_trial_id: trial " + std::to_string(trial_id) +
                              " not found");
    }
    const auto latest = state.checkpoints.find(source->latest_checkpoint);
    if (source->latest_checkpoint.empty() || latest == state.checkpoints.end() ||
        latest->second.deleted) {
      return Status::FailedPrecondition("searcher.source_trial_id: no checkpoint found for trial " +
                                        std::to_string(trial_id));
    }
    uuid = source->latest_checkpoint;
  } else if (searcher.source_checkpoint_uuid) {
    uuid = *searcher.source_checkpoint_uuid;
    auto checkpoint = state.checkpoints.find(uuid);
    if (checkpoint != state.checkpoints.end() && !checkpoint->second.deleted) {
      source = state.FindTrial(checkpoint->second.trial_id);
    }
    if (source == nullptr) {
      return Status::NotFound("searcher.source_checkpoint_uuid: no checkpoint found with UUID " +
                              uuid);
    }
  } else {
    return std::string();
  }
  const ExperimentRecord* experiment = state.FindExperiment(source->experiment_id);
  const UserRecord* actor = ActingUser(state, meta);
  if (experiment != nullptr && actor != nullptr) {
    CAIRN_RETURN_IF_ERROR(
        Authorize(state.tenancy, *actor, Permission::kViewWorkspace, experiment->workspace_id,
                  "warm-start from experiment " + std::to_string(experiment->experiment_id)));
  }
  return uuid;
}

Status ExperimentNotFound(int64_t experiment_id) {
  return Status::NotFound("experiment " + std::to_string(experiment_id) + " not found");
}

events::Envelope StateChange(const ExperimentRecord& experiment, events::ExperimentState state,
                             const std::string& reason) {
  events::Envelope event;
  auto* changed = event.mutable_experiment_state_changed();
  changed->set_experiment_id(experiment.experiment_id);
  changed->set_state(state);
  changed->set_reason(reason);
  changed->set_progress(experiment.searcher ? experiment.searcher->Progress() : 0);
  return event;
}

bool IsFiniteNumberObject(const std::string& metrics_json) {
  if (metrics_json.size() > kMaxResultBytes) return false;
  auto metrics = nlohmann::json::parse(metrics_json, nullptr, /*allow_exceptions=*/false);
  if (!metrics.is_object()) return false;
  for (const auto& [name, value] : metrics.items()) {
    if (!value.is_number() || !std::isfinite(value.get<double>())) return false;
  }
  return true;
}

// An experiment commands may reach: known and not deleted.
Result<const ExperimentRecord*> LiveExperiment(const DecisionState& state, int64_t experiment_id) {
  const ExperimentRecord* experiment = state.FindExperiment(experiment_id);
  if (experiment == nullptr || experiment->deleted) return ExperimentNotFound(experiment_id);
  return experiment;
}

// The experiment's checkpoints that go with it: those still stored that no model version holds,
// in the order they were saved.
std::vector<std::string> CheckpointsDeletedWith(const DecisionState& state,
                                                const ExperimentRecord& experiment) {
  std::vector<std::string> doomed;
  const std::set<std::string> warm_start_sources = state.WarmStartSources();
  for (int64_t trial_id : experiment.trial_ids) {
    for (const auto& uuid : state.trials.at(trial_id).checkpoints) {
      auto found = state.checkpoints.find(uuid);
      if (found != state.checkpoints.end() && !found->second.deleted &&
          !state.IsCheckpointRegistered(uuid) && !warm_start_sources.count(uuid)) {
        doomed.push_back(uuid);
      }
    }
  }
  return doomed;
}

}  // namespace

Result<Decision> DecideCommand(const DecisionState& state, const CreateExperiment& command,
                               const CommandMeta& meta) {
  events::ExperimentCreated created = command.created;
  if (command.request) {
    CAIRN_ASSIGN_OR_RETURN(created, ConfigureExperiment(state, command, meta));
  }
  CAIRN_ASSIGN_OR_RETURN(auto config, experiments::ParseExperimentConfig(created.config_json()));
  CAIRN_RETURN_IF_ERROR(experiments::NewSearcher(config, created.seed()).status());
  if (config.entrypoint.empty()) {
    return Status::InvalidArgument(
        "entrypoint: required (a command, or a trial class as module:Class)");
  }
  if (!config.checkpoint_storage || (!config.checkpoint_storage->IsObjectStore() &&
                                     config.checkpoint_storage->host_path.empty())) {
    return Status::InvalidArgument("checkpoint_storage.host_path: required");
  }
  if (created.context_digest().empty()) {
    return Status::InvalidArgument("the experiment has no model definition");
  }
  created.set_experiment_id(state.last_experiment_id + 1);
  created.set_searcher_version(experiments::kSearcherVersion);
  created.set_job_id("experiment-" + std::to_string(created.experiment_id()));
  if (created.name().empty()) {
    created.set_name("Experiment (" + std::to_string(created.experiment_id()) + ")");
  }
  // The project decides the workspace; none given is Uncategorized's.
  created.set_project_id(ProjectOrUncategorized(created.project_id()));
  const ProjectRecord* project = state.tenancy.FindProject(created.project_id());
  if (project == nullptr) {
    return Status::NotFound("project " + std::to_string(created.project_id()) + " not found");
  }
  if (project->archived) {
    return Status::FailedPrecondition("project " + project->name + " is archived");
  }
  CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, project->workspace_id));
  created.set_workspace_id(project->workspace_id);
  CAIRN_ASSIGN_OR_RETURN(*created.mutable_warm_start_checkpoint_uuid(),
                         WarmStartCheckpoint(state, config.searcher, meta));
  // A workspace link its owner cannot complete would fail every trial: refused now instead.
  events::TaskSpec run_as_probe;
  run_as_probe.set_user(created.owner());
  CAIRN_RETURN_IF_ERROR(SetRunAs(
      state.identity, state.tenancy.WorkspaceAgentUser(project->workspace_id), run_as_probe));
  auto* resources = created.mutable_resources();
  resources->set_slots(config.resources.slots_per_trial);
  if (resources->slots() < 0) return Status::InvalidArgument("resources.slots_per_trial: >= 0");
  auto resolved =
      ResolveWorkspacePool(state, project->workspace_id, resources->resource_pool(), false);
  if (!resolved.ok()) {
    return Status::InvalidArgument("resources.resource_pool: " + resolved.status().message());
  }
  resources->set_resource_pool(*resolved);
  const events::ResourcePoolConfig* pool = state.FindPool(resources->resource_pool());
  if (pool == nullptr) {
    return Status::InvalidArgument("resources.resource_pool: " + resources->resource_pool() +
                                   " does not exist (configured pools: " + state.PoolNames() + ")");
  }
  if (resources->priority() == 0) {
    int32_t pool_default = pool->scheduler().default_priority();
    resources->set_priority(pool_default > 0 ? pool_default : kDefaultPriority);
  }
  if (resources->priority() < kMinPriority || resources->priority() > kMaxPriority) {
    return Status::InvalidArgument("resources.priority: must be " + PriorityRangeText());
  }
  if (resources->weight() == 0) resources->set_weight(1);
  if (!(resources->weight() > 0) || !std::isfinite(resources->weight())) {
    return Status::InvalidArgument("resources.weight: must be a positive number");
  }
  CAIRN_RETURN_IF_ERROR(CheckCanEverFit(state, resources->resource_pool(), resources->slots()));
  if (Status mounts =
          CheckMountsApplied(state, resources->resource_pool(), config.container, false);
      !mounts.ok()) {
    return Status::FailedPrecondition(mounts.message() +
                                      " (the experiment's bind_mounts, its own or from "
                                      "task_container_defaults)");
  }
  events::Envelope event;
  *event.mutable_experiment_created() = std::move(created);
  std::string entity = std::to_string(event.experiment_created().experiment_id());
  return Decision{{std::move(event)}, entity};
}

Result<Decision> DecideCommand(const DecisionState& state, const ExperimentAction& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const ExperimentRecord* experiment,
                         LiveExperiment(state, command.experiment_id));
  const std::string entity = std::to_string(experiment->experiment_id);
  const std::string name = "experiment " + entity;
  const std::string current = ExperimentStateText(experiment->state);
  switch (command.kind) {
    case ExperimentAction::Kind::kActivate:
      if (experiment->state == events::EXPERIMENT_STATE_ACTIVE) return Decision{{}, entity};
      if (experiment->state != events::EXPERIMENT_STATE_PAUSED) {
        return Status::FailedPrecondition(name + " is " + current +
                                          "; only a paused experiment can be activated");
      }
      return Decision{{StateChange(*experiment, events::EXPERIMENT_STATE_ACTIVE, "activated")},
                      entity};
    case ExperimentAction::Kind::kPause:
      if (experiment->state == events::EXPERIMENT_STATE_PAUSED) return Decision{{}, entity};
      if (experiment->state != events::EXPERIMENT_STATE_ACTIVE) {
        return Status::FailedPrecondition(name + " is " + current +
                                          "; only an active experiment can be paused");
      }
      return Decision{{StateChange(*experiment, events::EXPERIMENT_STATE_PAUSED,
                                   "paused: each trial checkpoints and releases its slots")},
                      entity};
    case ExperimentAction::Kind::kCancel:
      if (!experiment->running()) return Decision{{}, entity};
      return Decision{{StateChange(*experiment, events::EXPERIMENT_STATE_STOPPING_CANCELED,
                                   "canceled: each trial checkpoints and stops")},
                      entity};
    case ExperimentAction::Kind::kKill: {
      if (experiment->terminal() || experiment->state == events::EXPERIMENT_STATE_STOPPING_KILLED) {
        return Decision{{}, entity};
      }
      Decision decision{
          {StateChange(*experiment, events::EXPERIMENT_STATE_STOPPING_KILLED, "killed")}, entity};
      for (int64_t trial_id : experiment->trial_ids) {
        const TrialRecord& trial = state.trials.at(trial_id);
        if (trial.task_id.empty()) continue;
        for (auto& event :
             KillEventsFor(state.tasks.at(trial.task_id), name + " killed", KillBy::kUser)) {
          decision.events.push_back(std::move(event));
        }
      }
      return decision;
    }
    case ExperimentAction::Kind::kArchive:
    case ExperimentAction::Kind::kUnarchive: {
      const bool archive = command.kind == ExperimentAction::Kind::kArchive;
      if (experiment->archived == archive) return Decision{{}, entity};
      if (archive && !experiment->terminal()) {
        return Status::FailedPrecondition(name + " is " + current +
                                          "; only a finished experiment can be archived");
      }
      events::Envelope event;
      event.mutable_experiment_archived()->set_experiment_id(experiment->experiment_id);
      event.mutable_experiment_archived()->set_archived(archive);
      return Decision{{std::move(event)}, entity};
    }
    case ExperimentAction::Kind::kDelete: {
      if (!experiment->terminal()) {
        return Status::FailedPrecondition(name + " is " + current +
                                          "; kill it or wait for it to end before deleting it");
      }
      Decision decision{{}, entity};
      std::vector<std::string> doomed = CheckpointsDeletedWith(state, *experiment);
      if (!doomed.empty()) {
        auto* deleted = decision.events.emplace_back().mutable_checkpoints_deleted();
        deleted->set_experiment_id(experiment->experiment_id);
        for (auto& uuid : doomed) deleted->add_uuids(std::move(uuid));
        deleted->set_reason(name + " was deleted");
      }
      decision.events.emplace_back().mutable_experiment_deleted()->set_experiment_id(
          experiment->experiment_id);
      return decision;
    }
  }
  return Decision{{}, entity};
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateExperiment& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const ExperimentRecord* experiment,
                         LiveExperiment(state, command.experiment_id));
  constexpr size_t kMaxTextBytes = 64 * 1024;
  if (command.name && (command.name->empty() || command.name->size() > 256)) {
    return Status::InvalidArgument("name: must be 1 to 256 characters");
  }
  for (const auto* text : {&command.description, &command.notes}) {
    if (*text && (*text)->size() > kMaxTextBytes) {
      return Status::InvalidArgument("description and notes: at most 64 KiB each");
    }
  }
  if (command.labels) {
    if (command.labels->size() > 100) return Status::InvalidArgument("labels: at most 100");
    for (const auto& label : *command.labels) {
      if (label.empty() || label.size() > 256) {
        return Status::InvalidArgument("labels: each must be 1 to 256 characters");
      }
    }
  }
  Decision decision{{}, std::to_string(experiment->experiment_id)};
  if (command.job_change) {
    if (command.job_change->job_id != experiment->job_id) {
      return Status::InvalidArgument("job " + command.job_change->job_id + " is not experiment " +
                                     decision.entity_id + "'s");
    }
    CAIRN_ASSIGN_OR_RETURN(Decision job, DecideCommand(state, *command.job_change, CommandMeta{}));
    decision.events = std::move(job.events);
  }
  if (!command.name && !command.description && !command.notes && !command.labels &&
      !command.gc_policy) {
    return decision;
  }
  events::Envelope event;
  auto* updated = event.mutable_experiment_updated();
  updated->set_experiment_id(experiment->experiment_id);
  updated->set_job_id(experiment->job_id);
  if (command.name) updated->set_name(*command.name);
  if (command.description) updated->set_description(*command.description);
  if (command.notes) updated->set_notes(*command.notes);
  if (command.labels) {
    updated->set_labels_set(true);
    for (const auto& label : *command.labels) updated->add_labels(label);
  }
  std::optional<events::Envelope> collection;
  if (command.gc_policy) {
    const auto& policy = *command.gc_policy;
    for (int value :
         {policy.save_experiment_best, policy.save_trial_best, policy.save_trial_latest}) {
      if (value < 0 || value > 1'000'000) {
        return Status::InvalidArgument("checkpointStorage: each save_* is 0 to 1000000");
      }
    }
    if (experiment->config == nullptr || !experiment->config->checkpoint_storage) {
      return Status::FailedPrecondition("experiment " + decision.entity_id +
                                        " has no checkpoint storage to collect from");
    }
    CAIRN_ASSIGN_OR_RETURN(
        std::string json,
        WithGcPolicy(experiment->searcher_config_json, policy.save_experiment_best,
                     policy.save_trial_best, policy.save_trial_latest));
    CAIRN_ASSIGN_OR_RETURN(auto config, experiments::ParseExperimentConfig(json));
    updated->set_save_experiment_best(policy.save_experiment_best);
    updated->set_save_trial_best(policy.save_trial_best);
    updated->set_save_trial_latest(policy.save_trial_latest);
    // What the new policy drops from the ended trials, decided against the record as the event
    // leaves it (a live trial's are collected when it ends).
    ExperimentRecord changed;
    changed.experiment_id = experiment->experiment_id;
    changed.trial_ids = experiment->trial_ids;
    changed.config = std::make_shared<const experiments::ExperimentConfig>(std::move(config));
    std::vector<std::string> uuids = CheckpointsToCollect(state, changed, std::nullopt);
    std::erase_if(uuids, [&](const std::string& uuid) {
      const events::ExperimentState trial_state =
          state.trials.at(state.checkpoints.at(uuid).trial_id).state;
      return trial_state != events::EXPERIMENT_STATE_COMPLETED &&
             trial_state != events::EXPERIMENT_STATE_CANCELED &&
             trial_state != events::EXPERIMENT_STATE_ERROR;
    });
    if (!uuids.empty()) {
      collection = CollectionEvent(changed, std::move(uuids), "gc policy changed");
    }
  }
  decision.events.push_back(std::move(event));
  if (collection) decision.events.push_back(std::move(*collection));
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const KillTrial& command,
                               const CommandMeta&) {
  const TrialRecord* trial = state.FindTrial(command.trial_id);
  const ExperimentRecord* experiment =
      trial == nullptr ? nullptr : state.FindExperiment(trial->experiment_id);
  if (experiment == nullptr || experiment->deleted) {
    return Status::NotFound("trial " + std::to_string(command.trial_id) + " not found");
  }
  const std::string entity = std::to_string(trial->trial_id);
  if (trial->ended() || trial->kill_requested || experiment->terminal()) {
    return Decision{{}, entity};
  }
  Decision decision{{}, entity};
  auto* kill = decision.events.emplace_back().mutable_trial_kill_requested();
  kill->set_experiment_id(experiment->experiment_id);
  kill->set_trial_id(trial->trial_id);
  if (!trial->task_id.empty()) {
    for (auto& event : KillEventsFor(state.tasks.at(trial->task_id), "trial " + entity + " killed",
                                     KillBy::kUser)) {
      decision.events.push_back(std::move(event));
    }
  }
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const ContinueExperiment& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const ExperimentRecord* experiment,
                         LiveExperiment(state, command.experiment_id));
  const std::string name = "experiment " + std::to_string(experiment->experiment_id);
  if (!experiment->terminal()) {
    return Status::FailedPrecondition(name + " is " + ExperimentStateText(experiment->state) +
                                      "; only a finished experiment can be continued");
  }
  if (experiment->trial_ids.size() != 1) {
    return Status::FailedPrecondition(name + " has " +
                                      std::to_string(experiment->trial_ids.size()) +
                                      " trials; only a single-trial experiment can be continued");
  }
  CAIRN_ASSIGN_OR_RETURN(auto config, ContinuedConfig(*experiment, command.override_yaml));
  if (config.searcher.name != experiments::SearcherName::kSingle) {
    return Status::InvalidArgument("searcher.name: continue needs the single searcher");
  }
  // The run resumes the same trial's checkpoints as the same owner's code: what it runs, with
  // which secrets and hyperparameters, and where its checkpoints are stay as they were.
  for (const char* field :
       {"entrypoint", "environment", "hyperparameters", "checkpoint_storage", "bind_mounts"}) {
    if (config.effective.value(field, nlohmann::ordered_json()) !=
        experiment->config->effective.value(field, nlohmann::ordered_json())) {
      return Status::InvalidArgument(std::string(field) +
                                     ": cannot change when an experiment continues");
    }
  }
  if (config.resources.slots_per_trial != experiment->config->resources.slots_per_trial) {
    return Status::InvalidArgument(
        "resources.slots_per_trial: cannot change when an experiment continues");
  }
  CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, experiment->workspace_id));
  const TrialRecord& trial = state.trials.at(experiment->trial_ids.front());
  CAIRN_ASSIGN_OR_RETURN(int64_t max_length,
                         experiments::LengthInBatches(config, config.searcher.max_length));
  if (trial.state == events::EXPERIMENT_STATE_COMPLETED && trial.checkpoint_batches >= max_length &&
      trial.validated_at >= max_length) {
    return Status::FailedPrecondition(
        "trial " + std::to_string(trial.trial_id) + " already trained to " +
        std::to_string(trial.checkpoint_batches) +
        " batches; continue with a longer searcher.max_length (det experiment continue ID "
        "--config searcher.max_length.batches=N)");
  }
  events::Envelope event;
  auto* continued = event.mutable_experiment_continued();
  continued->set_experiment_id(experiment->experiment_id);
  continued->set_trial_id(trial.trial_id);
  continued->set_config_json(config.effective.dump());
  continued->set_override_yaml(command.override_yaml);
  continued->set_owner(experiment->owner);
  return Decision{{std::move(event)}, std::to_string(experiment->experiment_id)};
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteTensorboardFiles& command,
                               const CommandMeta&) {
  const ExperimentRecord* experiment = state.FindExperiment(command.experiment_id);
  if (experiment == nullptr) {
    return Status::NotFound("experiment " + std::to_string(command.experiment_id) + " not found");
  }
  events::Envelope event;
  event.mutable_tensorboard_files_deleted()->set_experiment_id(experiment->experiment_id);
  return Decision{{std::move(event)}, std::to_string(experiment->experiment_id)};
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteCheckpoints& command,
                               const CommandMeta&) {
  if (command.uuids.empty()) return Status::InvalidArgument("checkpointUuids: name at least one");
  std::map<int64_t, std::vector<std::string>> by_experiment;
  std::set<std::string> seen;
  for (const auto& uuid : command.uuids) {
    auto found = state.checkpoints.find(uuid);
    const ExperimentRecord* experiment = found == state.checkpoints.end()
                                             ? nullptr
                                             : state.FindExperiment(found->second.experiment_id);
    // A deleted experiment's checkpoint that a model version kept can go once the version did.
    if (experiment == nullptr) return Status::NotFound("checkpoint " + uuid + " not found");
    if (!seen.insert(uuid).second || found->second.deleted) continue;
    if (state.IsCheckpointRegistered(uuid)) {
      return Status::FailedPrecondition("checkpoint " + uuid +
                                        " is registered in the model registry; delete its model "
                                        "versions first");
    }
    if (const int64_t warmed = state.ExperimentWarmStartingFrom(uuid)) {
      return Status::FailedPrecondition("checkpoint " + uuid + " is where experiment " +
                                        std::to_string(warmed) +
                                        "'s trials warm-start from; delete that experiment first");
    }
    if (!experiment->terminal()) {
      return Status::FailedPrecondition("checkpoint " + uuid + " belongs to experiment " +
                                        std::to_string(experiment->experiment_id) + ", which is " +
                                        ExperimentStateText(experiment->state) +
                                        "; its checkpoints can be deleted once it ends");
    }
    by_experiment[experiment->experiment_id].push_back(uuid);
  }
  Decision decision;
  for (auto& [experiment_id, uuids] : by_experiment) {
    auto* deleted = decision.events.emplace_back().mutable_checkpoints_deleted();
    deleted->set_experiment_id(experiment_id);
    for (auto& uuid : uuids) deleted->add_uuids(std::move(uuid));
    deleted->set_reason("deleted by hand");
  }
  decision.entity_id = command.uuids.front();
  return decision;
}

Result<Decision> DecideCommand(const DecisionState& state, const ReportWorkload& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const TaskRecord* allocation,
                         state.AllocationNamed(command.allocation_id));
  const TaskRecord& task = *allocation;
  const TrialRecord* trial = task.trial_id == 0 ? nullptr : state.FindTrial(task.trial_id);
  if (trial == nullptr) {
    return Status::InvalidArgument("allocation " + command.allocation_id + " is not a trial's");
  }
  if (task.allocation_id != command.allocation_id || !task.holds_allocation()) {
    return Status::FailedPrecondition("allocation " + command.allocation_id + " has ended");
  }
  const std::string entity = std::to_string(trial->trial_id);
  const bool same_process = trial->workload_allocation == command.allocation_id;
  if (command.sequence < 0) return Status::InvalidArgument("sequence must not be negative");
  if (same_process && command.sequence == trial->last_sequence) {
    return Decision{{}, entity};  // a retry: the answer was recorded
  }
  const int32_t expected = same_process ? trial->last_sequence + 1 : 0;
  if (command.sequence != expected) {
    return Status::FailedPrecondition("workload sequence " + std::to_string(command.sequence) +
                                      " out of order; expected " + std::to_string(expected));
  }
  if (same_process && trial->awaiting_answer) {
    return Status::Unavailable("the previous workload has no answer yet; retry");
  }
  const events::TrialWorkloadAssigned* previous = same_process ? &trial->last_answer : nullptr;
  const events::WorkloadKind expected_kind =
      previous ? previous->kind() : events::WORKLOAD_KIND_UNSPECIFIED;
  if (expected_kind == events::WORKLOAD_KIND_EXIT) {
    return Status::FailedPrecondition("the trial was told to exit: " + previous->reason());
  }
  if (command.completed != expected_kind) {
    return Status::InvalidArgument(
        expected_kind == events::WORKLOAD_KIND_UNSPECIFIED
            ? std::string("the first request of a process (sequence 0) reports no result")
            : "completed.kind must be " + events::WorkloadKind_Name(expected_kind) +
                  ", the workload it was given");
  }
  events::TrialWorkloadReported reported;
  reported.set_experiment_id(trial->experiment_id);
  reported.set_trial_id(trial->trial_id);
  reported.set_allocation_id(command.allocation_id);
  reported.set_sequence(command.sequence);
  reported.set_completed(command.completed);
  // A new process resumes from the latest checkpoint.
  const int64_t batches_before = same_process ? trial->batches : trial->checkpoint_batches;
  reported.set_total_batches(batches_before);
  Decision decision{{}, entity};
  switch (command.completed) {
    case events::WORKLOAD_KIND_TRAIN:
      if (command.batches != previous->batches()) {
        return Status::InvalidArgument("completed.batches must be " +
                                       std::to_string(previous->batches()) + ", as assigned");
      }
      if (!IsFiniteNumberObject(command.metrics_json)) {
        return Status::InvalidArgument(
            "completed.metrics must map names to finite numbers (at most 64 KiB)");
      }
      reported.set_batches(command.batches);
      reported.set_total_batches(batches_before + command.batches);
      reported.set_metrics_json(command.metrics_json);
      break;
    case events::WORKLOAD_KIND_VALIDATE: {
      if (!IsFiniteNumberObject(command.metrics_json)) {
        return Status::InvalidArgument(
            "completed.metrics must map names to finite numbers (at most 64 KiB)");
      }
      const ExperimentRecord* experiment = state.FindExperiment(trial->experiment_id);
      if (experiment != nullptr && experiment->config != nullptr &&
          std::isnan(SearcherMetricOf(*experiment->config, command.metrics_json))) {
        return Status::InvalidArgument("the validation metrics lack searcher.metric '" +
                                       experiment->config->searcher.metric + "'");
      }
      reported.set_metrics_json(command.metrics_json);
      break;
    }
    case events::WORKLOAD_KIND_CHECKPOINT: {
      const auto& checkpoint = command.checkpoint;
      if (!IsCanonicalUuid(checkpoint.uuid())) {
        return Status::InvalidArgument("completed.uuid must be a UUID (8-4-4-4-12 hex digits)");
      }
      if (checkpoint.metadata_json().size() > kMaxResultBytes ||
          checkpoint.resources_size() > kMaxCheckpointFiles) {
        return Status::InvalidArgument(
            "completed.metadata must be at most 64 KiB and completed.resources list at most " +
            std::to_string(kMaxCheckpointFiles) + " files");
      }
      if (state.checkpoints.count(checkpoint.uuid())) {
        return Status::AlreadyExists("checkpoint " + checkpoint.uuid() + " already exists");
      }
      if (checkpoint.total_batches() != batches_before) {
        return Status::InvalidArgument("completed.batches must be " +
                                       std::to_string(batches_before) +
                                       ", the trial's batch count");
      }
      if (checkpoint.size_bytes() < 0) {
        return Status::InvalidArgument("completed.sizeBytes must not be negative");
      }
      events::Envelope saved;
      *saved.mutable_checkpoint_saved() = checkpoint;
      saved.mutable_checkpoint_saved()->set_experiment_id(trial->experiment_id);
      saved.mutable_checkpoint_saved()->set_trial_id(trial->trial_id);
      saved.mutable_checkpoint_saved()->set_allocation_id(command.allocation_id);
      decision.events.push_back(std::move(saved));
      break;
    }
    default:
      break;
  }
  events::Envelope event;
  *event.mutable_trial_workload_reported() = std::move(reported);
  decision.events.push_back(std::move(event));
  return decision;
}

std::optional<events::TrialWorkloadAssigned> RecordedWorkloadAnswer(const DecisionState& state,
                                                                    const ReportWorkload& report) {
  const TrialRecord* trial = state.FindTrialByAllocation(report.allocation_id);
  if (trial == nullptr || trial->workload_allocation != report.allocation_id ||
      trial->last_sequence != report.sequence || trial->awaiting_answer) {
    return std::nullopt;
  }
  return trial->last_answer;
}

Result<TrialRunStart> DescribeLiveTrialRun(const DecisionState& state,
                                           const std::string& allocation_id) {
  const TrialRecord* trial = state.FindTrialByAllocation(allocation_id);
  const TaskRecord* task = trial == nullptr ? nullptr : state.FindTask(trial->task_id);
  const ExperimentRecord* experiment =
      trial == nullptr ? nullptr : state.FindExperiment(trial->experiment_id);
  if (task == nullptr || task->allocation_id != allocation_id || !task->holds_allocation() ||
      experiment == nullptr || experiment->config == nullptr) {
    return Status::NotFound("allocation " + allocation_id + " is not a live trial's");
  }
  const auto& config = *experiment->config;
  TrialRunStart start;
  start.trial_id = trial->trial_id;
  start.experiment_id = trial->experiment_id;
  start.request_id = trial->request_id;
  start.hparams_json = trial->hparams_json;
  start.entrypoint = config.entrypoint;
  start.checkpoint_dir = experiments::CheckpointDirectory(config);
  start.latest_checkpoint = trial->latest_checkpoint;
  start.checkpoint_batches = trial->checkpoint_batches;
  if (start.latest_checkpoint.empty()) {
    // A warm start or a pbt clone: the source's weights, the trial's own count of batches (none
    // yet).
    start.latest_checkpoint = trial->warm_start_checkpoint.empty()
                                  ? experiment->warm_start_checkpoint
                                  : trial->warm_start_checkpoint;
    start.checkpoint_batches = 0;
  }
  start.records_per_epoch = config.records_per_epoch;
  start.global_batch_size = config.global_batch_size.value_or(0);
  start.environment = config.environment;
  start.context_digest = experiment->context_digest;
  start.entrypoint_argv = config.entrypoint_argv;
  start.task_id = task->task_id;
  start.run = trial->runs;
  // Determined draws a trial's seed from the experiment's; this one is derived, so replay agrees.
  start.trial_seed = static_cast<uint32_t>(
      (experiment->searcher_seed + 2654435761u * static_cast<uint64_t>(trial->request_id)) %
      2147483647u);
  start.determined_config = experiments::DeterminedTrialConfig(config);
  auto add_container = [&](const std::string& agent_id, int32_t slots) {
    const AgentRecord* agent = state.FindAgent(agent_id);
    start.container_addresses.push_back(
        agent == nullptr || agent->address.empty() ? "127.0.0.1" : agent->address);
    start.container_slots.push_back(slots);
  };
  for (const auto& part : task->where().parts) add_container(part.agent_id(), part.slot_ids_size());
  if (start.container_addresses.empty()) {
    add_container(task->agent_id, static_cast<int32_t>(task->where().slot_ids.size()));
  }
  return start;
}

Status MayRun(const DecisionState& state, const UserRecord& user, const CreateExperiment& command) {
  const ProjectRecord* project =
      state.tenancy.FindProject(ProjectOrUncategorized(command.created.project_id()));
  if (project == nullptr) return Status::Ok();
  return Authorize(state.tenancy, user, Permission::kCreateExperiment, project->workspace_id,
                   "create an experiment");
}

Status MayRun(const DecisionState& state, const UserRecord& user, const ExperimentAction& command) {
  return AuthorizeExperimentChange(state, user, command.experiment_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateExperiment& command) {
  return AuthorizeExperimentChange(state, user, command.experiment_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user,
              const ContinueExperiment& command) {
  // It starts work again: a change to the experiment and new work in its workspace.
  CAIRN_RETURN_IF_ERROR(AuthorizeExperimentChange(state, user, command.experiment_id));
  const ExperimentRecord* experiment = state.FindExperiment(command.experiment_id);
  if (experiment == nullptr) return Status::Ok();
  return Authorize(state.tenancy, user, Permission::kCreateExperiment, experiment->workspace_id,
                   "continue experiment " + std::to_string(command.experiment_id));
}

Status MayRun(const DecisionState& state, const UserRecord& user, const KillTrial& command) {
  const TrialRecord* trial = state.FindTrial(command.trial_id);
  if (trial == nullptr) return Status::Ok();
  return AuthorizeExperimentChange(state, user, trial->experiment_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user,
              const DeleteCheckpoints& command) {
  for (const auto& uuid : command.uuids) {
    auto checkpoint = state.checkpoints.find(uuid);
    if (checkpoint == state.checkpoints.end()) continue;
    CAIRN_RETURN_IF_ERROR(AuthorizeExperimentChange(state, user, checkpoint->second.experiment_id));
  }
  return Status::Ok();
}

Status MayRun(const DecisionState& state, const UserRecord& user,
              const DeleteTensorboardFiles& command) {
  return AuthorizeExperimentChange(state, user, command.experiment_id);
}

// A trial process reports through its allocation's route, never as a user.
Status MayRun(const DecisionState&, const UserRecord&, const ReportWorkload&) {
  return Status::Ok();
}

}  // namespace cairn::commands
