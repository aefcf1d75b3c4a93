#include "api/render/experiment_json.h"

#include <string_view>

#include "base/clock.h"
#include "commands/tenancy/tenancy.h"
#include "events/envelope_util.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// v1MetricsWorkload.
json MetricsWorkloadJson(int64_t total_batches, int64_t num_inputs, const std::string& metrics,
                         int64_t end_time_unix_micros) {
  json workload = {{"totalBatches", total_batches},
                   {"numInputs", num_inputs},
                   {"metrics", {{"avgMetrics", JsonObjectOf(metrics)}}}};
  if (end_time_unix_micros != 0) workload["endTime"] = FormatRfc3339(end_time_unix_micros);
  return workload;
}

json MetricsResultJson(const views::MetricsResult& result) {
  return MetricsWorkloadJson(result.total_batches(), result.num_inputs(), result.metrics_json(),
                             result.end_time_unix_micros());
}

std::string CheckpointStateJson(views::CheckpointState state) {
  switch (state) {
    case views::CHECKPOINT_STATE_COMPLETED:
      return "STATE_COMPLETED";
    case views::CHECKPOINT_STATE_DELETED:
      return "STATE_DELETED";
    default:
      return "STATE_UNSPECIFIED";
  }
}

}  // namespace

json JsonObjectOf(const std::string& text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_object() ? value : json::object();
}

// The effective configuration; a queue change of the experiment's job shows in its resources,
// as Determined patches the stored configuration.
json ExperimentConfigJson(const views::ExperimentView& experiment, Audience audience) {
  json config = JsonObjectOf(experiment.config_json());
  RedactConfig(config, audience);
  if (!experiment.resources_changed()) return config;
  json& resources = config["resources"];
  if (!resources.is_object()) resources = json::object();
  resources["priority"] = experiment.resources().priority();
  resources["weight"] = experiment.resources().weight();
  resources["resource_pool"] = experiment.resources().resource_pool();
  if (experiment.resources().max_slots() > 0) {
    resources["max_slots"] = experiment.resources().max_slots();
  }
  return config;
}

std::string ExperimentStateJson(events::ExperimentState state) {
  constexpr std::string_view kPrefix = "EXPERIMENT_STATE_";
  std::string name = events::ExperimentState_Name(state);
  if (name.rfind(kPrefix, 0) != 0) return "STATE_UNSPECIFIED";
  return "STATE_" + name.substr(kPrefix.size());
}

json ExperimentJson(const views::ExperimentView& experiment, int64_t num_trials,
                    Audience audience) {
  json config = ExperimentConfigJson(experiment, audience);
  json description = experiment.has_description() ? json(experiment.description())
                                                  : config.value("description", json());
  json labels = config.value("labels", json());
  if (experiment.labels_set()) {
    labels = json::array();
    for (const auto& label : experiment.labels()) labels.push_back(label);
  }
  json out = {{"id", experiment.experiment_id()},
              {"name", experiment.name()},
              {"description", description.is_string() ? description : json("")},
              {"labels", labels.is_array() ? labels : json::array()},
              {"notes", experiment.notes()},
              {"state", ExperimentStateJson(experiment.state())},
              {"archived", experiment.archived()},
              {"config", config},
              {"originalConfig", RedactConfigYaml(experiment.original_config(), audience)},
              {"jobId", experiment.job_id()},
              {"numTrials", num_trials},
              {"projectId", ProjectOrUncategorized(experiment.project_id())},
              // The project's creator, set by the caller that knows the projects (admin, id 1,
              // owns the built-in Uncategorized project, as in Determined).
              {"projectOwnerId", 1},
              {"workspaceId", WorkspaceOrUncategorized(experiment.workspace_id())},
              {"searcherType", experiment.searcher_type()},
              {"startTime", FormatRfc3339(experiment.start_time_unix_micros())},
              {"progress", experiment.progress()},
              {"username", experiment.owner()},
              {"resourcePool", experiment.resources().resource_pool()},
              {"checkpointCount", experiment.checkpoint_count()},
              {"checkpointSize", experiment.checkpoint_size_bytes()}};
  if (experiment.end_time_unix_micros() != 0) {
    out["endTime"] = FormatRfc3339(experiment.end_time_unix_micros());
  }
  out["cairn"] = {{"seed", experiment.seed()},
                  {"contextDigest", experiment.context_digest()},
                  {"contextBytes", experiment.context_bytes()},
                  {"templateName", experiment.template_name()},
                  {"stateReason", experiment.state_reason()},
                  {"searcherMetric", experiment.searcher_metric()},
                  {"smallerIsBetter", experiment.smaller_is_better()},
                  {"priority", experiment.resources().priority()},
                  {"weight", experiment.resources().weight()},
                  {"slotsPerTrial", experiment.resources().slots()},
                  {"maxSlots", experiment.resources().max_slots()},
                  {"lastEventOffset", std::to_string(experiment.last_event_offset())}};
  return out;
}

