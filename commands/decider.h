// The decider: (decision state, command) -> events, or a typed refusal. Pure: no I/O, no clock,
// no randomness (ids and times arrive inside the command and its meta).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "commands/commands.h"
#include "commands/decision_state.h"
#include "events.pb.h"

namespace cairn::commands {

struct Decision {
  std::vector<events::Envelope> events;  // payloads only; the writer fills the envelope
  std::string entity_id;                 // the task or agent the command was about
};

// The decision of a command that changes nothing (a retry, a kill of an ended task).
inline Decision NoChange(std::string entity_id) { return Decision{{}, std::move(entity_id)}; }

// Validates `command` against `state` and returns the events it causes. A command that changes
// nothing (a retry, a kill of an ended task) yields no events. A command whose idempotency key
// was seen before yields no events and the entity of the first one.
Result<Decision> Decide(const DecisionState& state, const Command& command,
                        const CommandMeta& meta);

// The seeds' routing of a task that names no pool: TensorBoards, and commands, shells and
// notebooks that ask for no slot, go to the default aux pool; everything else (experiments'
// trials included) to the default compute pool.
bool IsAuxTask(const events::TaskSpec& spec, int32_t slots);

// What the writer decides after every batch that wrote events, in order: the experiment
// reactor's rounds (commands/experiment_reactor.h), then one scheduling pass at `now`. `record`
// must stamp the event, Apply it to `state` and keep it; `actor` names who decided
// ("system:experiments", "system:scheduler").
void DecideFollowUps(DecisionState& state, int64_t now,
                     const std::function<void(events::Envelope event, const char* actor)>& record);

}  // namespace cairn::commands
