// The experiments domain's decisions (commands/experiments/experiment_commands.h): experiment,
// and workload commands, and who may run each (MayRun). Pure, like the rest of the
// decider; what follows from their events (the searcher's decisions, trial runs, restarts, the next
// workload) is the experiment reactor's.
#pragma once

#include <optional>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/experiments/experiment_commands.h"
#include "commands/experiments/trial_run.h"

namespace cairn::commands {

Result<Decision> DecideCommand(const DecisionState& state, const CreateExperiment& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const ExperimentAction& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateExperiment& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const KillTrial& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const ContinueExperiment& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DeleteTensorboardFiles& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DeleteCheckpoints& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const ReportWorkload& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const ReportTrial& command,
                               const CommandMeta& meta);

// Who may: create work in the experiment's workspace (create, continue), change it as its owner or
// a workspace admin (act, update, kill a trial, delete its checkpoints). Workload reports come
// from trial processes, never users.
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateExperiment& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ExperimentAction& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateExperiment& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const KillTrial& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const ContinueExperiment& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteCheckpoints& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const DeleteTensorboardFiles& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ReportWorkload& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const ReportTrial& command);
Result<Decision> DecideCommand(const DecisionState& state, const RecordLogPolicyMatch& command,
                               const CommandMeta& meta);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const RecordLogPolicyMatch& command);

// Whether the live trial run holding `allocation_id` should stop now (Determined's preemption
// signal): the scheduler preempts or kills it, its experiment is not active, the searcher closed
// the trial, or a user killed it. True also when the allocation is no live trial run's any more.
bool TrialRunShouldStop(const DecisionState& state, const std::string& allocation_id);

// The answer to `report` that the experiment reactor recorded, once it has: the live run's
// conversation reached the report's sequence and is not waiting for an answer.
std::optional<events::TrialWorkloadAssigned> RecordedWorkloadAnswer(const DecisionState& state,
                                                                    const ReportWorkload& report);
// The start of the live trial run holding `allocation_id` (commands/experiments/trial_run.h);
// NotFound otherwise.
Result<TrialRunStart> DescribeLiveTrialRun(const DecisionState& state,
                                           const std::string& allocation_id);

}  // namespace cairn::commands
