// The config policies domain's commands (det config-policies set/delete). Decided by
// commands/policies/policy_decider.h.
#pragma once

#include <cstdint>
#include <string>

namespace cairn::commands {

// Replaces the policies of one scope (workspace_id 0: global) for one workload type.
struct SetConfigPolicies {
  static constexpr const char* kName = "SetConfigPolicies";
  int32_t workspace_id = 0;
  std::string workload_type;  // EXPERIMENT or NTSC
  std::string text;           // the policies document, YAML or JSON
};

struct DeleteConfigPolicies {
  static constexpr const char* kName = "DeleteConfigPolicies";
  int32_t workspace_id = 0;
  std::string workload_type;
};

}  // namespace cairn::commands
