#include "commands/experiments/log_policies.h"

#include <set>

namespace cairn::experiments {

namespace {

using fields::Field;
using fields::MapFields;

// Determined's own defaults (expconf CUDAOOM, ECCError).
const std::vector<LogPolicy>& DefaultLogPolicies() {
  static const std::vector<LogPolicy> defaults = {
      {"CUDA OOM", ".*CUDA out of memory.*", ""},
      {"ECC Error", ".*uncorrectable ECC error encountered.*", ""},
  };
  return defaults;
}

re2::RE2::Options PatternOptions() {
  re2::RE2::Options options;
  options.set_log_errors(false);
  // A pattern is a user's; its compiled program is bounded like RE2's default, said here once.
  options.set_max_mem(8 << 20);
  return options;
}

Result<std::string> ReadAction(const Field& field) {
  if (field.node.IsMap()) {  // legacy: {type: cancel_retries}
    CAIRN_ASSIGN_OR_RETURN(MapFields legacy, MapFields::Read(field, "a map"));
    CAIRN_RETURN_IF_ERROR(legacy.Check({"type"}));
    CAIRN_ASSIGN_OR_RETURN(Field type, legacy.Require("type", kLogActionCancelRetries));
    return fields::ReadChoice(type, {kLogActionCancelRetries, kLogActionExcludeNode});
  }
  return fields::ReadChoice(field, {kLogActionCancelRetries, kLogActionExcludeNode});
}

}  // namespace

std::string LogPolicyKey(const LogPolicy& policy) {
  return policy.name.empty() ? "unnamed:" + policy.action + ":" + policy.pattern
                             : "name:" + policy.name;
}

Result<std::vector<LogPolicy>> ReadLogPolicies(const Field& field) {
  if (!field.node.IsSequence()) return fields::Invalid(field, "expected a list of policies");
  std::vector<LogPolicy> policies;
  std::set<std::string> names;
  for (size_t i = 0; i < field.node.size(); ++i) {
    const Field element = fields::Element(field, field.node[i], i);
    CAIRN_ASSIGN_OR_RETURN(MapFields entry, MapFields::Read(element, "a map"));
    CAIRN_RETURN_IF_ERROR(entry.Check({"name", "pattern", "action"}));
    LogPolicy policy;
    if (auto name = entry.Get("name")) {
      CAIRN_ASSIGN_OR_RETURN(policy.name, fields::ReadString(*name, "a name"));
      if (policy.name.empty()) return fields::Invalid(*name, "must not be empty");
      if (!names.insert(policy.name).second) {
        return fields::Invalid(*name, "another policy is named '" + policy.name + "'");
      }
    }
    if (auto pattern = entry.Get("pattern")) {
      CAIRN_ASSIGN_OR_RETURN(policy.pattern, fields::ReadString(*pattern, "a regular expression"));
      re2::RE2 compiled(policy.pattern, PatternOptions());
      if (!compiled.ok()) {
        return fields::Invalid(
            *pattern, "not a regular expression (RE2, as Go reads it): " + compiled.error());
      }
    }
    if (auto action = entry.Get("action")) {
      CAIRN_ASSIGN_OR_RETURN(policy.action, ReadAction(*action));
    }
    if (policy.name.empty() && (policy.pattern.empty() || policy.action.empty())) {
      return fields::Invalid(element,
                             "needs a name, or (unnamed, the legacy form) a pattern "
                             "and an action");
    }
    if (!policy.action.empty() && policy.pattern.empty()) {
      return fields::Invalid(element, "an action needs a pattern");
    }
    policies.push_back(std::move(policy));
  }
  return policies;
}

std::vector<LogPolicy> MergeLogPolicies(std::vector<LogPolicy> policies,
                                        const std::vector<LogPolicy>& lower) {
  std::set<std::string> keys;
  for (const auto& policy : policies) keys.insert(LogPolicyKey(policy));
  for (const auto& policy : lower) {
    if (keys.insert(LogPolicyKey(policy)).second) policies.push_back(policy);
  }
  return policies;
}

std::vector<LogPolicy> WithDefaultLogPolicies(std::vector<LogPolicy> policies) {
  return MergeLogPolicies(std::move(policies), DefaultLogPolicies());
}

nlohmann::json LogPoliciesJson(const std::vector<LogPolicy>& policies) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& policy : policies) {
    nlohmann::json entry = nlohmann::json::object();
    if (!policy.name.empty()) entry["name"] = policy.name;
    if (!policy.pattern.empty()) entry["pattern"] = policy.pattern;
    if (!policy.action.empty()) entry["action"] = policy.action;
    list.push_back(std::move(entry));
  }
  return list;
}

CompiledLogPolicies::CompiledLogPolicies(std::vector<LogPolicy> policies)
    : policies_(std::move(policies)) {
  for (const auto& policy : policies_) {
    auto compiled = policy.pattern.empty()
                        ? nullptr
                        : std::make_unique<re2::RE2>(policy.pattern, PatternOptions());
    if (compiled != nullptr && !compiled->ok()) compiled.reset();
    compiled_.push_back(std::move(compiled));
  }
}

std::vector<size_t> CompiledLogPolicies::Matches(std::string_view line) const {
  std::vector<size_t> matched;
  if (line.find("\"log_policies\":") != std::string_view::npos) return matched;
  for (size_t i = 0; i < compiled_.size(); ++i) {
    if (compiled_[i] != nullptr &&
        re2::RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *compiled_[i])) {
      matched.push_back(i);
    }
  }
  return matched;
}

}  // namespace cairn::experiments
