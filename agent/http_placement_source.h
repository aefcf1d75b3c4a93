// Placement orders from the master's event stream (embedded mode):
// GET /api/v1/events?from=N&follow=true&agent=ID, one JSON envelope per line. After any
// disconnect it reconnects with back-off from the offset of the last order handled + 1.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "agent/placement_source.h"
#include "net/http_client.h"

namespace cairn::agent {

// Run() on one thread; Stop() and next_offset() from any.
class HttpPlacementSource : public PlacementSource {
 public:
  struct Options {
    std::chrono::milliseconds initial_backoff{100};
    std::chrono::milliseconds max_backoff{3000};
  };

  HttpPlacementSource(net::Client client, std::string agent_id, uint64_t from, Options options);

  void Run(const OrderHandler& handler) override;
  void Stop() override;
  void Reconnect() override;
  std::string Describe() const override;

  // The offset the next connection asks for.
  uint64_t next_offset() const { return next_offset_.load(); }

 private:
  net::Client client_;
  const std::string agent_id_;
  const Options options_;
  std::atomic<uint64_t> next_offset_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::atomic<bool> stopped_{false};
  bool running_ = false;  // Run() has not returned yet
};

}  // namespace cairn::agent
