#include "master/agent_heartbeats.h"

#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "events/envelope_util.h"

namespace cairn {

AgentHeartbeats::AgentHeartbeats(DecisionLoop* loop, std::chrono::milliseconds timeout)
    : loop_(loop), timeout_(timeout) {}

AgentHeartbeats::~AgentHeartbeats() { Stop(); }

void AgentHeartbeats::Record(const std::string& agent_id) {
  std::lock_guard lock(mutex_);
  last_seen_[agent_id] = std::chrono::steady_clock::now();
}

void AgentHeartbeats::Start() { monitor_ = std::thread(&AgentHeartbeats::Monitor, this); }

void AgentHeartbeats::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  if (monitor_.joinable()) monitor_.join();
}

void AgentHeartbeats::Monitor() {
  const auto tick = std::max(std::chrono::milliseconds(100), timeout_ / 4);
  while (true) {
    {
      std::unique_lock lock(mutex_);
      if (stop_requested_.wait_for(lock, tick, [&] { return stopping_; })) return;
    }
    struct Silent {
      std::string agent_id, incarnation;
    };
    std::vector<Silent> silent;
    auto now = std::chrono::steady_clock::now();
    loop_->Read([&](const commands::DecisionState& state) {
      std::lock_guard lock(mutex_);
      for (const auto& [id, agent] : state.agents) {
        if (!agent.connected) continue;
        // An agent we have not heard from since this master started gets a full timeout.
        auto [it, inserted] = last_seen_.emplace(id, now);
        if (!inserted && now - it->second > timeout_) silent.push_back({id, agent.incarnation});
      }
    });
    for (const auto& agent : silent) {
      commands::CommandMeta meta{"system:heartbeat-monitor", NewUuid(), "", NowUnixMicros()};
      auto seconds = std::chrono::duration<double>(timeout_).count();
      (void)loop_->Execute(
          commands::DisconnectAgent{agent.agent_id, agent.incarnation,
                                    "no heartbeat for " + std::to_string(seconds) + " s"},
          meta);
    }
  }
}

}  // namespace cairn
