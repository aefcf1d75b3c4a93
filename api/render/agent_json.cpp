#include "api/render/agent_json.h"

#include <map>

#include "base/clock.h"

namespace cairn::api {

using nlohmann::json;

std::string SlotType(const views::AgentView& agent) {
  for (const auto& device : agent.devices()) {
    if (device.type() == "cuda") return "TYPE_CUDA";
  }
  return "TYPE_CPU";
}

json AgentJson(const views::AgentView& agent) {
  std::map<int32_t, std::string> slot_owner;
  for (const auto& allocation : agent.allocations()) {
    for (int32_t slot : allocation.slot_ids()) slot_owner[slot] = allocation.allocation_id();
  }
  json slots = json::object();
  std::string type = SlotType(agent);
  std::string brand = agent.devices_size() > 0 ? agent.devices(0).brand() : "Artificial";
  for (int32_t i = 0; i < agent.slot_count(); ++i) {
    json device = {{"id", i}, {"brand", brand}, {"uuid", ""}, {"type", type}};
    if (i < agent.devices_size()) {
      device["brand"] = agent.devices(i).brand();
      device["uuid"] = agent.devices(i).uuid();
    }
    json slot = {{"id", std::to_string(i)},
                 {"enabled", agent.enabled()},
                 {"draining", agent.draining()},
                 {"device", device}};
    auto owner = slot_owner.find(i);
    if (owner != slot_owner.end()) {
      slot["container"] = {{"id", owner->second}, {"state", "STATE_RUNNING"}};
    }
    slots["/agents/" + agent.agent_id() + "/slots/" + std::to_string(i)] = slot;
  }
  int disabled = agent.enabled() ? 0 : agent.slot_count();
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
