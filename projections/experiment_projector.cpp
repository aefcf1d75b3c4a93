#include "projections/experiment_projector.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "events/envelope_util.h"
#include "projections/experiment_keys.h"

namespace cairn::projections {

using namespace experiment_keys;

namespace {

std::optional<int64_t> ParseId(std::string_view text) {
  int64_t id = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return id;
}

bool IsTerminal(events::ExperimentState state) {
  return state == events::EXPERIMENT_STATE_COMPLETED ||
         state == events::EXPERIMENT_STATE_CANCELED || state == events::EXPERIMENT_STATE_ERROR;
}

// A trial that has not ended shows its experiment's state while the experiment is paused or
// stopping (and once it ended without the trial ending first); ACTIVE otherwise.
events::ExperimentState TrialStateUnder(events::ExperimentState experiment_state) {
  if (experiment_state == events::EXPERIMENT_STATE_UNSPECIFIED) {
    return events::EXPERIMENT_STATE_ACTIVE;
  }
  return experiment_state;
}

// searcher.name, searcher.metric and searcher.smaller_is_better (Determined's default: true) of
// the effective configuration.
void ReadSearcher(const std::string& config_json, views::ExperimentView& experiment) {
  experiment.set_smaller_is_better(true);
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, false);
  if (!config.is_object()) return;
  auto searcher = config.find("searcher");
  if (searcher == config.end() || !searcher->is_object()) return;
  auto name = searcher->find("name");
  if (name != searcher->end() && name->is_string()) {
    experiment.set_searcher_type(name->get<std::string>());
  }
  auto metric = searcher->find("metric");
  if (metric != searcher->end() && metric->is_string()) {
    experiment.set_searcher_metric(metric->get<std::string>());
  }
  auto smaller = searcher->find("smaller_is_better");
  if (smaller != searcher->end() && smaller->is_boolean()) {
    experiment.set_smaller_is_better(smaller->get<bool>());
  }
}

std::optional<double> MetricValue(const std::string& metrics_json, const std::string& metric) {
  if (metric.empty()) return std::nullopt;
  const nlohmann::json metrics = nlohmann::json::parse(metrics_json, nullptr, false);
  if (!metrics.is_object()) return std::nullopt;
  auto it = metrics.find(metric);
  if (it == metrics.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (std::isnan(value)) return std::nullopt;
  return value;
}

bool Better(double candidate, double best, bool smaller_is_better) {
  return smaller_is_better ? candidate < best : candidate > best;
}

// The views one event about a trial changes, loaded together: the trial and its experiment.
struct TrialAndExperiment {
  views::TrialView* trial = nullptr;
  views::ExperimentView* experiment = nullptr;
};

// Loads the trial and its experiment into `scratch`; nullopt when either is unknown, or when
// the event names another experiment than the trial's (experiment_id 0: no check).
Result<std::optional<TrialAndExperiment>> LoadTrial(ViewStore& store, ScratchArena& scratch,
                                                    int64_t trial_id, int64_t experiment_id) {
  if (trial_id <= 0) return std::optional<TrialAndExperiment>();
  TrialAndExperiment loaded;
  CAIRN_ASSIGN_OR_RETURN(loaded.trial,
                         OpenView(store, TrialKey(trial_id), scratch.Create<views::TrialView>()));
  if (loaded.trial == nullptr) return std::optional<TrialAndExperiment>();
  if (experiment_id != 0 && loaded.trial->experiment_id() != experiment_id) {
    return std::optional<TrialAndExperiment>();
  }
  CAIRN_ASSIGN_OR_RETURN(loaded.experiment,
                         OpenView(store, ExperimentKey(loaded.trial->experiment_id()),
                                  scratch.Create<views::ExperimentView>()));
  if (loaded.experiment == nullptr) {
    return Status::Corruption("experiments: trial " + std::to_string(trial_id) +
                              " names missing experiment " +
                              std::to_string(loaded.trial->experiment_id()));
  }
  return std::optional<TrialAndExperiment>(loaded);
}

Status PutTrial(ViewStore& store, const Envelope& event, views::TrialView& trial) {
  trial.set_last_event_offset(event.offset());
  return store.PutMessage(TrialKey(trial.trial_id()), trial);
}

Status PutExperiment(ViewStore& store, const Envelope& event, views::ExperimentView& experiment) {
  experiment.set_last_event_offset(event.offset());
  return store.PutMessage(ExperimentKey(experiment.experiment_id()), experiment);
}

Status OnExperimentCreated(const Envelope& event, ViewStore& store) {
  const auto& created = event.experiment_created();
  if (created.experiment_id() <= 0) return Status::Ok();
  const std::string key = ExperimentKey(created.experiment_id());
  CAIRN_ASSIGN_OR_RETURN(auto existing, store.Get(key));
  if (existing) return Status::Ok();  // an experiment is created once; a repeat changes nothing
  ScratchArena scratch;
  views::ExperimentView& experiment = *scratch.Create<views::ExperimentView>();
  experiment.set_experiment_id(created.experiment_id());
  experiment.set_job_id(created.job_id());
  experiment.set_name(created.name());
  experiment.set_owner(created.owner());
  experiment.set_original_config(created.original_config());
  experiment.set_config_json(created.config_json());
  experiment.set_seed(created.seed());
  experiment.set_context_digest(created.context_digest());
  experiment.set_warm_start_checkpoint_uuid(created.warm_start_checkpoint_uuid());
  experiment.set_context_bytes(created.context_bytes());
  experiment.set_template_name(created.template_name());
  // 0 (events from before workspaces): Uncategorized, as the readers take it.
  experiment.set_workspace_id(created.workspace_id());
  experiment.set_project_id(created.project_id());
  *experiment.mutable_resources() = created.resources();
  experiment.set_state(created.activate() ? events::EXPERIMENT_STATE_ACTIVE
                                          : events::EXPERIMENT_STATE_PAUSED);
  experiment.set_start_time_unix_micros(event.time_unix_micros());
  ReadSearcher(created.config_json(), experiment);
  experiment.set_created_offset(event.offset());
  CAIRN_RETURN_IF_ERROR(PutExperiment(store, event, experiment));
  if (created.job_id().empty()) return Status::Ok();
  return store.Put(NameKey(kJobPrefix, created.job_id()), std::to_string(created.experiment_id()));
}

Status OnTrialCreated(const Envelope& event, ViewStore& store) {
  const auto& created = event.trial_created();
  if (created.experiment_id() <= 0 || created.trial_id() <= 0) return Status::Ok();
  const std::string trial_key = TrialKey(created.trial_id());
  CAIRN_ASSIGN_OR_RETURN(auto existing, store.Get(trial_key));
  if (existing) return Status::Ok();  // a trial is created once
  ScratchArena scratch;
  views::ExperimentView& experiment = *scratch.Create<views::ExperimentView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists,
                         store.GetMessage(ExperimentKey(created.experiment_id()), &experiment));
  if (!exists) return Status::Ok();
  views::TrialView& trial = *scratch.Create<views::TrialView>();
  trial.set_trial_id(created.trial_id());
  trial.set_experiment_id(created.experiment_id());
  trial.set_request_id(created.request_id());
  trial.set_hparams_json(created.hparams_json());
  trial.set_state(IsTerminal(experiment.state()) ? events::EXPERIMENT_STATE_ACTIVE
                                                 : TrialStateUnder(experiment.state()));
  trial.set_start_time_unix_micros(event.time_unix_micros());
  trial.set_searcher_reason(created.reason());
  trial.set_warm_start_checkpoint_uuid(created.warm_start_checkpoint_uuid().empty()
                                           ? experiment.warm_start_checkpoint_uuid()
                                           : created.warm_start_checkpoint_uuid());
  trial.set_cloned_from_trial_id(created.cloned_from_trial_id());
  trial.set_created_offset(event.offset());
  CAIRN_RETURN_IF_ERROR(PutTrial(store, event, trial));
  experiment.add_trial_ids(created.trial_id());
  experiment.set_progress(created.progress());
  return PutExperiment(store, event, experiment);
}

// TrialTrainTo, TrialClosed, TrialRestarted, TrialEnded and TrialLogPolicyMatched.
Status OnTrialDecision(const Envelope& event, ViewStore& store) {
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  switch (event.payload_case()) {
    case Envelope::kTrialTrainTo:
      trial_id = event.trial_train_to().trial_id();
      experiment_id = event.trial_train_to().experiment_id();
      break;
    case Envelope::kTrialClosed:
      trial_id = event.trial_closed().trial_id();
      experiment_id = event.trial_closed().experiment_id();
      break;
    case Envelope::kTrialRestarted:
      trial_id = event.trial_restarted().trial_id();
      experiment_id = event.trial_restarted().experiment_id();
      break;
    case Envelope::kTrialEnded:
      trial_id = event.trial_ended().trial_id();
      experiment_id = event.trial_ended().experiment_id();
      break;
    case Envelope::kTrialLogPolicyMatched:
      if (event.trial_log_policy_matched().policy_name().empty()) return Status::Ok();
      trial_id = event.trial_log_policy_matched().trial_id();
      experiment_id = event.trial_log_policy_matched().experiment_id();
      break;
    default:
      return Status::Ok();
  }
  ScratchArena scratch;
  CAIRN_ASSIGN_OR_RETURN(auto loaded, LoadTrial(store, scratch, trial_id, experiment_id));
  if (!loaded) return Status::Ok();
  views::TrialView& trial = *loaded->trial;
  views::ExperimentView& experiment = *loaded->experiment;
  std::optional<double> progress;
  switch (event.payload_case()) {
    case Envelope::kTrialTrainTo:
      trial.set_target_length_batches(event.trial_train_to().length_batches());
      trial.set_searcher_reason(event.trial_train_to().reason());
      progress = event.trial_train_to().progress();
      break;
    case Envelope::kTrialClosed:
      trial.set_closed(true);
      trial.set_searcher_reason(event.trial_closed().reason());
      progress = event.trial_closed().progress();
      break;
    case Envelope::kTrialRestarted:
      trial.set_restarts(event.trial_restarted().restarts());
      trial.set_restart_reason(event.trial_restarted().reason());
      break;
    case Envelope::kTrialLogPolicyMatched:
      trial.set_log_policy_matched(event.trial_log_policy_matched().policy_name());
      break;
    default: {
      const auto& ended = event.trial_ended();
      if (trial.ended() || !IsTerminal(ended.state())) return Status::Ok();
      trial.set_ended(true);
      trial.set_state(ended.state());
      trial.set_end_reason(ended.reason());
      trial.set_end_time_unix_micros(event.time_unix_micros());
      progress = ended.progress();
      break;
    }
  }
  CAIRN_RETURN_IF_ERROR(PutTrial(store, event, trial));
  if (!progress) return Status::Ok();
  experiment.set_progress(*progress);
  return PutExperiment(store, event, experiment);
}

// The experiment's state, and with it the state its trials show until they end.
Status OnExperimentStateChanged(const Envelope& event, ViewStore& store) {
  const auto& changed = event.experiment_state_changed();
  if (changed.experiment_id() <= 0) return Status::Ok();
  ScratchArena scratch;
  views::ExperimentView& experiment = *scratch.Create<views::ExperimentView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists,
                         store.GetMessage(ExperimentKey(changed.experiment_id()), &experiment));
  if (!exists) return Status::Ok();
  const bool terminal = IsTerminal(changed.state());
  experiment.set_state(changed.state());
  experiment.set_state_reason(changed.reason());
  experiment.set_progress(
      changed.state() == events::EXPERIMENT_STATE_COMPLETED ? 1.0 : changed.progress());
  experiment.set_end_time_unix_micros(terminal ? event.time_unix_micros() : 0);
  CAIRN_RETURN_IF_ERROR(PutExperiment(store, event, experiment));
  views::TrialView& trial = *scratch.Create<views::TrialView>();
  for (int64_t trial_id : experiment.trial_ids()) {
    const std::string key = TrialKey(trial_id);
    CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &trial));
    if (!found) {
      return Status::Corruption("experiments: experiment " +
                                std::to_string(changed.experiment_id()) + " lists missing trial " +
                                std::to_string(trial_id));
    }
    const events::ExperimentState shown = TrialStateUnder(changed.state());
    if (trial.ended() || trial.state() == shown) continue;
    trial.set_state(shown);
    trial.set_end_time_unix_micros(terminal ? event.time_unix_micros() : 0);
    CAIRN_RETURN_IF_ERROR(PutTrial(store, event, trial));
  }
  return Status::Ok();
}

