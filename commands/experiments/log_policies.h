// An experiment's log_policies, as Determined 0.38 defines them: each names a pattern (an RE2
// regular expression, Go's syntax, matched anywhere in a line of a trial's logs) and what a match
// does: nothing but label the trial with the policy's name, `cancel_retries` (a failed run is not
// restarted) or `exclude_node` (the trial's later runs avoid the agent). Two defaults, "CUDA OOM"
// and "ECC Error", label trials unless a policy of the same name replaces them (a name with no
// pattern turns a default off). The legacy form ({pattern, action: {type}}, unnamed) is read too.
// Pure; the master matches lines with CompiledLogPolicies as they arrive.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/fields.h"
#include "base/status.h"

namespace cairn::experiments {

inline constexpr const char* kLogActionCancelRetries = "cancel_retries";
inline constexpr const char* kLogActionExcludeNode = "exclude_node";

struct LogPolicy {
  std::string name;     // "" for a legacy policy
  std::string pattern;  // "" = disabled (a default turned off by name)
  std::string action;   // "", kLogActionCancelRetries or kLogActionExcludeNode
  bool operator==(const LogPolicy&) const = default;
};

// What tells policies apart: the name, or for an unnamed (legacy) one its action and pattern.
std::string LogPolicyKey(const LogPolicy& policy);

// Reads a `log_policies` list; errors name the entry ("log_policies[1].pattern: ...").
Result<std::vector<LogPolicy>> ReadLogPolicies(const fields::Field& field);

// `policies` then those of `lower` not already there (by name; unnamed ones by action and
// pattern), as Determined merges a template's or the cluster's under a user's.
std::vector<LogPolicy> MergeLogPolicies(std::vector<LogPolicy> policies,
                                        const std::vector<LogPolicy>& lower);

// `policies` with Determined's defaults merged under them.
std::vector<LogPolicy> WithDefaultLogPolicies(std::vector<LogPolicy> policies);

// Determined's current form: [{name, pattern, action}], unset fields left out.
nlohmann::json LogPoliciesJson(const std::vector<LogPolicy>& policies);

// The policies, compiled once, matched against lines.
class CompiledLogPolicies {
 public:
  explicit CompiledLogPolicies(std::vector<LogPolicy> policies);
  const std::vector<LogPolicy>& policies() const { return policies_; }
  // Indexes of the policies whose pattern `line` matches. A line that prints a configuration
  // holding log_policies is skipped, as Determined skips it (the patterns would match themselves).
  std::vector<size_t> Matches(std::string_view line) const;

 private:
  std::vector<LogPolicy> policies_;
  std::vector<std::unique_ptr<re2::RE2>> compiled_;  // null for a disabled policy
};

}  // namespace cairn::experiments
