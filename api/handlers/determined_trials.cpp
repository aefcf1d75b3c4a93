#include "api/handlers/determined_trials.h"

#include <algorithm>
#include <cmath>

#include "api/handlers/experiment_common.h"
#include "api/handlers/trials.h"
#include "api/render/experiment_json.h"
#include "api/rest_util.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// Longest the preemption long poll holds a request; Determined's package asks for 60 s.
constexpr int kMaxPreemptionWaitSeconds = 60;

// The live run of the trial the path names, when the caller's token is that run's; the package
// only ever reports on its own trial.
Result<commands::TrialRunStart> OwnTrialRun(Call& call, const std::string& trial_id_text) {
  CAIRN_ASSIGN_OR_RETURN(int64_t trial_id, ParseId(trial_id_text, "trial"));
  auto run = call.services().writer->DescribeTrialRun(call.task_allocation());
  if (!run.ok()) {
    return Status::FailedPrecondition("allocation " + call.task_allocation() +
                                      " is not a live trial run: " + run.status().message());
  }
  if (run->trial_id != trial_id) {
    return Status::PermissionDenied("this task's token is trial " + std::to_string(run->trial_id) +
                                    "'s, not trial " + std::to_string(trial_id) + "'s");
  }
  return std::move(*run);
}

// A report is answered once the projections hold it, not merely the log: a trial reports again
// only after that, so however fast trials report, the projections stay within one report a
// trial of the log, and what other callers wait for behind them (a submission's own view) stays
// as near. It also lets the trial read back what it just reported.
net::Response Report(Call& call, commands::ReportTrial report) {
  report.allocation_id = call.task_allocation();
  auto outcome = call.ExecuteAs(std::move(report), call.AllocationActor());
  if (!outcome.ok()) return Error(outcome.status());
  if (Status applied = call.WaitFor(outcome->offset); !applied.ok()) return Error(applied);
  return Ok(json::object(), outcome->offset);
}

Result<int64_t> IntegerOf(const json& value, const std::string& path) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string()) {  // int64 in proto JSON
    const auto& text = value.get_ref<const std::string&>();
    if (!text.empty() && text.size() <= 19 &&
        text.find_first_not_of("0123456789") == std::string::npos) {
      return std::stoll(text);
    }
  }
  return Status::InvalidArgument(path + " must be an integer");
}

}  // namespace

