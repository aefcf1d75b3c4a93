// Where an agent's placement orders come from (PROTOCOL.md §3): the master's event stream in
// embedded mode, or the Kafka placements topic.
#pragma once

#include <functional>
#include <string>

#include "events.pb.h"

namespace cairn::agent {

class PlacementSource {
 public:
  // Called for each order, in log order, on the thread that runs Run().
  using OrderHandler = std::function<void(const events::Envelope& order)>;

  virtual ~PlacementSource() = default;

  // Delivers orders to `handler` until Stop(), reconnecting by itself after any failure.
  // Called once, on a thread of its own.
  virtual void Run(const OrderHandler& handler) = 0;
  // Thread-safe; makes Run() return soon. Orders that arrive afterwards are not delivered.
  virtual void Stop() = 0;
  // Thread-safe; drops the current connection, if any, and resumes from the last order handled.
  // Used after a re-registration, when the connection may be to a master that has gone.
  virtual void Reconnect() = 0;
  virtual std::string Describe() const = 0;
};

}  // namespace cairn::agent
