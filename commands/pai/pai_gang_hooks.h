// OpenPAI's part in placing its jobs' gangs (commands/scheduler/gang_hooks.h): each member's
// ports by its task role's portList, and the PAI_* variables that say where the others run.
#pragma once

#include <string>

#include "commands/decision_state.h"
#include "commands/scheduler/gang_hooks.h"

namespace cairn::commands {

// The hooks for an OpenPAI job's gang, or nullptr when `job_id` is not an OpenPAI job's.
const GangHooks* PaiGangHooks(const DecisionState& state, const std::string& job_id);

}  // namespace cairn::commands
