#include "commands/experiments/experiment_snapshot.h"

#include <nlohmann/json.hpp>

#include "commands/experiments/experiment_state.h"
#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(ExperimentRecord, 22);
CAIRN_SNAPSHOT_COVERS(SearcherInput, 4);
CAIRN_SNAPSHOT_COVERS(experiments::SearcherOp, 7);
CAIRN_SNAPSHOT_COVERS(TrialRecord, 34);
CAIRN_SNAPSHOT_COVERS(CheckpointRecord, 6);

void EncodeExperiment(const ExperimentRecord& experiment, snapshot::Experiment& out) {
  out.set_experiment_id(experiment.experiment_id);
  out.set_name(experiment.name);
  out.set_job_id(experiment.job_id);
  out.set_owner(experiment.owner);
  out.set_workspace_id(experiment.workspace_id);
  out.set_project_id(experiment.project_id);
  out.set_context_digest(experiment.context_digest);
  out.set_warm_start_checkpoint(experiment.warm_start_checkpoint);
  out.set_created_unix_micros(experiment.created_unix_micros);
  out.set_state(experiment.state);
  out.set_slots_per_trial(experiment.slots_per_trial);
  out.set_has_searcher(experiment.searcher != nullptr);
  out.set_searcher_config_json(experiment.searcher_config_json);
  out.set_searcher_seed(experiment.searcher_seed);
  for (const auto& input : experiment.searcher_inputs) {
    auto* stored = out.add_searcher_inputs();
    stored->set_kind(static_cast<int32_t>(input.kind));
    stored->set_request_id(input.request_id);
    stored->set_batches(input.batches);
    stored->set_metric(input.metric);
  }
  for (const auto& op : experiment.pending_ops) {
    auto* stored = out.add_pending_ops();
    stored->set_kind(static_cast<int32_t>(op.kind));
    stored->set_request_id(op.request_id);
    stored->set_hparams_json(op.hparams.dump());
    stored->set_length_batches(op.length_batches);
    stored->set_reason(op.reason);
    stored->set_clone_of(op.clone_of);
    stored->set_clone_at_batches(op.clone_at_batches);
  }
  for (const auto& [request_id, trial_id] : experiment.trial_by_request) {
    auto* stored = out.add_trial_by_request();
    stored->set_request_id(request_id);
    stored->set_trial_id(trial_id);
  }
  for (int64_t trial_id : experiment.trial_ids) out.add_trial_ids(trial_id);
  out.set_config_error(experiment.config_error);
  out.set_archived(experiment.archived);
  out.set_deleted(experiment.deleted);
}

Result<ExperimentRecord> DecodeExperiment(snapshot::Experiment& in, ConfigCache& configs) {
  ExperimentRecord experiment;
  experiment.experiment_id = in.experiment_id();
  experiment.name = in.name();
  experiment.job_id = in.job_id();
  experiment.owner = in.owner();
  experiment.workspace_id = in.workspace_id();
  experiment.project_id = in.project_id();
  experiment.context_digest = in.context_digest();
  experiment.warm_start_checkpoint = in.warm_start_checkpoint();
  experiment.created_unix_micros = in.created_unix_micros();
  experiment.state = in.state();
  experiment.slots_per_trial = in.slots_per_trial();
  experiment.searcher_config_json = in.searcher_config_json();
  experiment.searcher_seed = in.searcher_seed();
  if (in.has_searcher()) {
    auto& config = configs[in.searcher_config_json()];
    if (config == nullptr) {
      CAIRN_ASSIGN_OR_RETURN(auto parsed,
                             experiments::ParseExperimentConfig(in.searcher_config_json()));
      config = std::make_shared<const experiments::ExperimentConfig>(std::move(parsed));
    }
    CAIRN_ASSIGN_OR_RETURN(experiment.searcher,
                           experiments::NewSearcher(*config, in.searcher_seed()));
    experiment.config = config;
    // Its operations were recorded or are pending below: the calls only bring it where it was.
    experiment.searcher->Start();
    for (const auto& input : in.searcher_inputs()) {
      if (input.kind() < 0 || input.kind() > static_cast<int>(SearcherInput::Kind::kExitedEarly)) {
        return Status::InvalidArgument("unknown searcher input kind " +
                                       std::to_string(input.kind()));
      }
      FeedSearcher(experiment, {static_cast<SearcherInput::Kind>(input.kind()), input.request_id(),
                                input.batches(), input.metric()});
    }
  }
  for (const auto& op : in.pending_ops()) {
    experiments::SearcherOp decoded;
    if (op.kind() < 0 || op.kind() > static_cast<int>(experiments::SearcherOp::Kind::kShutdown)) {
      return Status::InvalidArgument("unknown searcher operation kind " +
                                     std::to_string(op.kind()));
    }
    decoded.kind = static_cast<experiments::SearcherOp::Kind>(op.kind());
    decoded.request_id = op.request_id();
    decoded.hparams = nlohmann::json::parse(op.hparams_json(), nullptr, false);
    if (decoded.hparams.is_discarded()) {
      return Status::InvalidArgument("a pending searcher operation's hyperparameters do not parse");
    }
    decoded.length_batches = op.length_batches();
    decoded.reason = op.reason();
    decoded.clone_of = op.clone_of();
    decoded.clone_at_batches = op.clone_at_batches();
    experiment.pending_ops.push_back(std::move(decoded));
  }
  for (const auto& entry : in.trial_by_request()) {
    experiment.trial_by_request[entry.request_id()] = entry.trial_id();
  }
  experiment.trial_ids.assign(in.trial_ids().begin(), in.trial_ids().end());
  experiment.config_error = in.config_error();
  experiment.archived = in.archived();
  experiment.deleted = in.deleted();
  return experiment;
}

