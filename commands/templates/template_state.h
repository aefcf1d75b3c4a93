// How the templates room's events fold into the decision state (DecisionState::templates).
// Called by Apply (commands/decision_state.cpp).
#pragma once

#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Folds TemplateSaved and TemplateDeleted; returns false for other payloads.
bool ApplyTemplateEvent(DecisionState& state, const events::Envelope& event);

}  // namespace cairn::commands
