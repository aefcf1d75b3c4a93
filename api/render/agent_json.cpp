#include "api/render/agent_json.h"

#include <algorithm>

#include "base/clock.h"

namespace cairn::api {

using nlohmann::json;

std::string SlotType(const views::AgentView& agent) {
  for (const auto& device : agent.devices()) {
    if (device.type() == "cuda") return "TYPE_CUDA";
  }
  return "TYPE_CPU";
}

namespace {

bool SlotDisabled(const views::AgentView& agent, int32_t slot_id) {
  return std::binary_search(agent.disabled_slots().begin(), agent.disabled_slots().end(), slot_id);
}

}  // namespace

json SlotJson(const views::AgentView& agent, int32_t slot_id) {
  if (slot_id < 0 || slot_id >= agent.slot_count()) return nullptr;
  std::string type = SlotType(agent);
  std::string brand = agent.devices_size() > 0 ? agent.devices(0).brand() : "Artificial";
  json device = {{"id", slot_id}, {"brand", brand}, {"uuid", ""}, {"type", type}};
  if (slot_id < agent.devices_size()) {
    device["brand"] = agent.devices(slot_id).brand();
    device["uuid"] = agent.devices(slot_id).uuid();
  }
  const bool slot_disabled = SlotDisabled(agent, slot_id);
  json slot = {{"id", std::to_string(slot_id)},
               {"enabled", agent.enabled() && !slot_disabled},
               {"draining", agent.draining()},
               {"device", device}};
  for (const auto& allocation : agent.allocations()) {
    for (int32_t used : allocation.slot_ids()) {
      if (used != slot_id) continue;
      slot["container"] = {{"id", allocation.allocation_id()}, {"state", "STATE_RUNNING"}};
      // A disabled slot is draining until its task has ended.
      if (slot_disabled) slot["draining"] = true;
    }
  }
  return slot;
}

json AgentJson(const views::AgentView& agent) {
  json slots = json::object();
  std::string type = SlotType(agent);
  std::string brand = agent.devices_size() > 0 ? agent.devices(0).brand() : "Artificial";
  for (int32_t i = 0; i < agent.slot_count(); ++i) {
    slots["/agents/" + agent.agent_id() + "/slots/" + std::to_string(i)] = SlotJson(agent, i);
  }
  int disabled = agent.enabled() ? agent.disabled_slots_size() : agent.slot_count();
  int draining = agent.draining() ? agent.slot_count() : 0;
  json stats = {{"disabled", disabled}, {"draining", draining}, {"total", agent.slot_count()}};
  return {{"id", agent.agent_id()},
          {"registeredTime", FormatRfc3339(agent.registered_time_unix_micros())},
          {"slots", slots},
          {"resourcePools", json::array({agent.resource_pool()})},
          {"enabled", agent.enabled()},
          {"draining", agent.draining()},
          {"addresses", json::array({agent.hostname()})},
          {"version", agent.version()},
          {"slotStats", {{"typeStats", {{type, stats}}}, {"brandStats", {{brand, stats}}}}},
          {"cairn",
           {{"connected", agent.connected()},
            {"incarnation", agent.incarnation()},
            {"runningAllocations", agent.allocations_size()}}}};
}

}  // namespace cairn::api
