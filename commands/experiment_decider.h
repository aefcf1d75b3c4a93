// Internal to the write side: the decider's experiment, workload and template commands
// (commands.h). Pure, like the rest of the decider; what follows from their events (the
// searcher's decisions, trial runs, restarts, the next workload) is the experiment reactor's.
#pragma once

#include "commands/commands.h"
#include "commands/decider.h"
#include "commands/decision_state.h"

namespace cairn::commands {

Result<Decision> DecideCreateExperiment(const DecisionState& state, const CreateExperiment& command,
                                        const CommandMeta& meta);
Result<Decision> DecideExperimentAction(const DecisionState& state,
                                        const ExperimentAction& command);
Result<Decision> DecideReportWorkload(const DecisionState& state, const ReportWorkload& command);
Result<Decision> DecideSaveTemplate(const DecisionState& state, const SaveTemplate& command);
Result<Decision> DecideDeleteTemplate(const DecisionState& state, const DeleteTemplate& command);

}  // namespace cairn::commands
