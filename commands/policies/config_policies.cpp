#include "commands/policies/config_policies.h"

#include "base/yaml_json.h"
#include "commands/templates/template_merge.h"
#include "events/limits.h"

namespace cairn::commands {

namespace {

using ordered_json = nlohmann::ordered_json;

// An integer field of a policies document, or nullopt when absent or null.
Result<std::optional<int32_t>> PolicyInt(const ordered_json& object, const char* key,
                                         const std::string& path, int64_t min, int64_t max) {
  if (!object.contains(key) || object.at(key).is_null()) return std::optional<int32_t>();
  const ordered_json& value = object.at(key);
  if (!value.is_number_integer() || value.get<int64_t>() < min || value.get<int64_t>() > max) {
    return Status::InvalidArgument(path + ": an integer from " + std::to_string(min) + " to " +
                                   std::to_string(max));
  }
  return std::optional<int32_t>(static_cast<int32_t>(value.get<int64_t>()));
}

Status OnlyKeys(const ordered_json& object, const std::string& path,
                std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const char* name : allowed) known |= key == name;
    if (!known) {
      std::string names;
      for (const char* name : allowed) names += (names.empty() ? "" : ", ") + std::string(name);
      return Status::InvalidArgument(ChildPath(path, key) + ": not a key of " +
                                     (path.empty() ? "config policies" : path) + " (" + names +
                                     ")");
    }
  }
  return Status::Ok();
}

const char* SlotsKey(const std::string& workload_type) {
  return workload_type == kExperimentWorkload ? "slots_per_trial" : "slots";
}

// The invariant configuration's resources a constraint can contradict.
struct InvariantResources {
  std::optional<int32_t> slots, max_slots, priority;
};

Result<InvariantResources> InvariantResourcesOf(const std::string& invariant_config_json,
                                                const std::string& workload_type) {
  InvariantResources found;
  if (invariant_config_json.empty()) return found;
  ordered_json config = ordered_json::parse(invariant_config_json, nullptr, false);
  if (!config.is_object() || !config.contains("resources")) return found;
  const ordered_json& resources = config.at("resources");
  if (!resources.is_object()) {
    return Status::InvalidArgument("invariant_config.resources: must be a map");
  }
  const std::string slots_key = SlotsKey(workload_type);
  CAIRN_ASSIGN_OR_RETURN(found.slots, PolicyInt(resources, slots_key.c_str(),
                                                "invariant_config.resources." + slots_key, 0,
                                                kMaxSlotsPerTask));
  CAIRN_ASSIGN_OR_RETURN(found.max_slots,
                         PolicyInt(resources, "max_slots", "invariant_config.resources.max_slots",
                                   0, kMaxSlotsPerTask));
  CAIRN_ASSIGN_OR_RETURN(found.priority,
                         PolicyInt(resources, "priority", "invariant_config.resources.priority",
                                   kMinPriority, kMaxPriority));
  return found;
}

std::string ScopeName(const TenancyState& tenancy, int32_t workspace_id,
                      const std::string& workload_type) {
  if (workspace_id == kEveryWorkspace) return "the global " + workload_type + " config policies";
  const WorkspaceRecord* workspace = tenancy.FindWorkspace(workspace_id);
  return "workspace " + (workspace ? workspace->name : std::to_string(workspace_id)) + "'s " +
         workload_type + " config policies";
}

}  // namespace

Status CheckWorkloadType(const std::string& workload_type) {
  if (workload_type == kExperimentWorkload || workload_type == kNtscWorkload) return Status::Ok();
  return Status::InvalidArgument("workloadType: EXPERIMENT or NTSC, not '" +
                                 workload_type.substr(0, 40) + "'");
}

