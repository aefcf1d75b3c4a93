// The dispatcher of the write side: (decision state, command) -> events, or a typed refusal.
// It answers a retried idempotency key, checks who may run the command, and routes it to the
// domain that owns it (commands/<domain>/*_decider.h: DecideCommand and MayRun overloads). After
// each batch it runs the domains' reactors and the scheduler (DecideFollowUps). Pure: no I/O, no
// clock, no randomness (ids and times arrive inside the command and its meta).
#pragma once

#include <cstdint>
#include <functional>

#include "base/status.h"
#include "commands/commands.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

// Validates `command` against `state` and returns the events it causes. A command that changes
// nothing (a retry, a kill of an ended task) yields no events. A command whose idempotency key
// was seen before yields no events and the entity of the first one.
Result<Decision> Decide(const DecisionState& state, const Command& command,
                        const CommandMeta& meta);

// OK when the command's actor may run it. Users are checked against their roles (and ownership
// of the work the command changes) by the command's domain (MayRun); agents, allocations and the
// system act only through the routes made for them, so they are not. A refusal is
// PermissionDenied naming the permission.
Status AuthorizeCommand(const DecisionState& state, const Command& command,
                        const CommandMeta& meta);

// What the writer decides after every batch that wrote events, in order: the experiment
// reactor's rounds (commands/experiments/experiment_reactor.h), the OpenPAI job controller's
// (commands/pai/pai_decider.h), then one scheduling pass at `now`. `record` must stamp the event,
// Apply it to `state` and keep it; `actor` names who decided ("system:experiments",
// "system:openpai", "system:scheduler").
void DecideFollowUps(DecisionState& state, int64_t now,
                     const std::function<void(events::Envelope event, const char* actor)>& record);

}  // namespace cairn::commands
