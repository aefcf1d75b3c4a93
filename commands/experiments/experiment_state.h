// Internal to the write side: how experiment, trial, checkpoint and template events fold into the
// decision state, and the trial side of the task events. Called by Apply (decision_state.cpp).
#pragma once

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Folds an experiment, trial, checkpoint or template event. Returns false for other payloads.
bool ApplyExperimentEvent(DecisionState& state, const events::Envelope& event);

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

}  // namespace cairn::commands