Result<events::ConfigPoliciesSet> ReadConfigPolicies(const std::string& text, int32_t workspace_id,
                                                     const std::string& workload_type) {
  CAIRN_RETURN_IF_ERROR(CheckWorkloadType(workload_type));
  CAIRN_ASSIGN_OR_RETURN(ordered_json document, YamlTextToJson(text, "configPolicies"));
  if (!document.is_object()) return Status::InvalidArgument("configPolicies: must be a map");
  CAIRN_RETURN_IF_ERROR(OnlyKeys(document, "", {"invariant_config", "constraints"}));
  events::ConfigPoliciesSet policies;
  policies.set_workspace_id(workspace_id);
  policies.set_workload_type(workload_type);
  if (document.contains("invariant_config") && !document.at("invariant_config").is_null()) {
    const ordered_json& invariant = document.at("invariant_config");
    if (!invariant.is_object()) {
      return Status::InvalidArgument("invariant_config: must be a map");
    }
    for (const char* own : {"template", "searcher"}) {
      if (invariant.contains(own)) {
        return Status::InvalidArgument(std::string("invariant_config.") + own +
                                       ": a policy cannot impose it");
      }
    }
    if (!invariant.empty()) policies.set_invariant_config_json(invariant.dump());
  }
  if (document.contains("constraints") && !document.at("constraints").is_null()) {
    const ordered_json& constraints = document.at("constraints");
    if (!constraints.is_object()) return Status::InvalidArgument("constraints: must be a map");
    CAIRN_RETURN_IF_ERROR(OnlyKeys(constraints, "constraints", {"priority_limit", "resources"}));
    CAIRN_ASSIGN_OR_RETURN(auto priority_limit,
                           PolicyInt(constraints, "priority_limit", "constraints.priority_limit",
                                     kMinPriority, kMaxPriority));
    if (priority_limit) policies.set_priority_limit(*priority_limit);
    if (constraints.contains("resources") && !constraints.at("resources").is_null()) {
      const ordered_json& resources = constraints.at("resources");
      if (!resources.is_object()) {
        return Status::InvalidArgument("constraints.resources: must be a map");
      }
      CAIRN_RETURN_IF_ERROR(OnlyKeys(resources, "constraints.resources", {"max_slots"}));
      CAIRN_ASSIGN_OR_RETURN(auto max_slots,
                             PolicyInt(resources, "max_slots", "constraints.resources.max_slots",
                                       0, kMaxSlotsPerTask));
      if (max_slots) policies.set_max_slots(*max_slots);
    }
  }
  ConfigPolicyRecord own;
  if (policies.has_priority_limit()) own.priority_limit = policies.priority_limit();
  if (policies.has_max_slots()) own.max_slots = policies.max_slots();
  CAIRN_RETURN_IF_ERROR(CheckAgainstConstraints(policies, own, "its own constraints"));
  return policies;
}

Status CheckAgainstConstraints(const events::ConfigPoliciesSet& policies,
                               const ConfigPolicyRecord& constraints, const std::string& scope) {
  CAIRN_ASSIGN_OR_RETURN(InvariantResources invariant,
                         InvariantResourcesOf(policies.invariant_config_json(),
                                              policies.workload_type()));
  const std::string prefix = "invalid " + policies.workload_type() +
                             " config policies: invariant_config conflicts with " + scope + ": ";
  if (invariant.priority && constraints.priority_limit &&
      *invariant.priority != *constraints.priority_limit) {
    return Status::InvalidArgument(prefix + "resources.priority " +
                                   std::to_string(*invariant.priority) + " against priority_limit " +
                                   std::to_string(*constraints.priority_limit));
  }
  if (invariant.max_slots && constraints.max_slots &&
      *invariant.max_slots != *constraints.max_slots) {
    return Status::InvalidArgument(prefix + "resources.max_slots " +
                                   std::to_string(*invariant.max_slots) + " against max_slots " +
                                   std::to_string(*constraints.max_slots));
  }
  if (invariant.slots && constraints.max_slots && *invariant.slots > *constraints.max_slots) {
    return Status::InvalidArgument(prefix + "resources." + SlotsKey(policies.workload_type()) +
                                   " " + std::to_string(*invariant.slots) +
                                   " is more than max_slots " +
                                   std::to_string(*constraints.max_slots));
  }
  return Status::Ok();
}

