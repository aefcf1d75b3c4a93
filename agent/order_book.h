// Decides what an agent does with each placement order (PROTOCOL.md §3): orders for another
// agent or another incarnation are ignored, and each allocation id is acted on at most once.
// Pure logic; not thread-safe (the agent calls it under its own lock).
#pragma once

#include <set>
#include <string>

#include "events.pb.h"

namespace cairn::agent {

class OrderBook {
 public:
  enum class Action {
    kRun,      // start the allocation of this AllocationAssigned
    kKill,     // stop the allocation of this KillRequested (it was started earlier)
    kPreempt,  // ask the allocation of this PreemptionRequested to stop (SIGTERM, no escalation)
    kIgnore,   // nothing to do; `why` says why
  };
  struct Decision {
    Action action = Action::kIgnore;
    std::string why;
  };

  OrderBook(std::string agent_id, std::string incarnation);

  // Records the order and says what to do with it. An allocation is run at most once, however
  // often its AllocationAssigned arrives; a KillRequested for an allocation never seen also
  // retires its id, so that a late AllocationAssigned for it does not run.
  Decision Decide(const events::Envelope& order);

 private:
  const std::string agent_id_;
  const std::string incarnation_;
  std::set<std::string> started_;  // allocation ids this incarnation has started
  std::set<std::string> retired_;  // allocation ids killed before they were seen
};

}  // namespace cairn::agent