// ExperimentUpdated, ExperimentArchived, ExperimentDeleted: what users change on an experiment
// itself.
Status OnExperimentEdited(const Envelope& event, ViewStore& store) {
  const int64_t experiment_id =
      event.has_experiment_updated()    ? event.experiment_updated().experiment_id()
      : event.has_experiment_archived() ? event.experiment_archived().experiment_id()
                                        : event.experiment_deleted().experiment_id();
  ScratchArena scratch;
  views::ExperimentView& experiment = *scratch.Create<views::ExperimentView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(ExperimentKey(experiment_id), &experiment));
  if (!exists) return Status::Ok();
  if (event.has_experiment_updated()) {
    const auto& updated = event.experiment_updated();
    if (updated.has_name()) experiment.set_name(updated.name());
    if (updated.has_description()) experiment.set_description(updated.description());
    if (updated.has_notes()) experiment.set_notes(updated.notes());
    if (updated.labels_set()) {
      experiment.set_labels_set(true);
      *experiment.mutable_labels() = updated.labels();
    }
    if (updated.has_save_experiment_best()) {
      // det experiment config shows the policy in force.
      nlohmann::json config = nlohmann::json::parse(experiment.config_json(), nullptr, false);
      if (config.is_object() && config.contains("checkpoint_storage") &&
          config["checkpoint_storage"].is_object()) {
        config["checkpoint_storage"]["save_experiment_best"] = updated.save_experiment_best();
        config["checkpoint_storage"]["save_trial_best"] = updated.save_trial_best();
        config["checkpoint_storage"]["save_trial_latest"] = updated.save_trial_latest();
        experiment.set_config_json(config.dump());
      }
    }
  } else if (event.has_experiment_archived()) {
    experiment.set_archived(event.experiment_archived().archived());
  } else {
    experiment.set_deleted(true);
  }
  return PutExperiment(store, event, experiment);
}

