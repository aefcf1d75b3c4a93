// Small, pure helpers over event envelopes: names, entity ids, JSON, time formatting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events.pb.h"
#include "events/status.h"

namespace cairn {

// The current schema version written into every envelope.
inline constexpr uint32_t kSchemaVersion = 1;

// "TaskSubmitted", "AgentRegistered", ... ; "Unknown" for a payload this build does not know.
std::string PayloadTypeName(const events::Envelope& event);

// "COMMAND", "TRIAL", ... (the enum's name without TASK_TYPE_); "UNSPECIFIED" for 0.
std::string TaskTypeName(events::TaskType type);

// The task an event is about: TaskSubmitted, AllocationAssigned, TaskStarted, KillRequested,
// TaskExited; "" for every other event.
std::string TaskIdOf(const events::Envelope& event);

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

// One line of grpc-gateway style JSON (camelCase, enums as names, int64 as strings).
std::string EnvelopeToJson(const events::Envelope& event);
Result<events::Envelope> EnvelopeFromJson(const std::string& json);

// RFC 3339 with microseconds and a Z, e.g. "2025-03-20T12:00:00.000000Z".
std::string FormatRfc3339(int64_t unix_micros);
// Parses RFC 3339 ("...Z" or "+00:00", optional fraction) or a plain integer of unix seconds.
Result<int64_t> ParseTimeToUnixMicros(const std::string& text);

// A number as a person writes it: "3", "0.25", "1e+20" (ostream's default, 6 significant digits).
// A UUID in its canonical text form: 8-4-4-4-12 hex digits (either case), nothing else. Checkpoint
// ids must be one: they become directory names that garbage collection deletes.
bool IsCanonicalUuid(const std::string& text);

std::string FormatNumber(double value);

// Wall clock in microseconds since the epoch. Only edges (api/, agent/) may call it; deciders
// and projectors read time from events.
int64_t NowUnixMicros();

// A random 128-bit id as 36-char lowercase UUID text (version 4).
std::string NewUuid();

}  // namespace cairn