nlohmann::json ConfigPoliciesJson(const std::string& invariant_config_json,
                                  std::optional<int32_t> priority_limit,
                                  std::optional<int32_t> max_slots) {
  nlohmann::json document = nlohmann::json::object();
  if (!invariant_config_json.empty()) {
    document["invariant_config"] = nlohmann::json::parse(invariant_config_json, nullptr, false);
  }
  nlohmann::json constraints = nlohmann::json::object();
  if (priority_limit) constraints["priority_limit"] = *priority_limit;
  if (max_slots) constraints["resources"] = {{"max_slots", *max_slots}};
  if (!constraints.empty()) document["constraints"] = std::move(constraints);
  return document;
}

Result<ordered_json> WithInvariantConfigs(const TenancyState& tenancy, int32_t workspace_id,
                                          const std::string& workload_type, ordered_json config) {
  // The workspace's first, then the global ones over them: the global values win.
  for (int32_t scope : {workspace_id, kEveryWorkspace}) {
    const ConfigPolicyRecord* policies = tenancy.FindConfigPolicies(scope, workload_type);
    if (policies == nullptr || policies->invariant_config_json.empty()) continue;
    ordered_json invariant = ordered_json::parse(policies->invariant_config_json, nullptr, false);
    if (!invariant.is_object()) continue;
    auto merged = templates::MergeTemplate(config, invariant);
    if (!merged.ok()) {
      return Status::InvalidArgument(ScopeName(tenancy, scope, workload_type) + ": " +
                                     merged.status().message());
    }
    config = std::move(*merged);
    if (scope == kEveryWorkspace) break;
  }
  return config;
}

Status CheckConstraints(const TenancyState& tenancy, int32_t workspace_id,
                        const std::string& workload_type, const RequestedResources& requested) {
  const ConfigPolicyRecord* global = tenancy.FindConfigPolicies(kEveryWorkspace, workload_type);
  const ConfigPolicyRecord* own = workspace_id == kEveryWorkspace
                                      ? nullptr
                                      : tenancy.FindConfigPolicies(workspace_id, workload_type);
  // Each limit from the global policies where they set it, else from the workspace's.
  auto limit = [&](std::optional<int32_t> ConfigPolicyRecord::*field)
      -> std::pair<std::optional<int32_t>, std::string> {
    if (global != nullptr && global->*field) {
      return {global->*field, ScopeName(tenancy, kEveryWorkspace, workload_type)};
    }
    if (own != nullptr && own->*field) {
      return {own->*field, ScopeName(tenancy, workspace_id, workload_type)};
    }
    return {std::nullopt, ""};
  };
  auto [max_slots, slots_scope] = limit(&ConfigPolicyRecord::max_slots);
  if (max_slots) {
    for (auto [asked, field] : {std::pair{requested.slots, requested.slots_field},
                                std::pair{requested.max_slots, "resources.max_slots"}}) {
      if (asked && *asked > *max_slots) {
        return Status::InvalidArgument("requested " + std::string(field) + " [" +
                                       std::to_string(*asked) + "] exceeds limit set by admin [" +
                                       std::to_string(*max_slots) + "] in " + slots_scope +
                                       ": submitted workload failed a resource constraint");
      }
    }
  }
  auto [priority_limit, priority_scope] = limit(&ConfigPolicyRecord::priority_limit);
  // Smaller is higher: a priority more favourable than the limit is refused.
  if (priority_limit && requested.priority && *requested.priority < *priority_limit) {
    return Status::InvalidArgument("requested priority [" + std::to_string(*requested.priority) +
                                   "] exceeds limit set by admin [" +
                                   std::to_string(*priority_limit) + "] in " + priority_scope +
                                   ": submitted workload failed priority constraint");
  }
  return Status::Ok();
}

}  // namespace cairn::commands