// The experiment and its single trial are active again, under the new configuration.
Status OnExperimentContinued(const Envelope& event, ViewStore& store) {
  const auto& continued = event.experiment_continued();
  ScratchArena scratch;
  CAIRN_ASSIGN_OR_RETURN(
      auto loaded, LoadTrial(store, scratch, continued.trial_id(), continued.experiment_id()));
  if (!loaded) return Status::Ok();
  views::ExperimentView& experiment = *loaded->experiment;
  if (!IsTerminal(experiment.state())) return Status::Ok();
  experiment.set_config_json(continued.config_json());
  ReadSearcher(continued.config_json(), experiment);
  experiment.set_state(events::EXPERIMENT_STATE_ACTIVE);
  experiment.set_state_reason("continued");
  experiment.set_end_time_unix_micros(0);
  CAIRN_RETURN_IF_ERROR(PutExperiment(store, event, experiment));
  views::TrialView& trial = *loaded->trial;
  trial.set_ended(false);
  trial.set_closed(false);
  trial.set_state(events::EXPERIMENT_STATE_ACTIVE);
  trial.set_end_time_unix_micros(0);
  trial.clear_end_reason();
  trial.set_restarts(0);
  return PutTrial(store, event, trial);
}

// A user moved the experiment's job or changed its scheduling parameters.
Status OnExperimentJobChanged(const Envelope& event, ViewStore& store) {
  const auto& changed = event.job_queue_changed();
  CAIRN_ASSIGN_OR_RETURN(auto experiment_id, store.Get(NameKey(kJobPrefix, changed.job_id())));
  if (!experiment_id) return Status::Ok();
  const std::optional<int64_t> id = ParseId(*experiment_id);
  if (!id) return Status::Corruption("experiments: job index holds '" + *experiment_id + "'");
  ScratchArena scratch;
  views::ExperimentView& experiment = *scratch.Create<views::ExperimentView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(ExperimentKey(*id), &experiment));
  if (!exists) {
    return Status::Corruption("experiments: job " + changed.job_id() +
                              " names missing experiment " + *experiment_id);
  }
  auto* resources = experiment.mutable_resources();
  resources->set_priority(changed.priority());
  resources->set_weight(changed.weight());
  resources->set_resource_pool(changed.resource_pool());
  resources->set_max_slots(changed.max_slots());
  experiment.set_resources_changed(true);
  return PutExperiment(store, event, experiment);
}