json TrialJson(const views::TrialView& trial) {
  // Running is how Determined shows an active trial whose process has started.
  const bool running =
      !trial.ended() && trial.running() && trial.state() == events::EXPERIMENT_STATE_ACTIVE;
  json out = {{"id", trial.trial_id()},
              {"experimentId", trial.experiment_id()},
              {"state", running ? "STATE_RUNNING" : ExperimentStateJson(trial.state())},
              {"startTime", FormatRfc3339(trial.start_time_unix_micros())},
              {"restarts", trial.restarts()},
              {"hparams", JsonObjectOf(trial.hparams_json())},
              {"totalBatchesProcessed", trial.total_batches_processed()},
              {"checkpointCount", trial.checkpoint_count()},
              {"totalCheckpointSize", trial.checkpoint_size_bytes()}};
  if (trial.end_time_unix_micros() != 0) {
    out["endTime"] = FormatRfc3339(trial.end_time_unix_micros());
  }
  if (!trial.task_id().empty()) {
    out["taskId"] = trial.task_id();
    out["taskIds"] = json::array({trial.task_id()});
  }
  if (trial.has_latest_training())
    out["latestTraining"] = MetricsResultJson(trial.latest_training());
  if (trial.has_latest_validation()) {
    out["latestValidation"] = MetricsResultJson(trial.latest_validation());
  }
  if (trial.has_best_validation()) {
    out["bestValidation"] = MetricsResultJson(trial.best_validation());
    out["searcherMetricValue"] = trial.best_validation().searcher_metric();
  }
  out["warmStartCheckpointUuid"] = trial.warm_start_checkpoint_uuid();
  if (!trial.log_policy_matched().empty()) out["logPolicyMatched"] = trial.log_policy_matched();
  json cairn = {{"requestId", trial.request_id()},
                {"searcherReason", trial.searcher_reason()},
                {"runs", trial.runs()},
                {"running", trial.running()},
                {"closed", trial.closed()},
                {"targetLengthBatches", trial.target_length_batches()},
                {"clonedFromTrialId", trial.cloned_from_trial_id()},
                {"restartReason", trial.restart_reason()},
                {"endReason", trial.end_reason()},
                {"allocationId", trial.allocation_id()},
                {"latestCheckpointUuid", trial.latest_checkpoint_uuid()},
                // The trial's own estimate (Determined's report_progress), 0 when it gives none.
                {"progress", trial.progress()},
                {"lastEventOffset", std::to_string(trial.last_event_offset())}};
  out["cairn"] = cairn;
  return out;
}

json WorkloadJson(const views::WorkloadView& workload) {
  switch (workload.kind()) {
    case events::WORKLOAD_KIND_TRAIN:
      return {{"training",
               MetricsWorkloadJson(workload.total_batches(), workload.num_inputs(),
                                   workload.metrics_json(), workload.end_time_unix_micros())}};
    case events::WORKLOAD_KIND_VALIDATE:
      return {{"validation",
               MetricsWorkloadJson(workload.total_batches(), workload.num_inputs(),
                                   workload.metrics_json(), workload.end_time_unix_micros())}};
    case events::WORKLOAD_KIND_CHECKPOINT:
      return {{"checkpoint",
               {{"state", CheckpointStateJson(workload.checkpoint_state())},
                {"totalBatches", workload.total_batches()},
                {"endTime", FormatRfc3339(workload.end_time_unix_micros())},
                {"uuid", workload.checkpoint_uuid()}}}};
    default:
      return json::object();
  }
}

json CheckpointJson(const views::CheckpointView& checkpoint, const CheckpointOrigin& origin) {
  // grpc-gateway writes int64 map values as strings.
  json resources = json::object();
  for (const auto& file : checkpoint.resources()) {
    resources[file.path()] = std::to_string(file.size_bytes());
  }
  json metadata = JsonObjectOf(checkpoint.metadata_json());
  if (!metadata.contains("steps_completed"))
    metadata["steps_completed"] = checkpoint.total_batches();
  json training = {{"trialId", checkpoint.trial_id()},
                   {"experimentId", checkpoint.experiment_id()}};
  if (origin.experiment_config != nullptr) training["experimentConfig"] = *origin.experiment_config;
  if (origin.trial != nullptr) training["hparams"] = JsonObjectOf(origin.trial->hparams_json());
  if (checkpoint.has_training()) {
    training["trainingMetrics"] = {
        {"avgMetrics", JsonObjectOf(checkpoint.training().metrics_json())}};
  }
  if (checkpoint.has_validation()) {
    training["validationMetrics"] = {
        {"avgMetrics", JsonObjectOf(checkpoint.validation().metrics_json())}};
    if (checkpoint.validation().has_searcher_metric()) {
      training["searcherMetric"] = checkpoint.validation().searcher_metric();
    }
  }
  json cairn = {{"sizeBytes", checkpoint.size_bytes()},
                {"deleteReason", checkpoint.delete_reason()}};
  if (checkpoint.delete_time_unix_micros() != 0) {
    cairn["deleteTime"] = FormatRfc3339(checkpoint.delete_time_unix_micros());
  }
  return {{"uuid", checkpoint.uuid()},
          {"taskId", origin.trial != nullptr ? json(origin.trial->task_id()) : json(nullptr)},
          {"allocationId", checkpoint.allocation_id()},
          {"reportTime", FormatRfc3339(checkpoint.report_time_unix_micros())},
          {"resources", resources},
          {"metadata", metadata},
          {"state", CheckpointStateJson(checkpoint.state())},
          {"totalBatches", checkpoint.total_batches()},
          {"training", training},
          {"cairn", cairn}};
}

}  // namespace cairn::api
