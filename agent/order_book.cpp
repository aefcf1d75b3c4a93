#include "agent/order_book.h"

#include <algorithm>
#include <utility>

#include "events/envelope_util.h"

namespace cairn::agent {

OrderBook::OrderBook(std::string agent_id, std::string incarnation)
    : agent_id_(std::move(agent_id)), incarnation_(std::move(incarnation)) {}

OrderBook::Decision OrderBook::Decide(const events::Envelope& order) {
  if (!order.has_allocation_assigned() && !order.has_kill_requested() &&
      !order.has_preemption_requested()) {
    return {Action::kIgnore, "not a placement order"};
  }
  // A gang's orders name every agent of the gang; each agent acts on its own part.
  const auto parts = OrderPartsOf(order);
  auto own = std::find_if(parts.begin(), parts.end(), [&](const events::AllocationPart& part) {
    return part.agent_id() == agent_id_;
  });
  if (own == parts.end()) return {Action::kIgnore, "addressed to another agent"};
  if (own->agent_incarnation() != incarnation_) {
    return {Action::kIgnore, "for incarnation " + own->agent_incarnation()};
  }
  if (order.has_allocation_assigned()) {
    const std::string& allocation_id = order.allocation_assigned().allocation_id();
    if (allocation_id.empty()) return {Action::kIgnore, "no allocation id"};
    if (retired_.count(allocation_id) > 0)
      return {Action::kIgnore, "killed before it was assigned"};
    if (!started_.insert(allocation_id).second) {
      return {Action::kIgnore, "already started (duplicate order)"};
    }
    return {Action::kRun, ""};
  }
  if (order.has_kill_requested()) {
    const std::string& allocation_id = order.kill_requested().allocation_id();
    if (allocation_id.empty()) return {Action::kIgnore, "no allocation id"};
    if (started_.count(allocation_id) == 0) {
      retired_.insert(allocation_id);
      return {Action::kIgnore, "allocation was never started here"};
    }
    return {Action::kKill, ""};
  }
  if (started_.count(order.preemption_requested().allocation_id()) == 0) {
    return {Action::kIgnore, "allocation was never started here"};
  }
  return {Action::kPreempt, ""};
}

}  // namespace cairn::agent
