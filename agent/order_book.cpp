#include "agent/order_book.h"

#include <utility>

#include "events/envelope_util.h"

namespace cairn::agent {

OrderBook::OrderBook(std::string agent_id, std::string incarnation)
    : agent_id_(std::move(agent_id)), incarnation_(std::move(incarnation)) {}

OrderBook::Decision OrderBook::Decide(const events::Envelope& order) {
  if (order.has_allocation_assigned()) {
    const auto& assigned = order.allocation_assigned();
    // A gang's order names every agent; each runs its own part.
    const events::AllocationPart* own = nullptr;
    const auto parts = AllocationPartsOf(assigned);
    for (const auto& part : parts) {
      if (part.agent_id() == agent_id_) own = &part;
    }
    if (own == nullptr) return {Action::kIgnore, "addressed to another agent"};
    if (own->agent_incarnation() != incarnation_) {
      return {Action::kIgnore, "for incarnation " + own->agent_incarnation()};
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
    std::string incarnation;
    bool addressed = false;
    if (kill.parts_size() == 0) {
      addressed = kill.agent_id() == agent_id_;
      incarnation = kill.agent_incarnation();
    }
    for (const auto& part : kill.parts()) {
      if (part.agent_id() != agent_id_) continue;
      addressed = true;
      incarnation = part.agent_incarnation();
    }
    if (!addressed) return {Action::kIgnore, "addressed to another agent"};
    if (incarnation != incarnation_) return {Action::kIgnore, "for incarnation " + incarnation};
    if (kill.allocation_id().empty()) return {Action::kIgnore, "no allocation id"};
    if (started_.count(kill.allocation_id()) == 0) {
      retired_.insert(kill.allocation_id());
      return {Action::kIgnore, "allocation was never started here"};
    }
    return {Action::kKill, ""};
  }
  if (order.has_preemption_requested()) {
    const auto& preemption = order.preemption_requested();
    bool addressed = preemption.agent_id() == agent_id_;
    for (const auto& part : preemption.parts()) addressed |= part.agent_id() == agent_id_;
    if (!addressed) return {Action::kIgnore, "addressed to another agent"};
    if (started_.count(preemption.allocation_id()) == 0) {
      return {Action::kIgnore, "allocation was never started here"};
    }
    return {Action::kPreempt, ""};
  }
  return {Action::kIgnore, "not a placement order"};
}

}  // namespace cairn::agent
