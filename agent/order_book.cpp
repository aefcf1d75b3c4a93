#include "agent/order_book.h"

#include <utility>

namespace cairn::agent {

OrderBook::OrderBook(std::string agent_id, std::string incarnation)
    : agent_id_(std::move(agent_id)), incarnation_(std::move(incarnation)) {}

OrderBook::Decision OrderBook::Decide(const events::Envelope& order) {
  if (order.has_allocation_assigned()) {
    const auto& assigned = order.allocation_assigned();
    if (assigned.agent_id() != agent_id_) return {Action::kIgnore, "addressed to another agent"};
    if (assigned.agent_incarnation() != incarnation_) {
      return {Action::kIgnore, "for incarnation " + assigned.agent_incarnation()};
    }
    if (assigned.allocation_id().empty()) return {Action::kIgnore, "no allocation id"};
    if (retired_.count(assigned.allocation_id()) > 0) {
      return {Action::kIgnore, "killed before it was assigned"};
    }
    if (!started_.insert(assigned.allocation_id()).second) {
      return {Action::kIgnore, "already started (duplicate order)"};
    }
    return {Action::kRun, ""};
  }
  if (order.has_kill_requested()) {
    const auto& kill = order.kill_requested();
    if (kill.agent_id() != agent_id_) return {Action::kIgnore, "addressed to another agent"};
    if (kill.agent_incarnation() != incarnation_) {
      return {Action::kIgnore, "for incarnation " + kill.agent_incarnation()};
    }
    if (kill.allocation_id().empty()) return {Action::kIgnore, "no allocation id"};
    if (started_.count(kill.allocation_id()) == 0) {
      retired_.insert(kill.allocation_id());
      return {Action::kIgnore, "allocation was never started here"};
    }
    return {Action::kKill, ""};
  }
  return {Action::kIgnore, "not a placement order"};
}

}  // namespace cairn::agent
