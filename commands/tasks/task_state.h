// How the tasks and job queue domain's events fold into the decision state: a task's submission,
// allocation, start, readiness, kill, preemption, release and end, and a job's queue changes,
// with the slots its allocations hold on their agents. Called by Apply
// (commands/decision_state.cpp), in the order the domains depend on.
#pragma once

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Folds a task or job-queue event; other payloads are ignored.
void ApplyTaskEvent(DecisionState& state, const events::Envelope& event);

}  // namespace cairn::commands
