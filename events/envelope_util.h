// Small, pure helpers over event envelopes: names, entity ids, JSON, time formatting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"
#include "events/redaction.h"

namespace cairn {

// The current schema version written into every envelope.
inline constexpr uint32_t kSchemaVersion = 1;

// "TaskSubmitted", "AgentRegistered", ... ; "Unknown" for a payload this build does not know.
std::string PayloadTypeName(const events::Envelope& event);

// "COMMAND", "TRIAL", ... (the enum's name without TASK_TYPE_); "UNSPECIFIED" for 0.
std::string TaskTypeName(events::TaskType type);
// Notebooks, shells and TensorBoards: tasks whose agent starts a service (no entrypoint of their
// own) that users reach through the master's proxy.
bool IsInteractiveTask(events::TaskType type);
// Where an interactive task is served, through the master and on the agent alike (Jupyter's base
// URL, TensorBoard's path prefix): Determined's serviceAddress "/proxy/<task id>/".
std::string ServicePath(const std::string& task_id);

// The task an event is about (submitted, assigned, started, ready, asked to stop or preempted,
// released, a gang part or the whole exited); "" for every other event. A reference into `event`
// (or to an empty string).
const std::string& TaskIdOf(const events::Envelope& event);

// The task id or agent id the event is about ("" for WriterEpochClaimed).
std::string EntityIdOf(const events::Envelope& event);

// The agents an event is addressed to, for placement orders (AllocationAssigned,
// PreemptionRequested, KillRequested: every agent of a multi-agent allocation); empty for every
// other event.
std::vector<std::string> PlacementAgentsOf(const events::Envelope& event);
bool IsPlacementFor(const events::Envelope& event, const std::string& agent_id);

// Every agent's part of an allocation, the first being agent_id's (one part unless a gang).
std::vector<events::AllocationPart> AllocationPartsOf(const events::AllocationAssigned& assigned);
// The same for any placement order (AllocationAssigned, PreemptionRequested, KillRequested): its
// `parts`, or else the one part its agent_id and agent_incarnation name; empty for other events
// and for a kill of a task that never had an allocation.
std::vector<events::AllocationPart> OrderPartsOf(const events::Envelope& event);

// One line of grpc-gateway style JSON (camelCase, enums as names, int64 as strings), redacted for
// `audience` (events/redaction.h): JSON is what the event stream and `cairn replay dump` hand out.
std::string EnvelopeToJson(const events::Envelope& event, Audience audience);
Result<events::Envelope> EnvelopeFromJson(const std::string& json);

}  // namespace cairn
