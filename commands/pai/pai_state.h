// Internal to the write side: how OpenPAI job events, and the task events of their tasks, fold
// into the decision state's PaiJobRecords. Called by Apply (decision_state.cpp).
#pragma once

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Folds PaiJob* events, and the OpenPAI side of TaskSubmitted, AllocationAssigned and
// TaskExited (called before the task record changes); other payloads are ignored.
void ApplyPaiEvent(DecisionState& state, const events::Envelope& event);

// The member of `job`'s current attempt that `task_id` is, or nullptr (also for a null job).
const PaiMember* FindPaiMember(const PaiJobRecord* job, const std::string& task_id);

}  // namespace cairn::commands
