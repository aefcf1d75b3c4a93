// Agents and their slots in Determined's REST shape (v1Agent), with Cairn's facts under "cairn".
// Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "views.pb.h"

namespace cairn::api {

// "TYPE_CUDA" when the agent reported a CUDA device, else "TYPE_CPU".
std::string SlotType(const views::AgentView& agent);

nlohmann::json AgentJson(const views::AgentView& agent);

// One slot of the agent (v1Slot); null when the agent has no such slot.
nlohmann::json SlotJson(const views::AgentView& agent, int32_t slot_id);

}  // namespace cairn::api
