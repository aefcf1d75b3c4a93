#include "api/handlers/agents.h"

#include <charconv>

#include "api/render/agent_json.h"
#include "api/rest_util.h"

namespace cairn::api {

using nlohmann::json;

net::Response ListAgents(Call& call) {
  auto agents = call.services().projections->ListAgents();
  if (!agents.ok()) return Error(agents.status());
  json list = json::array();
  for (const auto& agent : *agents) list.push_back(AgentJson(agent));
  return Ok(
      {{"agents", list}, {"pagination", {{"endIndex", list.size()}, {"total", list.size()}}}});
}

net::Response GetAgent(Call& call) {
  const std::string& id = call.Param("id");
  auto agent = call.services().projections->GetAgent(id);
  if (!agent.ok()) return Error(agent.status());
  if (!*agent) return Error(Status::NotFound("agent " + id + " not found"));
  return Ok({{"agent", AgentJson(**agent)}});
}

namespace {

// A disable's optional {"drain": bool}: whether running work may finish.
Result<bool> DrainOf(Call& call, bool enable) {
  if (enable || call.request().body.empty()) return false;
  auto body = call.Body();
  if (!body.ok()) return body.status();
  if (!Present(*body, "drain")) return false;
  if (!body->at("drain").is_boolean()) return Status::InvalidArgument("drain must be a boolean");
  return body->at("drain").get<bool>();
}

net::Response SetAgentEnabled(Call& call, bool enable) {
  const std::string& id = call.Param("id");
  auto drain = DrainOf(call, enable);
  if (!drain.ok()) return Error(drain.status());
  commands::Command command = enable ? commands::Command(commands::EnableAgent{id})
                                     : commands::Command(commands::DisableAgent{id, *drain});
  auto outcome = call.Execute(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  if (!call.WaitFor(outcome->offset).ok()) return Ok(json::object(), outcome->offset);
  return GetAgent(call);
}

net::Response SetSlotEnabled(Call& call, bool enable) {
  const std::string& agent_id = call.Param("id");
  const std::string& slot_text = call.Param("slotId");
  int32_t slot_id = -1;
  auto [end, error] =
      std::from_chars(slot_text.data(), slot_text.data() + slot_text.size(), slot_id);
  if (error != std::errc() || end != slot_text.data() + slot_text.size() || slot_id < 0) {
    return Error(Status::InvalidArgument("invalid slot id: " + slot_text.substr(0, 40)));
  }
  auto drain = DrainOf(call, enable);
  if (!drain.ok()) return Error(drain.status());
  auto shown = call.ExecuteAndShow(commands::SetSlotEnabled{agent_id, slot_id, enable, *drain});
  if (!shown.ok()) return Error(shown.status());
  auto agent = call.services().projections->GetAgent(agent_id);
  if (!agent.ok()) return Error(agent.status());
  if (!*agent) return Error(Status::NotFound("agent " + agent_id + " not found"));
  return Ok({{"slot", SlotJson(**agent, slot_id)}});
}

}  // namespace

net::Response EnableSlot(Call& call) { return SetSlotEnabled(call, true); }
net::Response DisableSlot(Call& call) { return SetSlotEnabled(call, false); }

net::Response EnableAgent(Call& call) { return SetAgentEnabled(call, true); }
net::Response DisableAgent(Call& call) { return SetAgentEnabled(call, false); }

}  // namespace cairn::api
