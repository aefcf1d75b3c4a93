// Reports from trial processes running Determined's own package (ReportTrial): metrics,
// progress, checkpoints, the preemption acknowledgement and early exits. Each becomes one event;
// the state fold (experiment_state.cpp) gives validations to the searcher.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/ids.h"
#include "commands/experiments/experiment_decider.h"
#include "commands/experiments/experiment_state.h"
#include "events/limits.h"

namespace cairn::commands {

namespace {

// Determined's per-batch metrics and group names, beside the shared bounds
// (experiment_commands.h).
constexpr size_t kMaxBatchMetricsBytes = 1024 * 1024;
constexpr size_t kMaxGroupBytes = 128;

// The live run of `trial_id` holding `allocation_id`, or why a report from it is refused.
Result<const TrialRecord*> ReportingTrial(const DecisionState& state, const ReportTrial& command) {
  const TrialRecord* trial = state.FindTrialByAllocation(command.allocation_id);
  if (trial == nullptr) {
    return Status::NotFound("allocation " + command.allocation_id + " is not a trial's");
  }
  if (command.trial_id != 0 && command.trial_id != trial->trial_id) {
    return Status::PermissionDenied("allocation " + command.allocation_id + " runs trial " +
                                    std::to_string(trial->trial_id) + ", not trial " +
                                    std::to_string(command.trial_id));
  }
  const TaskRecord* task = state.FindTask(trial->task_id);
  if (task == nullptr || task->allocation_id != command.allocation_id ||
      !task->holds_allocation()) {
    return Status::FailedPrecondition("allocation " + command.allocation_id + " has ended; trial " +
                                      std::to_string(trial->trial_id) +
                                      " takes reports from its live run only");
  }
  return trial;
}

Status CheckMetrics(const DecisionState& state, const TrialRecord& trial,
                    const events::TrialMetricsReported& report) {
  const std::string& group = report.group();
  if (group.empty() || group.size() > kMaxGroupBytes || group.find('.') != std::string::npos) {
    return Status::InvalidArgument(
        "group must be a name of at most 128 bytes without '.' "
        "(training, validation or your own)");
  }
  if (report.steps_completed() < 0) {
    return Status::InvalidArgument("metrics.stepsCompleted must not be negative");
  }
  if (report.metrics_json().size() > kMaxResultBytes ||
      report.batch_metrics_json().size() > kMaxBatchMetricsBytes) {
    return Status::InvalidArgument(
        "metrics.metrics.avgMetrics must be at most 64 KiB and batchMetrics at most 1 MiB");
  }
  auto metrics = nlohmann::json::parse(report.metrics_json(), nullptr, false);
  if (!metrics.is_object()) {
    return Status::InvalidArgument("metrics.metrics.avgMetrics must be an object of metrics");
  }
  if (group != "validation") return Status::Ok();
  const ExperimentRecord* experiment = state.FindExperiment(trial.experiment_id);
  if (experiment == nullptr || experiment->config == nullptr) return Status::Ok();
  const auto& searcher = experiment->config->searcher;
  // ASHA ranks every validation by the metric at its time: without them the search cannot go on.
  if (searcher.name != experiments::SearcherName::kAdaptiveAsha) return Status::Ok();
  if (!MetricValue(metrics, searcher.metric)) {
    return Status::InvalidArgument("validation metrics must include searcher.metric '" +
                                   searcher.metric + "' as a number: adaptive_asha ranks by it");
  }
  if (!searcher.time_metric.empty()) {
    auto time = MetricValue(metrics, searcher.time_metric);
    if (!time || !std::isfinite(*time)) {
      return Status::InvalidArgument("validation metrics must include time_metric '" +
                                     searcher.time_metric +
                                     "' as a finite number: adaptive_asha compares it with "
                                     "max_time");
    }
  }
  return Status::Ok();
}

Result<events::Envelope> CheckpointEvent(const TrialRecord& trial, const ReportTrial& command) {
  const auto& checkpoint = command.checkpoint;
  if (!IsCanonicalUuid(checkpoint.uuid())) {
    return Status::InvalidArgument("uuid must be a UUID (8-4-4-4-12 hex digits)");
  }
  if (checkpoint.metadata_json().size() > kMaxResultBytes ||
      checkpoint.resources_size() > kMaxCheckpointFiles) {
    return Status::InvalidArgument("metadata must be at most 64 KiB and resources list at most " +
                                   std::to_string(kMaxCheckpointFiles) + " files");
  }
  if (checkpoint.total_batches() < 0 || checkpoint.size_bytes() < 0) {
    return Status::InvalidArgument("metadata.steps_completed and sizes must not be negative");
  }
  events::Envelope event;
  auto* saved = event.mutable_checkpoint_saved();
  *saved = checkpoint;
  saved->set_experiment_id(trial.experiment_id);
  saved->set_trial_id(trial.trial_id);
  saved->set_allocation_id(command.allocation_id);
  return event;
}

}  // namespace

Result<Decision> DecideCommand(const DecisionState& state, const ReportTrial& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const TrialRecord* found, ReportingTrial(state, command));
  const TrialRecord& trial = *found;
  Decision decision{{}, std::to_string(trial.trial_id)};
  events::Envelope event;
  switch (command.kind) {
    case ReportTrial::Kind::kMetrics: {
      CAIRN_RETURN_IF_ERROR(CheckMetrics(state, trial, command.metrics));
      auto* metrics = event.mutable_trial_metrics_reported();
      *metrics = command.metrics;
      metrics->set_experiment_id(trial.experiment_id);
      metrics->set_trial_id(trial.trial_id);
      metrics->set_allocation_id(command.allocation_id);
      break;
    }
    case ReportTrial::Kind::kProgress: {
      if (!(command.progress >= 0 && command.progress <= 1)) {
        return Status::InvalidArgument("progress must be between 0 and 1");
      }
      auto* progress = event.mutable_trial_progress_reported();
      progress->set_experiment_id(trial.experiment_id);
      progress->set_trial_id(trial.trial_id);
      progress->set_allocation_id(command.allocation_id);
      progress->set_progress(command.progress);
      break;
    }
    case ReportTrial::Kind::kCheckpoint: {
      CAIRN_ASSIGN_OR_RETURN(event, CheckpointEvent(trial, command));
      if (state.checkpoints.count(command.checkpoint.uuid())) {
        auto identity = TrialReportIdentity(event);
        auto last = trial.last_reports.find(identity->first);
        if (last != trial.last_reports.end() && last->second == identity->second) return decision;
        return Status::AlreadyExists("checkpoint " + command.checkpoint.uuid() +
                                     " was reported already, with other contents");
      }
      break;
    }
    case ReportTrial::Kind::kPreemptionAck: {
      if (trial.preemption_acked == command.allocation_id) return decision;
      auto* acked = event.mutable_trial_preemption_acknowledged();
      acked->set_experiment_id(trial.experiment_id);
      acked->set_trial_id(trial.trial_id);
      acked->set_allocation_id(command.allocation_id);
      break;
    }
    case ReportTrial::Kind::kEarlyExit: {
      if (command.reason.rfind("EXITED_REASON_", 0) != 0 || command.reason.size() > 64) {
        return Status::InvalidArgument(
            "reason must be an EXITED_REASON_* value, e.g. EXITED_REASON_INVALID_HP");
      }
      if (!trial.early_exit.empty()) return decision;
      auto* exited = event.mutable_trial_early_exit_reported();
      exited->set_experiment_id(trial.experiment_id);
      exited->set_trial_id(trial.trial_id);
      exited->set_allocation_id(command.allocation_id);
      exited->set_reason(command.reason);
      break;
    }
  }
  // The package retries a report whose answer it lost: the same report again is answered, once.
  if (auto identity = TrialReportIdentity(event)) {
    auto last = trial.last_reports.find(identity->first);
    if (last != trial.last_reports.end() && last->second == identity->second) return decision;
  }
  decision.events.push_back(std::move(event));
  return decision;
}

