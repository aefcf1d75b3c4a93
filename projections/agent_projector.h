// The agents projection: one AgentView per agent, keyed "agent/<agent_id>", with the
// allocations currently placed on it (a gang's part on each of its agents). Beside the views,
// "allocation/<allocation_id>" lists the agents holding a running allocation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kAgentsProjector = "agents";

class AgentProjector : public Projector {
 public:
  const std::string& name() const override { return kAgentsProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

std::string AgentKey(const std::string& agent_id);

Result<std::optional<views::AgentView>> ReadAgent(ViewReader& reader, const std::string& agent_id);
// Every agent, by agent id.
Result<std::vector<views::AgentView>> ReadAgents(ViewReader& reader);

}  // namespace cairn::projections
