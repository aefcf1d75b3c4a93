#include "api/handlers/agents.h"

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

net::Response SetAgentEnabled(Call& call, bool enable) {
  const std::string& id = call.Param("id");
  bool drain = false;
  if (!enable && !call.request().body.empty()) {
    auto body = call.Body();
    if (!body.ok()) return Error(body.status());
    if (Present(*body, "drain")) {
      if (!body->at("drain").is_boolean())
        return Error(Status::InvalidArgument("drain must be a boolean"));
      drain = body->at("drain").get<bool>();
    }
  }
  commands::Command command = enable ? commands::Command(commands::EnableAgent{id})
                                     : commands::Command(commands::DisableAgent{id, drain});
  auto outcome = call.Execute(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  if (!call.WaitFor(outcome->offset).ok()) return Ok(json::object(), outcome->offset);
  return GetAgent(call);
}

}  // namespace

net::Response EnableAgent(Call& call) { return SetAgentEnabled(call, true); }
net::Response DisableAgent(Call& call) { return SetAgentEnabled(call, false); }

}  // namespace cairn::api
