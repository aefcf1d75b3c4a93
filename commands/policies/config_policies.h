// Config policies (det config-policies): what a cluster admin, for every workspace, or a
// workspace admin, for one, imposes on every submission of a kind: an invariant configuration
// merged over the submitted one (its values win, a global policy's over a workspace's), and
// constraints that refuse what goes past them (a global limit wins over a workspace's). Pure
// functions over the tenancy state that holds the policies (TenancyState::config_policies).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"
#include "commands/tenancy/tenancy.h"
#include "events.pb.h"

namespace cairn::commands {

// Determined's workload types: experiments, and commands, notebooks, shells and TensorBoards.
inline constexpr char kExperimentWorkload[] = "EXPERIMENT";
inline constexpr char kNtscWorkload[] = "NTSC";

// InvalidArgument unless `workload_type` is EXPERIMENT or NTSC.
Status CheckWorkloadType(const std::string& workload_type);

// A policies document (YAML or JSON, as `det config-policies set` sends the file) read into the
// event that records it. Keys: invariant_config (a map), constraints (priority_limit,
// resources.max_slots); anything else is refused by name. Refuses an invariant configuration
// that contradicts the document's own constraints, as Determined does.
Result<events::ConfigPoliciesSet> ReadConfigPolicies(const std::string& text, int32_t workspace_id,
                                                     const std::string& workload_type);

// The document GET answers: {invariant_config, constraints}, each only when set.
nlohmann::json ConfigPoliciesJson(const std::string& invariant_config_json,
                                  std::optional<int32_t> priority_limit,
                                  std::optional<int32_t> max_slots);

// OK unless the invariant configuration of `policies` contradicts `constraints` (a global
// policy's constraints bind every workspace's invariant configuration); `scope` names them.
Status CheckAgainstConstraints(const events::ConfigPoliciesSet& policies,
                               const ConfigPolicyRecord& constraints, const std::string& scope);

// `config` with the invariant configuration of `workspace_id`'s policies, then the global ones,
// merged over it (Determined's template merge rules, the policy's values winning).
Result<nlohmann::ordered_json> WithInvariantConfigs(const TenancyState& tenancy,
                                                    int32_t workspace_id,
                                                    const std::string& workload_type,
                                                    nlohmann::ordered_json config);

// What a submission asks for, as the constraints read it (unset: not asked).
struct RequestedResources {
  std::optional<int32_t> slots;
  std::optional<int32_t> max_slots;
  std::optional<int32_t> priority;
  const char* slots_field = "resources.slots";  // resources.slots_per_trial for experiments
};

// OK when `requested` is within the constraints in force for `workspace_id` (the global limit
// where one is set, else the workspace's); otherwise InvalidArgument in Determined's words,
// naming the policy ("... exceeds limit set by admin [2] in workspace team's NTSC config
// policies: submitted workload failed a resource constraint").
Status CheckConstraints(const TenancyState& tenancy, int32_t workspace_id,
                        const std::string& workload_type, const RequestedResources& requested);

}  // namespace cairn::commands
