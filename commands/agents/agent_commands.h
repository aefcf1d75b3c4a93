// The agents and pools domain's commands: an agent registers, disconnects, is enabled or
// disabled, and the master records its pool configuration. Decided by
// commands/agents/agent_decider.h.
#pragma once

#include <cstdint>
#include <string>

#include "events.pb.h"

namespace cairn::commands {

// Records the master's pool configuration when it differs from the last one in the log.
struct ConfigurePools {
  static constexpr const char* kName = "ConfigurePools";
  events::ResourcePoolsConfigured config;
};

struct RegisterAgent {
  static constexpr const char* kName = "RegisterAgent";
  events::AgentRegistered registration;  // `reconnect` is decided, not taken from the caller
};

struct DisconnectAgent {
  static constexpr const char* kName = "DisconnectAgent";
  std::string agent_id;
  std::string incarnation;
  std::string reason;
};

struct EnableAgent {
  static constexpr const char* kName = "EnableAgent";
  std::string agent_id;
};

struct DisableAgent {
  static constexpr const char* kName = "DisableAgent";
  std::string agent_id;
  bool drain = false;
};

// det slot enable/disable: one slot of an agent; a disabled slot's task is killed unless drained.
struct SetSlotEnabled {
  static constexpr const char* kName = "SetSlotEnabled";
  std::string agent_id;
  int32_t slot_id = 0;
  bool enabled = true;
  bool drain = false;
};

}  // namespace cairn::commands