// The checkpoint saved at `total_batches`, when it is the trial's latest, takes a result
// reported for the same batch count.
Status AttachToCheckpoint(ViewStore& store, const views::TrialView& trial, bool validation,
                          const views::MetricsResult& result) {
  if (trial.latest_checkpoint_uuid().empty()) return Status::Ok();
  const std::string key = NameKey(kCheckpointPrefix, trial.latest_checkpoint_uuid());
  ScratchArena scratch;
  views::CheckpointView& checkpoint = *scratch.Create<views::CheckpointView>();
  CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(key, &checkpoint));
  if (!exists || checkpoint.total_batches() != result.total_batches()) return Status::Ok();
  *(validation ? checkpoint.mutable_validation() : checkpoint.mutable_training()) = result;
  return store.PutMessage(key, checkpoint);
}

// One metrics report of a trial: a workload row, and the trial's latest (and best) results.
struct MetricsReport {
  int64_t trial_id = 0;
  int64_t experiment_id = 0;
  events::WorkloadKind kind = events::WORKLOAD_KIND_UNSPECIFIED;  // TRAIN, VALIDATE, or custom
  std::string group;  // Determined's group; "" for Cairn's harness
  int64_t total_batches = 0;
  int64_t num_inputs = 0;
  const std::string* metrics_json = nullptr;
};