// A trial process reports through its allocation's token, never as a user.
Status MayRun(const DecisionState&, const UserRecord&, const ReportTrial&) { return Status::Ok(); }

Result<Decision> DecideCommand(const DecisionState& state, const RecordLogPolicyMatch& command,
                               const CommandMeta&) {
  const TaskRecord* task = state.FindTask(command.task_id);
  if (task == nullptr || task->trial_id == 0) {
    return Status::NotFound("task " + command.task_id + " is not a trial's run");
  }
  const TrialRecord* trial = state.FindTrial(task->trial_id);
  const ExperimentRecord* experiment =
      trial != nullptr ? state.FindExperiment(trial->experiment_id) : nullptr;
  if (experiment == nullptr || experiment->config == nullptr) {
    return Status::NotFound("trial " + std::to_string(task->trial_id) + " not found");
  }
  const auto& policies = experiment->config->log_policies;
  const auto& policy = command.policy;
  if (policy.pattern.empty() ||
      std::find(policies.begin(), policies.end(), policy) == policies.end()) {
    return Status::InvalidArgument("no log policy of experiment " +
                                   std::to_string(experiment->experiment_id) + " has pattern '" +
                                   policy.pattern + "'");
  }
  Decision decision{{}, std::to_string(trial->trial_id)};
  // Once per run and policy: a run that prints the same error a million times is one fact.
  if (trial->log_policy_run == task->task_id &&
      trial->matched_log_policies.count(experiments::LogPolicyKey(policy))) {
    return decision;
  }
  events::Envelope event;
  auto* matched = event.mutable_trial_log_policy_matched();
  matched->set_experiment_id(trial->experiment_id);
  matched->set_trial_id(trial->trial_id);
  matched->set_task_id(task->task_id);
  matched->set_policy_name(policy.name);
  matched->set_pattern(policy.pattern);
  matched->set_action(policy.action);
  matched->set_agent_id(command.agent_id);
  matched->set_log_line(ValidUtf8Prefix(command.log_line, kMaxLogPolicyLineBytes));
  decision.events.push_back(std::move(event));
  return decision;
}

// The master records matches itself, as it reads an agent's logs; no user runs it.
Status MayRun(const DecisionState&, const UserRecord&, const RecordLogPolicyMatch&) {
  return Status::PermissionDenied("log policy matches are recorded by the master");
}

bool TrialRunShouldStop(const DecisionState& state, const std::string& allocation_id) {
  const TrialRecord* trial = state.FindTrialByAllocation(allocation_id);
  if (trial == nullptr) return true;
  const TaskRecord* task = state.FindTask(trial->task_id);
  if (task == nullptr || task->allocation_id != allocation_id || !task->holds_allocation()) {
    return true;
  }
  const ExperimentRecord* experiment = state.FindExperiment(trial->experiment_id);
  return task->preempting || task->kill_requested || trial->closed || trial->kill_requested ||
         !trial->early_exit.empty() || experiment == nullptr ||
         experiment->state != events::EXPERIMENT_STATE_ACTIVE;
}

}  // namespace cairn::commands
