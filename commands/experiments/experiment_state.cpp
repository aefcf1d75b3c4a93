#include "commands/experiments/experiment_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/encoding.h"

namespace cairn::commands {

const char* ExperimentStateText(events::ExperimentState state) {
  switch (state) {
    case events::EXPERIMENT_STATE_ACTIVE:
      return "ACTIVE";
    case events::EXPERIMENT_STATE_PAUSED:
      return "PAUSED";
    case events::EXPERIMENT_STATE_STOPPING_COMPLETED:
      return "STOPPING_COMPLETED";
    case events::EXPERIMENT_STATE_STOPPING_CANCELED:
      return "STOPPING_CANCELED";
    case events::EXPERIMENT_STATE_STOPPING_KILLED:
      return "STOPPING_KILLED";
    case events::EXPERIMENT_STATE_STOPPING_ERROR:
      return "STOPPING_ERROR";
    case events::EXPERIMENT_STATE_COMPLETED:
      return "COMPLETED";
    case events::EXPERIMENT_STATE_CANCELED:
      return "CANCELED";
    case events::EXPERIMENT_STATE_ERROR:
      return "ERROR";
    default:
      return "UNSPECIFIED";
  }
}

std::string TrialRunTaskId(int64_t experiment_id, int64_t trial_id, int run) {
  char id[96];
  std::snprintf(id, sizeof(id), "%lld.%08llx-0000-4000-8000-%012llx",
                static_cast<long long>(experiment_id), static_cast<unsigned long long>(trial_id),
                static_cast<unsigned long long>(run));
  return id;
}

std::string LegacyTrialRunTaskId(int64_t trial_id, int run) {
  return "trial-" + std::to_string(trial_id) + "-" + std::to_string(run);
}

std::optional<double> MetricValue(const nlohmann::json& metrics, const std::string& name) {
  if (!metrics.is_object()) return std::nullopt;
  auto it = metrics.find(name);
  if (it == metrics.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const auto& text = it->get_ref<const std::string&>();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> TrialReportIdentity(
    const events::Envelope& event) {
  std::string key;
  std::string identity;
  switch (event.payload_case()) {
    case events::Envelope::kTrialMetricsReported:
      key = "metrics/" + event.trial_metrics_reported().group();
      event.trial_metrics_reported().SerializeToString(&identity);  // no maps: deterministic
      break;
    case events::Envelope::kTrialProgressReported:
      key = "progress";
      event.trial_progress_reported().SerializeToString(&identity);
      break;
    case events::Envelope::kCheckpointSaved: {
      const auto& saved = event.checkpoint_saved();
      key = "checkpoint";
      int64_t resource_bytes = 0;
      for (const auto& [path, bytes] : saved.resources()) resource_bytes += bytes;
      identity = saved.uuid() + "\n" + std::to_string(saved.total_batches()) + "\n" +
                 std::to_string(saved.resources_size()) + "\n" + std::to_string(resource_bytes) +
                 "\n" + saved.metadata_json() + "\n" + saved.allocation_id();
      break;
    }
    default:
      return std::nullopt;
  }
  // Kept per trial in the decision state: a digest, not the report.
  auto digest = Sha256Hex(identity);
  return std::make_pair(std::move(key), digest.ok() ? *digest : identity.substr(0, 256));
}

double SearcherMetricOf(const experiments::ExperimentConfig& config,
                        const std::string& metrics_json) {
  auto metrics = nlohmann::json::parse(metrics_json, nullptr, /*allow_exceptions=*/false);
  if (!metrics.is_object()) return std::numeric_limits<double>::quiet_NaN();
  auto it = metrics.find(config.searcher.metric);
  if (it == metrics.end() || !it->is_number()) return std::numeric_limits<double>::quiet_NaN();
  return it->get<double>();
}

std::vector<experiments::SearcherOp> FeedSearcher(ExperimentRecord& experiment,
                                                  const SearcherInput& input) {
  experiment.searcher_inputs.push_back(input);
  experiments::Searcher& searcher = *experiment.searcher;
  switch (input.kind) {
    case SearcherInput::Kind::kTrained:
      searcher.OnTrained(input.request_id, input.batches);
      return {};
    case SearcherInput::Kind::kValidated:
      return searcher.OnValidation(input.request_id, input.batches, input.metric);
    case SearcherInput::Kind::kExitedEarly:
      return searcher.OnTrialExitedEarly(input.request_id);
  }
  return {};
}

namespace {

ExperimentRecord* FindExperiment(DecisionState& state, int64_t experiment_id) {
  auto it = state.experiments.find(experiment_id);
  return it == state.experiments.end() ? nullptr : &it->second;
}

TrialRecord* FindTrial(DecisionState& state, int64_t trial_id) {
  auto it = state.trials.find(trial_id);
  return it == state.trials.end() ? nullptr : &it->second;
}

// The searcher's decisions wait until the reactor records them; recording one removes it.
void AddOps(ExperimentRecord& experiment, std::vector<experiments::SearcherOp> ops) {
  for (auto& op : ops) experiment.pending_ops.push_back(std::move(op));
}

void RemoveOp(ExperimentRecord& experiment, experiments::SearcherOp::Kind kind, int request_id) {
  auto& ops = experiment.pending_ops;
  auto it = std::find_if(ops.begin(), ops.end(), [&](const experiments::SearcherOp& op) {
    return op.kind == kind && op.request_id == request_id;
  });
  if (it != ops.end()) ops.erase(it);
}

// The single trial reopens under the new configuration, driven by a fresh single searcher whose
// first trial is the existing one: its TrainTo then resumes the trial from its latest checkpoint.
void ApplyExperimentContinued(DecisionState& state, const events::ExperimentContinued& continued) {
  ExperimentRecord* experiment = FindExperiment(state, continued.experiment_id());
  TrialRecord* trial = FindTrial(state, continued.trial_id());
  if (experiment == nullptr || trial == nullptr || !experiment->terminal()) return;
  auto config = experiments::ParseExperimentConfig(continued.config_json());
  if (!config.ok()) return;
  auto searcher = experiments::NewSearcher(*config, config->experiment_seed.value_or(0));
  if (!searcher.ok()) return;
  experiment->config = std::make_shared<const experiments::ExperimentConfig>(*config);
  experiment->searcher = std::move(*searcher);
  experiment->searcher_config_json = continued.config_json();
  experiment->searcher_seed = config->experiment_seed.value_or(0);
  experiment->searcher_inputs.clear();
  experiment->pending_ops.clear();
  experiment->trial_by_request.clear();
  for (auto& op : experiment->searcher->Start()) {
    if (op.kind == experiments::SearcherOp::Kind::kCreateTrial) {
      trial->request_id = op.request_id;
      experiment->trial_by_request[op.request_id] = trial->trial_id;
      continue;
    }
    experiment->pending_ops.push_back(std::move(op));
  }
  experiment->state = events::EXPERIMENT_STATE_ACTIVE;
  trial->state = events::EXPERIMENT_STATE_ACTIVE;
  trial->closed = false;
  trial->train_to = 0;
  trial->restarts = 0;
  trial->kill_requested = false;
  trial->last_exit = TrialRunExit::kNone;
  auto job = state.jobs.find(experiment->job_id);
  if (job != state.jobs.end()) job->second.open = true;
  state.dirty_experiments.insert(experiment->experiment_id);
}

void ApplyExperimentCreated(DecisionState& state, const events::Envelope& event) {
  const auto& created = event.experiment_created();
  if (state.experiments.count(created.experiment_id())) return;
  state.last_experiment_id = std::max(state.last_experiment_id, created.experiment_id());
  ExperimentRecord& experiment = state.experiments[created.experiment_id()];
  experiment.experiment_id = created.experiment_id();
  experiment.job_id = created.job_id();
  experiment.name = created.name();
  experiment.owner = created.owner();
  experiment.workspace_id = WorkspaceOrUncategorized(created.workspace_id());
  experiment.project_id = ProjectOrUncategorized(created.project_id());
  experiment.context_digest = created.context_digest();
  experiment.warm_start_checkpoint = created.warm_start_checkpoint_uuid();
  experiment.created_unix_micros = event.time_unix_micros();
  experiment.slots_per_trial = created.resources().slots();
  experiment.state =
      created.activate() ? events::EXPERIMENT_STATE_ACTIVE : events::EXPERIMENT_STATE_PAUSED;
  auto config = created.searcher_version() > experiments::kSearcherVersion
                    ? Result<experiments::ExperimentConfig>(Status::FailedPrecondition(
                          "it was created by a master with searcher version " +
                          std::to_string(created.searcher_version()) + "; this one has " +
                          std::to_string(experiments::kSearcherVersion)))
                    : experiments::ParseExperimentConfig(created.config_json());
  if (config.ok()) {
    auto searcher = experiments::NewSearcher(*config, created.seed());
    if (searcher.ok()) {
      experiment.config = std::make_shared<const experiments::ExperimentConfig>(*config);
      experiment.searcher = std::move(*searcher);
      experiment.searcher_config_json = created.config_json();
      experiment.searcher_seed = created.seed();
      AddOps(experiment, experiment.searcher->Start());
    } else {
      experiment.config_error = searcher.status().message();
    }
  } else {
    experiment.config_error = config.status().message();
  }
  // The experiment is a job from the start: its queue position and scheduling parameters hold
  // while it is paused and between its trials' runs.
  JobRecord& job = *state.jobs.FindOrMake(created.job_id()).first;
  job.type = events::TASK_TYPE_TRIAL;
  job.resource_pool = created.resources().resource_pool();
  job.priority = created.resources().priority();
  job.weight = created.resources().weight();
  job.max_slots = created.resources().max_slots();
  job.queue_position = static_cast<int64_t>(event.offset()) * kQueuePositionSpacing;
  job.submitted_offset = event.offset();
  job.submitted_time = event.time_unix_micros();
  job.user = created.owner();
  job.workspace_id = experiment.workspace_id;
  job.open = true;
  state.dirty_experiments.insert(experiment.experiment_id);
}

void ApplyWorkloadReported(DecisionState& state, const events::TrialWorkloadReported& reported) {
  TrialRecord* trial = FindTrial(state, reported.trial_id());
  if (trial == nullptr) return;
  if (trial->workload_allocation != reported.allocation_id()) {
    // A new process: it starts from the latest checkpoint.
    trial->workload_allocation = reported.allocation_id();
    trial->batches = trial->checkpoint_batches;
    trial->last_validation_batches = trial->checkpoint_batches;
    trial->last_answer.Clear();
  }
  trial->last_sequence = reported.sequence();
  trial->awaiting_answer = true;
  switch (reported.completed()) {
    case events::WORKLOAD_KIND_TRAIN: {
      trial->batches = reported.total_batches();
      ExperimentRecord* experiment = FindExperiment(state, trial->experiment_id);
      if (experiment != nullptr && experiment->searcher && !trial->ended()) {
        FeedSearcher(*experiment, {SearcherInput::Kind::kTrained, trial->request_id,
                                   reported.total_batches(), 0});
      }
      break;
    }
    case events::WORKLOAD_KIND_VALIDATE: {
      ExperimentRecord* experiment = FindExperiment(state, trial->experiment_id);
      if (experiment == nullptr || experiment->config == nullptr) break;
      double metric = SearcherMetricOf(*experiment->config, reported.metrics_json());
      trial->searcher_metric[reported.total_batches()] = metric;
      trial->validated_at = std::max(trial->validated_at, reported.total_batches());
      trial->last_validation_batches = reported.total_batches();
      if (experiment->running() && experiment->searcher && !trial->ended()) {
        AddOps(*experiment,
               FeedSearcher(*experiment, {SearcherInput::Kind::kValidated, trial->request_id,
                                          reported.total_batches(), metric}));
      }
      break;
    }
    default:
      break;
  }
}

bool RunsCommand(const experiments::ExperimentConfig& config) {
  return !config.entrypoint_argv.empty() || !experiments::IsTrialClassEntrypoint(config.entrypoint);
}

// A report of Determined's package: training feeds the searcher's progress, a validation its
// decisions, at the length the searcher counts in (max_time's time_metric, else steps).
void ApplyMetricsReported(DecisionState& state, const events::Envelope& event) {
  const auto& reported = event.trial_metrics_reported();
  TrialRecord* trial = FindTrial(state, reported.trial_id());
  if (trial == nullptr) return;
  if (auto identity = TrialReportIdentity(event)) {
    trial->last_reports[identity->first] = std::move(identity->second);
  }
  ExperimentRecord* experiment = FindExperiment(state, trial->experiment_id);
  if (experiment == nullptr || experiment->config == nullptr) return;
  const bool training = reported.group() == "training";
  if (!training && reported.group() != "validation") return;
  const auto& searcher = experiment->config->searcher;
  const auto metrics = nlohmann::json::parse(reported.metrics_json(), nullptr, false);
  int64_t length = reported.steps_completed();
  if (!searcher.time_metric.empty()) {
    auto time = MetricValue(metrics, searcher.time_metric);
    if (!time || !std::isfinite(*time)) return;  // not on the searcher's clock
    length = static_cast<int64_t>(std::floor(*time));
  }
  const bool feed = experiment->searcher && !trial->ended();
  if (training) {
    // Training only moves the searcher's progress, which an open-ended length never shows.
    if (feed && !searcher.open_ended) {
      FeedSearcher(*experiment, {SearcherInput::Kind::kTrained, trial->request_id, length, 0});
    }
    return;
  }
  const double metric =
      MetricValue(metrics, searcher.metric).value_or(std::numeric_limits<double>::quiet_NaN());
  trial->searcher_metric[reported.steps_completed()] = metric;
  trial->validated_at = std::max(trial->validated_at, length);
  trial->last_validation_batches = reported.steps_completed();
  if (feed && experiment->running()) {
    AddOps(*experiment, FeedSearcher(*experiment, {SearcherInput::Kind::kValidated,
                                                   trial->request_id, length, metric}));
  }
  state.dirty_experiments.insert(experiment->experiment_id);
}

void ApplyCheckpointSaved(DecisionState& state, const events::Envelope& event) {
  const auto& saved = event.checkpoint_saved();
  if (TrialRecord* trial = FindTrial(state, saved.trial_id())) {
    if (auto identity = TrialReportIdentity(event)) {
      trial->last_reports[identity->first] = std::move(identity->second);
    }
  }
  if (state.checkpoints.count(saved.uuid())) return;
  CheckpointRecord& checkpoint = state.checkpoints[saved.uuid()];
  checkpoint.uuid = saved.uuid();
  checkpoint.experiment_id = saved.experiment_id();
  checkpoint.trial_id = saved.trial_id();
  checkpoint.total_batches = saved.total_batches();
  checkpoint.size_bytes = saved.size_bytes();
  TrialRecord* trial = FindTrial(state, saved.trial_id());
  if (trial == nullptr) return;
  // A pbt clone waits for its parent's checkpoint of the round (experiment_reactor.cpp).
  if (const ExperimentRecord* experiment = FindExperiment(state, trial->experiment_id);
      experiment != nullptr && !experiment->pending_ops.empty()) {
    state.dirty_experiments.insert(experiment->experiment_id);
  }
  trial->checkpoints.push_back(saved.uuid());
  if (saved.total_batches() >= trial->checkpoint_batches) {
    trial->latest_checkpoint = saved.uuid();
    trial->checkpoint_batches = saved.total_batches();
  }
}

}  // namespace

void ApplyTrialTaskEvent(DecisionState& state, const events::Envelope& event) {
  switch (event.payload_case()) {
    case events::Envelope::kTaskSubmitted: {
      TrialRecord* trial = FindTrial(state, event.task_submitted().trial_id());
      if (trial == nullptr) return;
      trial->task_id = event.task_submitted().task_id();
      trial->runs++;
      trial->last_exit = TrialRunExit::kNone;
      trial->workload_allocation.clear();
      trial->last_sequence = -1;
      trial->last_answer.Clear();
      trial->awaiting_answer = false;
      state.dirty_experiments.insert(trial->experiment_id);
      return;
    }
    case events::Envelope::kTaskExited: {
      const auto& exited = event.task_exited();
      auto task = state.tasks.find(exited.task_id());
      if (task == state.tasks.end() || task->second.trial_id == 0 ||
          task->second.state == TaskState::kExited) {
        return;
      }
      TrialRecord* trial = FindTrial(state, task->second.trial_id);
      if (trial == nullptr || trial->task_id != exited.task_id()) return;
      const ExperimentRecord* experiment = FindExperiment(state, trial->experiment_id);
      const bool clean = exited.has_exit_code() && exited.exit_code() == 0;
      // EXIT counts only when this very process was told so.
      const bool told_to_exit = trial->workload_allocation == exited.allocation_id() &&
                                trial->last_answer.kind() == events::WORKLOAD_KIND_EXIT;
      const bool stop_wanted = experiment == nullptr ||
                               experiment->state != events::EXPERIMENT_STATE_ACTIVE ||
                               trial->closed;
      const bool killed = task->second.kill_requested;
      if ((killed || clean) && stop_wanted) {
        // The experiment asked its runs to stop (pause, cancel, kill, a closed trial).
        trial->last_exit = TrialRunExit::kClean;
      } else if (killed && task->second.kill_by_user) {
        trial->last_exit = TrialRunExit::kKilled;
      } else if (clean && told_to_exit) {
        trial->last_exit = TrialRunExit::kClean;
      } else if (clean && experiment != nullptr && experiment->config != nullptr &&
                 RunsCommand(*experiment->config)) {
        // A command (Determined's launcher runs it) drives itself: a clean exit nobody asked
        // for is its code's end. A trial class must be told to exit (Cairn's harness asks).
        trial->last_exit = TrialRunExit::kFinished;
      } else {
        // A crash, a lost agent, a kill the system made (a failed gang part, a disabled agent),
        // or a clean exit the master did not ask for: the run stopped short of its work.
        trial->last_exit = TrialRunExit::kFailed;
      }
      trial->last_exit_reason = exited.reason();
      if (trial->last_exit == TrialRunExit::kFailed && clean && !told_to_exit && !stop_wanted) {
        trial->last_exit_reason += " before the master told it to exit";
      }
      trial->task_id.clear();
      trial->workload_allocation.clear();
      trial->awaiting_answer = false;
      state.dirty_experiments.insert(trial->experiment_id);
      return;
    }
    case events::Envelope::kAllocationReleased: {
      auto task = state.tasks.find(event.allocation_released().task_id());
      if (task == state.tasks.end() || task->second.trial_id == 0) return;
      TrialRecord* trial = FindTrial(state, task->second.trial_id);
      if (trial == nullptr) return;
      trial->workload_allocation.clear();
      trial->last_sequence = -1;
      trial->last_answer.Clear();
      trial->awaiting_answer = false;
      state.dirty_experiments.insert(trial->experiment_id);
      return;
    }
    default:
      return;
  }
}

bool ApplyExperimentEvent(DecisionState& state, const events::Envelope& event) {
  using E = events::Envelope;
  using Kind = experiments::SearcherOp::Kind;
  switch (event.payload_case()) {
    case E::kExperimentCreated:
      ApplyExperimentCreated(state, event);
      return true;
    case E::kExperimentMoved: {
      const auto& moved = event.experiment_moved();
      ExperimentRecord* experiment = FindExperiment(state, moved.experiment_id());
      if (experiment == nullptr) return true;
      experiment->project_id = moved.project_id();
      experiment->workspace_id = moved.workspace_id();
      auto job = state.jobs.find(experiment->job_id);
      if (job != state.jobs.end()) job->second.workspace_id = moved.workspace_id();
      return true;
    }
    case E::kTrialCreated: {
      const auto& created = event.trial_created();
      ExperimentRecord* experiment = FindExperiment(state, created.experiment_id());
      if (experiment == nullptr || state.trials.count(created.trial_id())) return true;
      TrialRecord& trial = state.trials[created.trial_id()];
      trial.trial_id = created.trial_id();
      trial.experiment_id = created.experiment_id();
      trial.request_id = created.request_id();
      trial.hparams_json = created.hparams_json();
      trial.warm_start_checkpoint = created.warm_start_checkpoint_uuid();
      trial.cloned_from_trial = created.cloned_from_trial_id();
      experiment->trial_ids.push_back(trial.trial_id);
      experiment->trial_by_request[trial.request_id] = trial.trial_id;
      state.last_trial_id = std::max(state.last_trial_id, trial.trial_id);
      RemoveOp(*experiment, Kind::kCreateTrial, trial.request_id);
      state.dirty_experiments.insert(experiment->experiment_id);
      return true;
    }
    case E::kTrialTrainTo:
    case E::kTrialClosed: {
      const bool train = event.has_trial_train_to();
      TrialRecord* trial = FindTrial(
          state, train ? event.trial_train_to().trial_id() : event.trial_closed().trial_id());
      ExperimentRecord* experiment = trial ? FindExperiment(state, trial->experiment_id) : nullptr;
      if (experiment == nullptr) return true;
      if (train) {
        trial->train_to = event.trial_train_to().length_batches();
      } else {
        trial->closed = true;
      }
      RemoveOp(*experiment, train ? Kind::kTrainTo : Kind::kCloseTrial, trial->request_id);
      state.dirty_experiments.insert(experiment->experiment_id);
      return true;
    }
    case E::kTrialRestarted: {
      TrialRecord* trial = FindTrial(state, event.trial_restarted().trial_id());
      if (trial == nullptr) return true;
      trial->restarts = event.trial_restarted().restarts();
      trial->last_exit = TrialRunExit::kNone;
      state.dirty_experiments.insert(trial->experiment_id);
      return true;
    }
    case E::kTrialEnded: {
      TrialRecord* trial = FindTrial(state, event.trial_ended().trial_id());
      ExperimentRecord* experiment = trial ? FindExperiment(state, trial->experiment_id) : nullptr;
      if (experiment == nullptr || trial->ended()) return true;
      trial->state = event.trial_ended().state();
      trial->last_exit = TrialRunExit::kNone;
      if (experiment->running() && experiment->searcher) {
        // Done early (errored, canceled): its slot goes to another trial. A trial the searcher
        // closed is already done for it, and the searcher ignores it.
        AddOps(*experiment, FeedSearcher(*experiment, {SearcherInput::Kind::kExitedEarly,
                                                       trial->request_id, 0, 0}));
      }
      state.dirty_experiments.insert(experiment->experiment_id);
      return true;
    }
    case E::kExperimentStateChanged: {
      const auto& changed = event.experiment_state_changed();
      ExperimentRecord* experiment = FindExperiment(state, changed.experiment_id());
      if (experiment == nullptr) return true;
      experiment->state = changed.state();
      // Searcher decisions are ignored once the experiment stops; its shutdown is what stopped it.
      if (!experiment->running()) experiment->pending_ops.clear();
      if (experiment->terminal()) {
        auto job = state.jobs.find(experiment->job_id);
        if (job != state.jobs.end()) job->second.open = false;
      }
      state.dirty_experiments.insert(experiment->experiment_id);
      return true;
    }
    case E::kTrialWorkloadReported:
      ApplyWorkloadReported(state, event.trial_workload_reported());
      state.dirty_experiments.insert(event.trial_workload_reported().experiment_id());
      return true;
    case E::kTrialWorkloadAssigned: {
      const auto& assigned = event.trial_workload_assigned();
      TrialRecord* trial = FindTrial(state, assigned.trial_id());
      if (trial == nullptr || trial->workload_allocation != assigned.allocation_id() ||
          trial->last_sequence != assigned.sequence()) {
        return true;
      }
      trial->last_answer = assigned;
      trial->awaiting_answer = false;
      return true;
    }
    case E::kCheckpointSaved:
      ApplyCheckpointSaved(state, event);
      return true;
    case E::kTrialMetricsReported:
      ApplyMetricsReported(state, event);
      return true;
    case E::kTrialProgressReported:
      if (TrialRecord* trial = FindTrial(state, event.trial_progress_reported().trial_id())) {
        if (auto identity = TrialReportIdentity(event)) {
          trial->last_reports[identity->first] = std::move(identity->second);
        }
      }
      return true;
    case E::kTrialPreemptionAcknowledged:
      if (TrialRecord* trial = FindTrial(state, event.trial_preemption_acknowledged().trial_id())) {
        trial->preemption_acked = event.trial_preemption_acknowledged().allocation_id();
      }
      return true;
    case E::kTrialLogPolicyMatched: {
      const auto& matched = event.trial_log_policy_matched();
      TrialRecord* trial = FindTrial(state, matched.trial_id());
      if (trial == nullptr) return true;
      if (!matched.policy_name().empty()) trial->log_policy_matched = matched.policy_name();
      if (trial->log_policy_run != matched.task_id()) {
        trial->log_policy_run = matched.task_id();
        trial->matched_log_policies.clear();
      }
      trial->matched_log_policies.insert(
          experiments::LogPolicyKey({matched.policy_name(), matched.pattern(), matched.action()}));
      if (matched.action() == experiments::kLogActionCancelRetries) {
        trial->dont_retry_task_id = matched.task_id();
      } else if (matched.action() == experiments::kLogActionExcludeNode &&
                 std::find(trial->excluded_agents.begin(), trial->excluded_agents.end(),
                           matched.agent_id()) == trial->excluded_agents.end()) {
        trial->excluded_agents.push_back(matched.agent_id());
      }
      state.dirty_experiments.insert(trial->experiment_id);
      return true;
    }
    case E::kTrialEarlyExitReported:
      if (TrialRecord* trial = FindTrial(state, event.trial_early_exit_reported().trial_id())) {
        trial->early_exit = event.trial_early_exit_reported().reason();
        state.dirty_experiments.insert(trial->experiment_id);
      }
      return true;
    case E::kTensorboardFilesDeleted:
      state.tensorboard_deletions.push_back(
          {event.tensorboard_files_deleted().experiment_id(), event.time_unix_micros()});
      return true;
    case E::kCheckpointsDeleted:
      for (const auto& uuid : event.checkpoints_deleted().uuids()) {
        auto it = state.checkpoints.find(uuid);
        if (it != state.checkpoints.end() && !it->second.deleted) {
          it->second.deleted = true;
          state.deleted_checkpoints.push_back(uuid);
        }
      }
      return true;
    case E::kExperimentUpdated: {
      // Descriptions, notes and labels are the projections' business; the name names its runs.
      const auto& updated = event.experiment_updated();
      ExperimentRecord* experiment = FindExperiment(state, updated.experiment_id());
      if (experiment == nullptr) return true;
      if (updated.has_name()) experiment->name = updated.name();
      if (updated.has_save_experiment_best() && experiment->config != nullptr) {
        auto json = WithGcPolicy(experiment->searcher_config_json, updated.save_experiment_best(),
                                 updated.save_trial_best(), updated.save_trial_latest());
        auto config = json.ok() ? experiments::ParseExperimentConfig(*json)
                                : Result<experiments::ExperimentConfig>(json.status());
        if (config.ok()) {
          experiment->config = std::make_shared<const experiments::ExperimentConfig>(*config);
          experiment->searcher_config_json = *json;
        }
      }
      return true;
    }
    case E::kExperimentArchived:
      if (ExperimentRecord* experiment =
              FindExperiment(state, event.experiment_archived().experiment_id())) {
        experiment->archived = event.experiment_archived().archived();
      }
      return true;
    case E::kExperimentDeleted:
      if (ExperimentRecord* experiment =
              FindExperiment(state, event.experiment_deleted().experiment_id())) {
        experiment->deleted = true;
      }
      return true;
    case E::kTrialKillRequested:
      if (TrialRecord* trial = FindTrial(state, event.trial_kill_requested().trial_id())) {
        trial->kill_requested = true;
        state.dirty_experiments.insert(trial->experiment_id);
      }
      return true;
    case E::kExperimentContinued:
      ApplyExperimentContinued(state, event.experiment_continued());
      return true;
    default:
      return false;
  }
}

Result<std::string> WithGcPolicy(const std::string& config_json, int save_experiment_best,
                                 int save_trial_best, int save_trial_latest) {
  nlohmann::json config = nlohmann::json::parse(config_json, nullptr, false);
  if (!config.is_object() || !config.contains("checkpoint_storage") ||
      !config["checkpoint_storage"].is_object()) {
    return Status::InvalidArgument("the experiment has no checkpoint_storage to collect from");
  }
  nlohmann::json& storage = config["checkpoint_storage"];
  storage["save_experiment_best"] = save_experiment_best;
  storage["save_trial_best"] = save_trial_best;
  storage["save_trial_latest"] = save_trial_latest;
  return config.dump();
}

}  // namespace cairn::commands