Status RecordMetrics(const Envelope& event, ViewStore& store, const MetricsReport& report) {
  ScratchArena scratch;
  CAIRN_ASSIGN_OR_RETURN(auto loaded,
                         LoadTrial(store, scratch, report.trial_id, report.experiment_id));
  if (!loaded) return Status::Ok();
  views::TrialView& trial = *loaded->trial;
  const views::ExperimentView& experiment = *loaded->experiment;
  const bool training = report.kind == events::WORKLOAD_KIND_TRAIN;
  const bool validation = report.kind == events::WORKLOAD_KIND_VALIDATE;

  views::WorkloadView& workload = *scratch.Create<views::WorkloadView>();
  workload.set_trial_id(trial.trial_id());
  workload.set_kind(report.kind);
  workload.set_group(report.group);
  workload.set_total_batches(report.total_batches);
  workload.set_num_inputs(report.num_inputs);
  workload.set_metrics_json(*report.metrics_json);
  workload.set_end_time_unix_micros(event.time_unix_micros());
  workload.set_offset(event.offset());
  CAIRN_RETURN_IF_ERROR(store.PutMessage(WorkloadKey(trial.trial_id(), event.offset()), workload));
  if (!training && !validation) return PutTrial(store, event, trial);

  views::MetricsResult& result = *scratch.Create<views::MetricsResult>();
  result.set_total_batches(report.total_batches);
  result.set_num_inputs(report.num_inputs);
  result.set_metrics_json(*report.metrics_json);
  result.set_end_time_unix_micros(event.time_unix_micros());
  trial.set_total_batches_processed(
      std::max(trial.total_batches_processed(), report.total_batches));
  if (training) {
    *trial.mutable_latest_training() = result;
  } else {
    const std::optional<double> metric =
        MetricValue(*report.metrics_json, experiment.searcher_metric());
    if (metric) result.set_searcher_metric(*metric);
    *trial.mutable_latest_validation() = result;
    const auto& best = trial.best_validation();
    if (metric && (!best.has_searcher_metric() ||
                   Better(*metric, best.searcher_metric(), experiment.smaller_is_better()))) {
      *trial.mutable_best_validation() = result;
    }
  }
  CAIRN_RETURN_IF_ERROR(AttachToCheckpoint(store, trial, validation, result));
  return PutTrial(store, event, trial);
}

Status OnWorkloadReported(const Envelope& event, ViewStore& store) {
  const auto& reported = event.trial_workload_reported();
  const bool training = reported.completed() == events::WORKLOAD_KIND_TRAIN;
  const bool validation = reported.completed() == events::WORKLOAD_KIND_VALIDATE;
  // Sequence 0 reports nothing; a completed checkpoint is recorded by CheckpointSaved.
  if (reported.sequence() == 0 || (!training && !validation)) return Status::Ok();
  return RecordMetrics(
      event, store,
      {reported.trial_id(), reported.experiment_id(), reported.completed(), "",
       reported.total_batches(), training ? reported.batches() : 0, &reported.metrics_json()});
}

