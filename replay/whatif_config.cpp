#include "replay/whatif_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "base/fields.h"
#include "base/yaml_json.h"
#include "commands/agents/pools_config.h"
#include "events/limits.h"

namespace cairn::replay {

namespace {

Result<WhatIfJobRule> ParseJobRule(const fields::Field& entry) {
  CAIRN_ASSIGN_OR_RETURN(fields::MapFields rule, fields::MapFields::Read(entry, "a map"));
  CAIRN_RETURN_IF_ERROR(rule.Check({"user", "workspace", "priority", "weight"}));
  WhatIfJobRule parsed;
  if (auto user = rule.Get("user")) {
    CAIRN_ASSIGN_OR_RETURN(parsed.user, fields::ReadString(*user, "a user name"));
  }
  if (auto workspace = rule.Get("workspace")) {
    CAIRN_ASSIGN_OR_RETURN(parsed.workspace, fields::ReadString(*workspace, "a workspace name"));
  }
  if (auto priority = rule.Get("priority")) {
    CAIRN_ASSIGN_OR_RETURN(
        parsed.priority, fields::ReadSmallInt(*priority, kMinPriority, kMaxPriority, "a priority"));
  }
  if (auto weight = rule.Get("weight")) {
    CAIRN_ASSIGN_OR_RETURN(double value, fields::ReadNumber(*weight, "a weight"));
    if (!std::isfinite(value) || value <= 0) {
      return fields::Invalid(*weight, "must be a positive number");
    }
    parsed.weight = value;
  }
  if (!parsed.priority && !parsed.weight) {
    return fields::Invalid(entry, "sets neither priority nor weight");
  }
  return parsed;
}

Status ParseWhatIfSection(const fields::Field& section, WhatIfConfig& config) {
  CAIRN_ASSIGN_OR_RETURN(fields::MapFields whatif, fields::MapFields::Read(section, "a map"));
  CAIRN_RETURN_IF_ERROR(whatif.Check({"jobs"}));
  auto jobs = whatif.Get("jobs");
  if (!jobs) return Status::Ok();
  if (!jobs->node.IsSequence()) return fields::Invalid(*jobs, "expected a list of job rules");
  size_t index = 0;
  for (const YAML::Node& element : jobs->node) {
    CAIRN_ASSIGN_OR_RETURN(WhatIfJobRule rule,
                           ParseJobRule(fields::Element(*jobs, element, index++)));
    config.job_rules.push_back(std::move(rule));
  }
  return Status::Ok();
}

Result<WhatIfConfig> ParseUnguarded(const std::string& yaml_text, const std::string& source) {
  CAIRN_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml_text, source));
  if (root.IsNull()) {
    return Status::InvalidArgument(source +
                                   ": empty; give a master.yaml with resource_pools (or "
                                   "resource_manager.scheduler) to simulate");
  }
  if (!root.IsMap()) return Status::InvalidArgument(source + ": expected a map at the top");
  WhatIfConfig config;
  config.source = source;
  CAIRN_ASSIGN_OR_RETURN(config.pools, commands::ParsePools(source, root));
  CAIRN_ASSIGN_OR_RETURN(fields::MapFields top,
                         fields::MapFields::Read(fields::Root(root, source), "a map"));
  if (auto section = top.Get("whatif")) CAIRN_RETURN_IF_ERROR(ParseWhatIfSection(*section, config));
  return config;
}

}  // namespace

Result<WhatIfConfig> ParseWhatIfConfig(const std::string& yaml_text, const std::string& source) {
  // yaml-cpp reports odd documents (aliases, tags, non-scalar keys) by throwing.
  try {
    return ParseUnguarded(yaml_text, source);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace cairn::replay
