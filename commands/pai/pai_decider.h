// OpenPAI jobs on the write side: submission and stop (deciders), and the job controller that
// follows each attempt's tasks (a reactor run after every batch, like the experiment reactor).
// Pure: state in, events out.
#pragma once

#include <vector>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/pai/pai_commands.h"
#include "events.pb.h"

namespace cairn::commands {

// PaiJobSubmitted, PaiJobAttemptStarted (attempt 0) and every task's TaskSubmitted, one gang.
// AlreadyExists when the user already has a job of that name (OpenPAI's ConflictJobError),
// NotFound naming the virtual cluster when no pool has its name (NoVirtualClusterError),
// FailedPrecondition when a task could never fit.
Result<Decision> DecideCommand(const DecisionState& state, const SubmitPaiJob& command,
                               const CommandMeta& meta);

// PaiJobStopRequested and a kill of every live task; nothing for a job already ended or stopping.
Result<Decision> DecideCommand(const DecisionState& state, const StopPaiJob& command,
                               const CommandMeta& meta);

// Submitting takes the right to create work in the job's workspace; stopping, the right to change
// its owner's work there.
Status MayRun(const DecisionState& state, const UserRecord& user, const SubmitPaiJob& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const StopPaiJob& command);

// For each job an event touched: once its attempt's end is decided (a failure, enough
// completions, every completion, a stop), kills of its live tasks; once all have ended,
// PaiJobAttemptEnded and, for a failure with retries left, the next attempt's tasks.
std::vector<events::Envelope> ReactToPaiJobs(const DecisionState& state);

}  // namespace cairn::commands