Status OnMetricsReported(const Envelope& event, ViewStore& store) {
  const auto& reported = event.trial_metrics_reported();
  const events::WorkloadKind kind = reported.group() == "training" ? events::WORKLOAD_KIND_TRAIN
                                    : reported.group() == "validation"
                                        ? events::WORKLOAD_KIND_VALIDATE
                                        : events::WORKLOAD_KIND_UNSPECIFIED;
  return RecordMetrics(event, store,
                       {reported.trial_id(), reported.experiment_id(), kind, reported.group(),
                        reported.steps_completed(), 0, &reported.metrics_json()});
}

Status OnProgressReported(const Envelope& event, ViewStore& store) {
  const auto& reported = event.trial_progress_reported();
  ScratchArena scratch;
  CAIRN_ASSIGN_OR_RETURN(auto loaded,
                         LoadTrial(store, scratch, reported.trial_id(), reported.experiment_id()));
  if (!loaded) return Status::Ok();
  loaded->trial->set_progress(reported.progress());
  return PutTrial(store, event, *loaded->trial);
}

Status OnCheckpointSaved(const Envelope& event, ViewStore& store) {
  const auto& saved = event.checkpoint_saved();
  if (saved.uuid().empty()) return Status::Ok();
  const std::string key = NameKey(kCheckpointPrefix, saved.uuid());
  CAIRN_ASSIGN_OR_RETURN(auto existing, store.Get(key));
  if (existing) return Status::Ok();  // a checkpoint is saved once
  ScratchArena scratch;
  CAIRN_ASSIGN_OR_RETURN(auto loaded,
                         LoadTrial(store, scratch, saved.trial_id(), saved.experiment_id()));
  if (!loaded) return Status::Ok();
  views::TrialView& trial = *loaded->trial;
  views::ExperimentView& experiment = *loaded->experiment;

  views::CheckpointView& checkpoint = *scratch.Create<views::CheckpointView>();
  checkpoint.set_uuid(saved.uuid());
  checkpoint.set_experiment_id(trial.experiment_id());
  checkpoint.set_trial_id(trial.trial_id());
  checkpoint.set_allocation_id(saved.allocation_id());
  checkpoint.set_total_batches(saved.total_batches());
  checkpoint.set_size_bytes(saved.size_bytes());
  // A map's order is unspecified; the view's is by path, so equal checkpoints are equal bytes.
  std::vector<std::pair<std::string, int64_t>> files(saved.resources().begin(),
                                                     saved.resources().end());
  std::sort(files.begin(), files.end());
  for (const auto& [path, size] : files) {
    auto* file = checkpoint.add_resources();
    file->set_path(path);
    file->set_size_bytes(size);
  }
  checkpoint.set_metadata_json(saved.metadata_json());
  checkpoint.set_state(views::CHECKPOINT_STATE_COMPLETED);
  checkpoint.set_report_time_unix_micros(event.time_unix_micros());
  if (trial.has_latest_training() &&
      trial.latest_training().total_batches() == saved.total_batches()) {
    *checkpoint.mutable_training() = trial.latest_training();
  }
  if (trial.has_latest_validation() &&
      trial.latest_validation().total_batches() == saved.total_batches()) {
    *checkpoint.mutable_validation() = trial.latest_validation();
  }
  checkpoint.set_saved_offset(event.offset());
  CAIRN_RETURN_IF_ERROR(store.PutMessage(key, checkpoint));
  CAIRN_RETURN_IF_ERROR(store.Put(ExperimentCheckpointKey(checkpoint), saved.uuid()));

  views::WorkloadView& workload = *scratch.Create<views::WorkloadView>();
  workload.set_trial_id(trial.trial_id());
  workload.set_kind(events::WORKLOAD_KIND_CHECKPOINT);
  workload.set_total_batches(saved.total_batches());
  workload.set_end_time_unix_micros(event.time_unix_micros());
  workload.set_checkpoint_uuid(saved.uuid());
  workload.set_checkpoint_state(views::CHECKPOINT_STATE_COMPLETED);
  workload.set_offset(event.offset());
  CAIRN_RETURN_IF_ERROR(store.PutMessage(WorkloadKey(trial.trial_id(), event.offset()), workload));

  trial.set_checkpoint_count(trial.checkpoint_count() + 1);
  trial.set_checkpoint_size_bytes(trial.checkpoint_size_bytes() + saved.size_bytes());
  trial.set_latest_checkpoint_uuid(saved.uuid());
  CAIRN_RETURN_IF_ERROR(PutTrial(store, event, trial));
  experiment.set_checkpoint_count(experiment.checkpoint_count() + 1);
  experiment.set_checkpoint_size_bytes(experiment.checkpoint_size_bytes() + saved.size_bytes());
  return PutExperiment(store, event, experiment);
}

