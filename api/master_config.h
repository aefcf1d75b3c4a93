// The master's configuration file (YAML). Errors name the file, the line and the field; a key
// Cairn does not know is an error, so a typo never silently falls back to a default.
#pragma once

#include <cstdint>
#include <string>

#include "events/event_log.h"
#include "events/status.h"

namespace cairn {

struct MasterConfig {
  std::string listen_address = "127.0.0.1";
  uint16_t port = 8080;  // 0 picks a free port
  std::string data_dir;
  LogConfig log;  // log.data_dir is filled from data_dir
  std::string cluster_name = "cairn";
  double agent_timeout_seconds = 10;  // no heartbeat for this long -> AgentDisconnected
  size_t max_request_body_bytes = 128u << 20;
};

// Parses YAML text; `source_name` names it in errors.
Result<MasterConfig> ParseMasterConfig(const std::string& yaml_text,
                                       const std::string& source_name);
Result<MasterConfig> LoadMasterConfig(const std::string& path);

}  // namespace cairn
