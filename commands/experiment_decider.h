// Internal to the write side: the decider's experiment, workload and template commands
// (commands.h). Pure, like the rest of the decider; what follows from their events (the
// searcher's decisions, trial runs, restarts, the next workload) is the experiment reactor's.
#pragma once

#include <optional>

#include "commands/commands.h"
#include "commands/decider.h"
#include "commands/decision_state.h"
#include "commands/writer.h"

namespace cairn::commands {

Result<Decision> DecideCreateExperiment(const DecisionState& state, const CreateExperiment& command,
                                        const CommandMeta& meta);
Result<Decision> DecideExperimentAction(const DecisionState& state,
                                        const ExperimentAction& command);
Result<Decision> DecideUpdateExperiment(const DecisionState& state,
                                        const UpdateExperiment& command);
Result<Decision> DecideKillTrial(const DecisionState& state, const KillTrial& command);
Result<Decision> DecideContinueExperiment(const DecisionState& state,
                                          const ContinueExperiment& command);
Result<Decision> DecideDeleteCheckpoints(const DecisionState& state,
                                         const DeleteCheckpoints& command);
Result<Decision> DecideReportWorkload(const DecisionState& state, const ReportWorkload& command);
// The answer to `report` that the experiment reactor recorded, once it has: the live run's
// conversation reached the report's sequence and is not waiting for an answer.
std::optional<events::TrialWorkloadAssigned> RecordedWorkloadAnswer(const DecisionState& state,
                                                                    const ReportWorkload& report);
// The start of the live trial run holding `allocation_id` (writer.h); NotFound otherwise.
Result<TrialRunStart> DescribeLiveTrialRun(const DecisionState& state,
                                           const std::string& allocation_id);
Result<Decision> DecideSaveTemplate(const DecisionState& state, const SaveTemplate& command);
Result<Decision> DecideDeleteTemplate(const DecisionState& state, const DeleteTemplate& command);

}  // namespace cairn::commands