net::Response ReportTrialMetrics(Call& call) {
  auto run = OwnTrialRun(call, call.Param("id"));
  if (!run.ok()) return Error(run.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  commands::ReportTrial report;
  report.kind = commands::ReportTrial::Kind::kMetrics;
  report.trial_id = run->trial_id;
  auto& metrics = report.metrics;
  const json* group = GatewayField(*body, "group", "group");
  if (group == nullptr || !group->is_string()) {
    return Error(Status::InvalidArgument("group is required: training, validation or a name"));
  }
  metrics.set_group(group->get<std::string>());
  const json* trial_metrics = GatewayField(*body, "metrics", "metrics");
  if (trial_metrics == nullptr || !trial_metrics->is_object()) {
    return Error(Status::InvalidArgument("metrics must be an object (v1TrialMetrics)"));
  }
  if (const json* steps = GatewayField(*trial_metrics, "stepsCompleted", "steps_completed")) {
    auto value = IntegerOf(*steps, "metrics.stepsCompleted");
    if (!value.ok()) return Error(value.status());
    metrics.set_steps_completed(*value);
  }
  if (const json* run_id = GatewayField(*trial_metrics, "trialRunId", "trial_run_id")) {
    auto value = IntegerOf(*run_id, "metrics.trialRunId");
    if (!value.ok()) return Error(value.status());
    metrics.set_trial_run_id(static_cast<int32_t>(std::clamp<int64_t>(*value, 0, INT32_MAX)));
  }
  if (const json* trial_id = GatewayField(*trial_metrics, "trialId", "trial_id")) {
    auto value = IntegerOf(*trial_id, "metrics.trialId");
    if (!value.ok()) return Error(value.status());
    if (*value != run->trial_id) {
      return Error(Status::InvalidArgument("metrics.trialId " + std::to_string(*value) +
                                           " is not the path's trial " +
                                           std::to_string(run->trial_id)));
    }
  }
  if (const json* time = GatewayField(*trial_metrics, "reportTime", "report_time")) {
    if (!time->is_string()) return Error(Status::InvalidArgument("metrics.reportTime: a time"));
    metrics.set_report_time(time->get<std::string>());
  }
  const json* inner = GatewayField(*trial_metrics, "metrics", "metrics");
  if (inner == nullptr || !inner->is_object()) {
    return Error(Status::InvalidArgument("metrics.metrics must be an object with avgMetrics"));
  }
  const json* average = GatewayField(*inner, "avgMetrics", "avg_metrics");
  if (average == nullptr || !average->is_object()) {
    return Error(Status::InvalidArgument("metrics.metrics.avgMetrics must be an object"));
  }
  metrics.set_metrics_json(average->dump());
  if (const json* batches = GatewayField(*inner, "batchMetrics", "batch_metrics")) {
    metrics.set_batch_metrics_json(batches->dump());
  }
  return Report(call, std::move(report));
}

net::Response ReportTrialProgress(Call& call) {
  auto run = OwnTrialRun(call, call.Param("id"));
  if (!run.ok()) return Error(run.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  const json* progress = GatewayField(*body, "progress", "progress");
  if (progress == nullptr || !progress->is_number()) {
    return Error(Status::InvalidArgument("progress must be a number between 0 and 1"));
  }
  commands::ReportTrial report;
  report.kind = commands::ReportTrial::Kind::kProgress;
  report.trial_id = run->trial_id;
  report.progress = progress->get<double>();
  return Report(call, std::move(report));
}

net::Response ReportTrialEarlyExit(Call& call) {
  auto run = OwnTrialRun(call, call.Param("id"));
  if (!run.ok()) return Error(run.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  // The package sends {"reason": ...}; the binding's shape is {"earlyExit": {"reason": ...}}.
  const json* holder = GatewayField(*body, "earlyExit", "early_exit");
  const json* reason =
      GatewayField(holder != nullptr && holder->is_object() ? *holder : *body, "reason", "reason");
  if (reason == nullptr || !reason->is_string()) {
    return Error(Status::InvalidArgument("reason is required, e.g. EXITED_REASON_INVALID_HP"));
  }
  commands::ReportTrial report;
  report.kind = commands::ReportTrial::Kind::kEarlyExit;
  report.trial_id = run->trial_id;
  report.reason = reason->get<std::string>();
  return Report(call, std::move(report));
}

// What the trial is doing ("training", "validating", "checkpointing") changes every few seconds
// and decides nothing: it is not recorded. The route checks its caller like the others.
net::Response TrialRunnerMetadata(Call& call) {
  auto run = OwnTrialRun(call, call.Param("id"));
  if (!run.ok()) return Error(run.status());
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  return Ok(json::object());
}

net::Response ReportCheckpoint(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  // The body is Determined's v1Checkpoint, or the request wrapping it.
  const json* wrapped = GatewayField(*body, "checkpoint", "checkpoint");
  const json& checkpoint = wrapped != nullptr && wrapped->is_object() ? *wrapped : *body;
  const json* allocation = GatewayField(checkpoint, "allocationId", "allocation_id");
  if (allocation != nullptr &&
      (!allocation->is_string() || allocation->get<std::string>() != call.task_allocation())) {
    return Error(Status::PermissionDenied("allocationId is not this task's allocation"));
  }
  const json* state = GatewayField(checkpoint, "state", "state");
  if (state != nullptr &&
      !(state->is_string() && (*state == "STATE_COMPLETED" || *state == "STATE_UNSPECIFIED"))) {
    return Error(
        Status::InvalidArgument("state must be STATE_COMPLETED: a checkpoint is "
                                "reported once its files are stored"));
  }
  commands::ReportTrial report;
  report.kind = commands::ReportTrial::Kind::kCheckpoint;
  auto& saved = report.checkpoint;
  const json* uuid = GatewayField(checkpoint, "uuid", "uuid");
  if (uuid == nullptr || !uuid->is_string()) {
    return Error(Status::InvalidArgument("uuid is required"));
  }
  saved.set_uuid(uuid->get<std::string>());
  const json* metadata = GatewayField(checkpoint, "metadata", "metadata");
  if (metadata == nullptr || !metadata->is_object() || !metadata->contains("steps_completed")) {
    return Error(Status::InvalidArgument("metadata.steps_completed is required"));
  }
  auto steps = IntegerOf(metadata->at("steps_completed"), "metadata.steps_completed");
  if (!steps.ok()) return Error(steps.status());
  saved.set_total_batches(*steps);
  saved.set_metadata_json(metadata->dump());
  int64_t size = 0;
  if (const json* resources = GatewayField(checkpoint, "resources", "resources")) {
    if (!resources->is_object()) {
      return Error(Status::InvalidArgument("resources must map paths to sizes"));
    }
    for (const auto& [path, bytes] : resources->items()) {
      auto value = IntegerOf(bytes, "resources." + path);
      if (!value.ok()) return Error(value.status());
      (*saved.mutable_resources())[path] = *value;
      size += *value;
    }
  }
  saved.set_size_bytes(size);
  return Report(call, std::move(report));
}

// Determined registers the checkpoint storage here; Cairn's is the experiment's, recorded with
// it, so there is nothing to register. The caller must be a live run of the trial it names.
net::Response StartRun(Call& call) {
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  const json* run_id = GatewayField(*body, "runId", "run_id");
  if (run_id == nullptr) return Error(Status::InvalidArgument("runId is required"));
  auto trial_id = IntegerOf(*run_id, "runId");
  if (!trial_id.ok()) return Error(trial_id.status());
  auto run = OwnTrialRun(call, std::to_string(*trial_id));
  if (!run.ok()) return Error(run.status());
  return Ok(json::object());
}

net::Response PreemptionSignal(Call& call) {
  if (call.Param("id") != call.task_allocation()) {
    return Error(Status::PermissionDenied("this task's token is allocation " +
                                          call.task_allocation() + "'s"));
  }
  std::string text = call.request().QueryParam("timeout_seconds");
  if (text.empty()) text = call.request().QueryParam("timeoutSeconds");
  int seconds = kMaxPreemptionWaitSeconds;
  if (!text.empty()) {
    if (text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) {
      return Error(Status::InvalidArgument("timeout_seconds must be a whole number of seconds"));
    }
    seconds = std::min(std::stoi(text), kMaxPreemptionWaitSeconds);
  }
  const bool preempt =
      call.services().writer->AwaitTrialStop(call.task_allocation(), std::chrono::seconds(seconds));
  return Ok({{"preempt", preempt}});
}

net::Response AcknowledgePreemption(Call& call) {
  if (call.Param("id") != call.task_allocation()) {
    return Error(Status::PermissionDenied("this task's token is allocation " +
                                          call.task_allocation() + "'s"));
  }
  commands::ReportTrial report;
  report.kind = commands::ReportTrial::Kind::kPreemptionAck;
  return Report(call, std::move(report));
}

net::Response GetTrialForUserOrTask(Call& call) {
  if (call.task_allocation().empty()) return GetTrial(call);
  auto run = OwnTrialRun(call, call.Param("id"));
  if (!run.ok()) return Error(run.status());
  auto trial = call.services().projections->GetTrial(run->trial_id);
  if (!trial.ok()) return Error(trial.status());
  if (!*trial) return Error(Status::NotFound("trial " + call.Param("id") + " not found"));
  return Ok({{"trial", TrialJson(**trial)}});
}

net::Response BestSearcherValidationMetric(Call& call) {
  auto experiment_id = ParseId(call.Param("id"), "experiment");
  if (!experiment_id.ok()) return Error(experiment_id.status());
  Result<views::ExperimentView> experiment = Status::NotFound("");
  if (call.task_allocation().empty()) {
    experiment = LoadExperiment(call, call.Param("id"));
  } else {
    auto run = call.services().writer->DescribeTrialRun(call.task_allocation());
    if (!run.ok() || run->experiment_id != *experiment_id) {
      return Error(Status::PermissionDenied("this task's token is not a run of experiment " +
                                            call.Param("id")));
    }
    auto found = call.services().projections->GetExperiment(*experiment_id);
    if (!found.ok()) return Error(found.status());
    if (*found) experiment = std::move(**found);
  }
  if (!experiment.ok()) return Error(experiment.status());
  auto trials = call.services().projections->ListTrials(*experiment_id);
  if (!trials.ok()) return Error(trials.status());
  std::optional<double> best;
  for (const auto& trial : *trials) {
    if (!trial.best_validation().has_searcher_metric()) continue;
    const double value = trial.best_validation().searcher_metric();
    if (!best || (experiment->smaller_is_better() ? value < *best : value > *best)) best = value;
  }
  if (!best) {
    return Error(Status::NotFound("experiment " + call.Param("id") + " has no validation yet"));
  }
  return Ok({{"metric", *best}});
}

}  // namespace cairn::api
