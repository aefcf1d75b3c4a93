// How the agents and pools domain's events fold into the decision state: the recorded pool
// configuration, an agent's registration (a new incarnation forgets what the old one held),
// disconnection, enabling and disabling. Called by Apply (commands/decision_state.cpp).
#pragma once

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Folds a pool or agent event; other payloads are ignored.
void ApplyAgentEvent(DecisionState& state, const events::Envelope& event);

}  // namespace cairn::commands
