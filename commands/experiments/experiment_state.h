// Internal to the write side: how experiment, trial, checkpoint and template events fold into the
// decision state, and the trial side of the task events. Called by Apply (decision_state.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Folds an experiment, trial, checkpoint or template event. Returns false for other payloads.
bool ApplyExperimentEvent(DecisionState& state, const events::Envelope& event);

// `config_json` (an experiment's effective configuration) with checkpoint_storage's save_* set;
// InvalidArgument when it has no checkpoint storage or no longer parses.
Result<std::string> WithGcPolicy(const std::string& config_json, int save_experiment_best,
                                 int save_trial_best, int save_trial_latest);

// The trial side of a task event, called before the task record changes: a trial's run was
// submitted, ended (TaskExited) or lost its allocation (AllocationReleased).
void ApplyTrialTaskEvent(DecisionState& state, const events::Envelope& event);

// The task id of a trial's run number `run` (1, 2, ...): "trial-<trial>-<run>".
// A trial run's task id in the shape Determined gives trial tasks ("<experiment>.<uuid>"), which
// its CLI's `det task logs` insists on: "7.0000000c-0000-4000-8000-000000000002" is experiment
// 7's trial 12, run 2. Derived, not random, so the pure reactor decides it.
std::string TrialRunTaskId(int64_t experiment_id, int64_t trial_id, int run);
// What masters before that named the same run ("trial-12-2"); logs under it are still found.
std::string LegacyTrialRunTaskId(int64_t trial_id, int run);

// "ACTIVE", "PAUSED", "STOPPING_CANCELED", ...
const char* ExperimentStateText(events::ExperimentState state);

// The value of the searcher's metric in a validation's metrics (JSON object text); NaN when
// absent or not a number, which the searchers rank worst.
double SearcherMetricOf(const experiments::ExperimentConfig& config,
                        const std::string& metrics_json);

// A metric's value as Determined's package sends it: a JSON number, or "NaN", "Infinity",
// "-Infinity"; nullopt when absent or anything else.
std::optional<double> MetricValue(const nlohmann::json& metrics, const std::string& name);

// Which kind of trial report `event` is ("metrics/<group>", "progress", "checkpoint") and a
// digest of what tells it from another of its kind, so that a retry is known
// (TrialRecord::last_reports); nullopt for other events.
std::optional<std::pair<std::string, std::string>> TrialReportIdentity(
    const events::Envelope& event);

}  // namespace cairn::commands
