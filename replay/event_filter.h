// Which events `cairn replay dump` prints: by type, by the ids an event mentions, by offset
// range and by time range (all bounds inclusive).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "base/status.h"
#include "events.pb.h"

namespace cairn::replay {

struct EventFilter {
  std::set<std::string> types;  // payload type names; empty = every type
  std::string entity;           // "" = any
  uint64_t from_offset = 0;
  std::optional<uint64_t> to_offset;
  std::optional<int64_t> since_micros;
  std::optional<int64_t> until_micros;

  bool Matches(const events::Envelope& event) const;
};

// Parses "TaskSubmitted,TaskExited" into type names, rejecting names no event has.
Result<std::set<std::string>> ParseEventTypes(const std::string& list);

// Whether `id` is one of the ids the event is about: its task, job, agent or allocation.
bool EventMentions(const events::Envelope& event, const std::string& id);

}  // namespace cairn::replay
