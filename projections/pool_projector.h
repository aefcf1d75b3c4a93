// The pools projection: the resource pools the master was configured with (the latest
// ResourcePoolsConfigured) and, per pool, what its connected agents offer and hold. Keys:
//   "config"                   -> events::ResourcePoolsConfigured, the latest
//   "usage/<pool>"             -> PoolUsage, kept up to date as agents and allocations change
//   "agent/<agent_id>"         -> PoolAgent: the agent's current contribution to its pool
//   "allocation/<allocation>"  -> the agents holding a live allocation ("a\nb"), so an end that
//                                 names no agent (AllocationReleased, a gang's TaskExited) finds
//                                 them
// An agent's contribution is subtracted before it changes and added after, so usage is never
// recomputed by a scan.
#pragma once

#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kPoolsProjector = "pools";

class PoolProjector : public Projector {
 public:
  const std::string& name() const override { return kPoolsProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

// Every configured pool in configuration order, with its defaults and usage. Pools that agents
// joined under an older configuration are left out (they cannot run anything new).
Result<std::vector<views::PoolView>> ReadPools(ViewReader& reader);

}  // namespace cairn::projections
