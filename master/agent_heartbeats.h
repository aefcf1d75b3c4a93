// Tracks agents' heartbeats and turns silence into AgentDisconnected events. The timer lives at
// the edge (the decider never reads a clock): this monitor issues DisconnectAgent commands.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "api/services.h"
#include "master/decision_loop.h"

namespace cairn {

class AgentHeartbeats : public api::AgentLiveness {
 public:
  AgentHeartbeats(DecisionLoop* loop, std::chrono::milliseconds timeout);
  ~AgentHeartbeats() override;

  void Record(const std::string& agent_id) override;
  void Start();
  void Stop();

 private:
  void Monitor();
  DecisionLoop* loop_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
  std::map<std::string, std::chrono::steady_clock::time_point> last_seen_;
  std::thread monitor_;
};

}  // namespace cairn