Status OnCheckpointsDeleted(const Envelope& event, ViewStore& store) {
  const auto& deleted = event.checkpoints_deleted();
  for (const auto& uuid : deleted.uuids()) {
    const std::string key = NameKey(kCheckpointPrefix, uuid);
    ScratchArena scratch;
    views::CheckpointView& checkpoint = *scratch.Create<views::CheckpointView>();
    CAIRN_ASSIGN_OR_RETURN(bool exists, store.GetMessage(key, &checkpoint));
    if (!exists || checkpoint.experiment_id() != deleted.experiment_id() ||
        checkpoint.state() == views::CHECKPOINT_STATE_DELETED) {
      continue;
    }
    checkpoint.set_state(views::CHECKPOINT_STATE_DELETED);
    checkpoint.set_delete_reason(deleted.reason());
    checkpoint.set_delete_time_unix_micros(event.time_unix_micros());
    CAIRN_RETURN_IF_ERROR(store.PutMessage(key, checkpoint));

    const std::string workload_key = WorkloadKey(checkpoint.trial_id(), checkpoint.saved_offset());
    views::WorkloadView& workload = *scratch.Create<views::WorkloadView>();
    CAIRN_ASSIGN_OR_RETURN(bool listed, store.GetMessage(workload_key, &workload));
    if (!listed) {
      return Status::Corruption("experiments: checkpoint " + uuid + " lacks its workload");
    }
    workload.set_checkpoint_state(views::CHECKPOINT_STATE_DELETED);
    CAIRN_RETURN_IF_ERROR(store.PutMessage(workload_key, workload));

    CAIRN_ASSIGN_OR_RETURN(auto loaded,
                           LoadTrial(store, scratch, checkpoint.trial_id(), /*experiment_id=*/0));
    if (!loaded) {
      return Status::Corruption("experiments: checkpoint " + uuid + " names missing trial " +
                                std::to_string(checkpoint.trial_id()));
    }
    views::TrialView& trial = *loaded->trial;
    trial.set_checkpoint_count(trial.checkpoint_count() - 1);
    trial.set_checkpoint_size_bytes(trial.checkpoint_size_bytes() - checkpoint.size_bytes());
    CAIRN_RETURN_IF_ERROR(PutTrial(store, event, trial));
    views::ExperimentView& experiment = *loaded->experiment;
    experiment.set_checkpoint_count(experiment.checkpoint_count() - 1);
    experiment.set_checkpoint_size_bytes(experiment.checkpoint_size_bytes() -
                                         checkpoint.size_bytes());
    CAIRN_RETURN_IF_ERROR(PutExperiment(store, event, experiment));
  }
  return Status::Ok();
}

// Folds a task event into the trial whose current run it is about; returns whether the trial
// changed. Events of an earlier run or of another allocation than the run's are stale.
bool OnRunEvent(const Envelope& event, views::TrialView& trial) {
  switch (event.payload_case()) {
    case Envelope::kAllocationAssigned:
      if (!trial.allocation_id().empty()) return false;  // only a queued run gets placed
      trial.set_allocation_id(event.allocation_assigned().allocation_id());
      return true;
    case Envelope::kTaskStarted:
      if (trial.allocation_id().empty() ||
          event.task_started().allocation_id() != trial.allocation_id() || trial.running()) {
        return false;
      }
      trial.set_running(true);
      return true;
    case Envelope::kAllocationReleased:
      if (trial.allocation_id().empty() ||
          event.allocation_released().allocation_id() != trial.allocation_id()) {
        return false;
      }
      trial.clear_allocation_id();
      trial.set_running(false);
      return true;
    case Envelope::kTaskExited: {
      const std::string& allocation_id = event.task_exited().allocation_id();
      if (!allocation_id.empty() && !trial.allocation_id().empty() &&
          allocation_id != trial.allocation_id()) {
        return false;
      }
      if (trial.allocation_id().empty() && !trial.running()) return false;
      trial.clear_allocation_id();
      trial.set_running(false);
      return true;
    }
    default:
      return false;
  }
}

