// The experiment reactor: a pure decider the writer runs after every batch (before the
// scheduler), over the experiments the batch touched. It turns what the log now says into what
// must follow, each an event with its reason:
//  - the searcher's pending decisions -> TrialCreated, TrialTrainTo, TrialClosed, and its shutdown
//    -> ExperimentStateChanged(STOPPING_COMPLETED);
//  - a trial with work and no run (new, restarted, activated, promoted) -> TaskSubmitted of a run;
//  - a run that failed -> TrialRestarted, or TrialEnded(ERROR) past max_restarts;
//  - a queued run that must not start (paused, stopping, closed) -> its kill and end;
//  - a trial process waiting for its next workload -> TrialWorkloadAssigned;
//  - a trial or experiment that is done -> TrialEnded / ExperimentStateChanged and the checkpoint
//    garbage collection its save_* policy decides (CheckpointsDeleted).
// Idempotent: it derives everything from the state, so re-running it on a replayed state emits
// only what is still missing. One call is one round; the writer applies a round's events and
// calls again until a round is empty.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Rounds the writer runs at most per batch; a chain needs at most four (searcher decision ->
// trial -> run -> answer).
inline constexpr int kMaxReactorRounds = 8;

std::vector<events::Envelope> ReactToExperiments(const DecisionState& state);

// What the trial process should do next (agent/harness/PROTOCOL.md §3): train towards the
// searcher's length in scheduling_unit steps, validate at it, checkpoint, and exit when there is
// nothing left, the experiment is not active, or the run is being preempted or killed.
events::TrialWorkloadAssigned NextWorkload(const DecisionState& state,
                                           const ExperimentRecord& experiment,
                                           const TrialRecord& trial);

// The checkpoints the save_experiment_best / save_trial_best / save_trial_latest policy deletes
// among those of `trial_id` (or of every trial when nullopt), ranking by the searcher's metric
// at each checkpoint's batch count. A checkpoint outside the experiment's best now can never
// enter it later, so collecting at a trial's end is safe. A checkpoint a model version points at
// is never collected.
std::vector<std::string> CheckpointsToCollect(const DecisionState& state,
                                              const ExperimentRecord& experiment,
                                              std::optional<int64_t> trial_id);

// The CheckpointsDeleted that collects `uuids` under the experiment's policy, its reason
// beginning with `when`.
events::Envelope CollectionEvent(const ExperimentRecord& experiment, std::vector<std::string> uuids,
                                 const std::string& when);

}  // namespace cairn::commands