void EncodeTrial(const TrialRecord& trial, snapshot::Trial& out) {
  out.set_trial_id(trial.trial_id);
  out.set_experiment_id(trial.experiment_id);
  out.set_request_id(trial.request_id);
  out.set_hparams_json(trial.hparams_json);
  out.set_warm_start_checkpoint(trial.warm_start_checkpoint);
  out.set_cloned_from_trial(trial.cloned_from_trial);
  out.set_log_policy_matched(trial.log_policy_matched);
  out.set_dont_retry_task_id(trial.dont_retry_task_id);
  for (const auto& agent : trial.excluded_agents) out.add_excluded_agents(agent);
  out.set_log_policy_run(trial.log_policy_run);
  for (const auto& key : trial.matched_log_policies) out.add_matched_log_policies(key);
  out.set_state(trial.state);
  out.set_train_to(trial.train_to);
  out.set_closed(trial.closed);
  out.set_validated_at(trial.validated_at);
  for (const auto& [batches, value] : trial.searcher_metric) {
    auto* metric = out.add_searcher_metric();
    metric->set_batches(batches);
    metric->set_value(value);
  }
  out.set_latest_checkpoint(trial.latest_checkpoint);
  out.set_checkpoint_batches(trial.checkpoint_batches);
  for (const auto& uuid : trial.checkpoints) out.add_checkpoints(uuid);
  out.set_restarts(trial.restarts);
  out.set_runs(trial.runs);
  out.set_task_id(trial.task_id);
  out.set_last_exit(static_cast<int32_t>(trial.last_exit));
  out.set_last_exit_reason(trial.last_exit_reason);
  out.set_workload_allocation(trial.workload_allocation);
  out.set_last_sequence(trial.last_sequence);
  out.set_awaiting_answer(trial.awaiting_answer);
  *out.mutable_last_answer() = trial.last_answer;
  out.set_batches(trial.batches);
  out.set_last_validation_batches(trial.last_validation_batches);
  out.set_kill_requested(trial.kill_requested);
  out.mutable_last_reports()->insert(trial.last_reports.begin(), trial.last_reports.end());
  out.set_preemption_acked(trial.preemption_acked);
  out.set_early_exit(trial.early_exit);
}

TrialRecord DecodeTrial(snapshot::Trial& in) {
  TrialRecord trial;
  trial.trial_id = in.trial_id();
  trial.experiment_id = in.experiment_id();
  trial.request_id = in.request_id();
  trial.hparams_json = Take(in.mutable_hparams_json());
  trial.warm_start_checkpoint = in.warm_start_checkpoint();
  trial.cloned_from_trial = in.cloned_from_trial();
  trial.log_policy_matched = in.log_policy_matched();
  trial.dont_retry_task_id = in.dont_retry_task_id();
  trial.excluded_agents.assign(in.excluded_agents().begin(), in.excluded_agents().end());
  trial.log_policy_run = in.log_policy_run();
  trial.matched_log_policies.insert(in.matched_log_policies().begin(),
                                    in.matched_log_policies().end());
  trial.state = in.state();
  trial.train_to = in.train_to();
  trial.closed = in.closed();
  trial.validated_at = in.validated_at();
  for (const auto& metric : in.searcher_metric()) {
    trial.searcher_metric[metric.batches()] = metric.value();
  }
  trial.latest_checkpoint = in.latest_checkpoint();
  trial.checkpoint_batches = in.checkpoint_batches();
  trial.checkpoints.assign(in.checkpoints().begin(), in.checkpoints().end());
  trial.restarts = in.restarts();
  trial.runs = in.runs();
  trial.task_id = in.task_id();
  trial.last_exit = static_cast<TrialRunExit>(in.last_exit());
  trial.last_exit_reason = in.last_exit_reason();
  trial.workload_allocation = in.workload_allocation();
  trial.last_sequence = in.last_sequence();
  trial.awaiting_answer = in.awaiting_answer();
  trial.last_answer.Swap(in.mutable_last_answer());
  trial.batches = in.batches();
  trial.last_validation_batches = in.last_validation_batches();
  trial.kill_requested = in.kill_requested();
  trial.last_reports.insert(in.last_reports().begin(), in.last_reports().end());
  trial.preemption_acked = in.preemption_acked();
  trial.early_exit = in.early_exit();
  return trial;
}

void EncodeCheckpoint(const CheckpointRecord& checkpoint, snapshot::Checkpoint& stored) {
  stored.set_uuid(checkpoint.uuid);
  stored.set_experiment_id(checkpoint.experiment_id);
  stored.set_trial_id(checkpoint.trial_id);
  stored.set_total_batches(checkpoint.total_batches);
  stored.set_size_bytes(checkpoint.size_bytes);
  stored.set_deleted(checkpoint.deleted);
}

CheckpointRecord DecodeCheckpoint(const snapshot::Checkpoint& stored) {
  return CheckpointRecord{stored.uuid(),          stored.experiment_id(), stored.trial_id(),
                          stored.total_batches(), stored.size_bytes(),    stored.deleted()};
}

}  // namespace cairn::commands