Status OnTaskEvent(const Envelope& event, ViewStore& store) {
  const std::string& task_id = TaskIdOf(event);
  if (task_id.empty()) return Status::Ok();
  const std::string index_key = NameKey(kTaskPrefix, task_id);
  ScratchArena scratch;
  views::TrialView* absent = scratch.Create<views::TrialView>();
  if (event.has_task_submitted()) {
    const int64_t trial_id = event.task_submitted().trial_id();
    CAIRN_ASSIGN_OR_RETURN(auto existing, store.Get(index_key));
    if (existing) return Status::Ok();  // a task is submitted once
    CAIRN_ASSIGN_OR_RETURN(views::TrialView * found, OpenView(store, TrialKey(trial_id), absent));
    if (found == nullptr) return Status::Ok();
    views::TrialView& trial = *found;
    // The index outlives the run, so that a repeated submission is recognised as one.
    CAIRN_RETURN_IF_ERROR(store.Put(index_key, std::to_string(trial_id)));
    trial.set_task_id(task_id);
    trial.set_runs(trial.runs() + 1);
    trial.clear_allocation_id();
    trial.set_running(false);
    return PutTrial(store, event, trial);
  }
  CAIRN_ASSIGN_OR_RETURN(auto trial_id_text, store.Get(index_key));
  if (!trial_id_text) return Status::Ok();  // not a trial's run
  const std::optional<int64_t> trial_id = ParseId(*trial_id_text);
  if (!trial_id)
    return Status::Corruption("experiments: task index holds '" + *trial_id_text + "'");
  CAIRN_ASSIGN_OR_RETURN(views::TrialView * found, OpenView(store, TrialKey(*trial_id), absent));
  if (found == nullptr) {
    return Status::Corruption("experiments: task " + task_id + " names missing trial " +
                              *trial_id_text);
  }
  views::TrialView& trial = *found;
  if (trial.task_id() != task_id || !OnRunEvent(event, trial)) return Status::Ok();
  return PutTrial(store, event, trial);
}

}  // namespace

Status ExperimentProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kExperimentCreated:
      return OnExperimentCreated(event, store);
    case Envelope::kTrialCreated:
      return OnTrialCreated(event, store);
    case Envelope::kTrialTrainTo:
    case Envelope::kTrialClosed:
    case Envelope::kTrialRestarted:
    case Envelope::kTrialEnded:
    case Envelope::kTrialLogPolicyMatched:
      return OnTrialDecision(event, store);
    case Envelope::kExperimentStateChanged:
      return OnExperimentStateChanged(event, store);
    case Envelope::kExperimentMoved: {
      const auto& moved = event.experiment_moved();
      ScratchArena scratch;
      views::ExperimentView& experiment = *scratch.Create<views::ExperimentView>();
      CAIRN_ASSIGN_OR_RETURN(bool exists,
                             store.GetMessage(ExperimentKey(moved.experiment_id()), &experiment));
      if (!exists) return Status::Ok();
      experiment.set_project_id(moved.project_id());
      experiment.set_workspace_id(moved.workspace_id());
      return PutExperiment(store, event, experiment);
    }
    case Envelope::kExperimentUpdated:
    case Envelope::kExperimentArchived:
    case Envelope::kExperimentDeleted:
      return OnExperimentEdited(event, store);
    case Envelope::kExperimentContinued:
      return OnExperimentContinued(event, store);
    case Envelope::kTrialWorkloadReported:
      return OnWorkloadReported(event, store);
    case Envelope::kTrialMetricsReported:
      return OnMetricsReported(event, store);
    case Envelope::kTrialProgressReported:
      return OnProgressReported(event, store);
    case Envelope::kCheckpointSaved:
      return OnCheckpointSaved(event, store);
    case Envelope::kCheckpointsDeleted:
      return OnCheckpointsDeleted(event, store);
    case Envelope::kJobQueueChanged:
      return OnExperimentJobChanged(event, store);
    case Envelope::kTaskSubmitted:
      // Only a trial's run is indexed; any other submission needs no read.
      if (event.task_submitted().trial_id() <= 0) return Status::Ok();
      return OnTaskEvent(event, store);
    case Envelope::kAllocationAssigned:
    case Envelope::kTaskStarted:
    case Envelope::kAllocationReleased:
    case Envelope::kTaskExited:
      return OnTaskEvent(event, store);
    default:
      return Status::Ok();  // workload answers, kills, preemptions, agents, templates
  }
}

}  // namespace cairn::projections
