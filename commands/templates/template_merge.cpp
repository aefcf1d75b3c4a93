#include "commands/templates/template_merge.h"

#include <yaml-cpp/yaml.h>

#include <set>
#include <vector>

#include "base/yaml_json.h"

namespace cairn::templates {

namespace {

using nlohmann::ordered_json;

ordered_json MergeValue(const ordered_json& user, const ordered_json& base,
                        const std::string& path);

// Keys of both maps: the user's in their order, then the template's new ones.
ordered_json MergeMaps(const ordered_json& user, const ordered_json& base,
                       const std::string& path) {
  ordered_json out = ordered_json::object();
  for (const auto& [key, value] : user.items()) {
    const std::string child = path.empty() ? key : path + "." + key;
    out[key] = base.contains(key) ? MergeValue(value, base.at(key), child) : value;
  }
  for (const auto& [key, value] : base.items()) {
    if (!out.contains(key)) out[key] = value;
  }
  return out;
}

bool HasMember(const ordered_json& value, const char* discriminator) {
  return value.contains(discriminator) && !value.at(discriminator).is_null();
}

ordered_json MergeUnion(const ordered_json& user, const ordered_json& base,
                        const char* discriminator, const std::set<std::string>& common,
                        const std::string& path) {
  if (!HasMember(user, discriminator) || !HasMember(base, discriminator) ||
      user.at(discriminator) == base.at(discriminator)) {
    return MergeMaps(user, base, path);
  }
  // Different members: the template contributes only what every member shares.
  ordered_json out = user;
  for (const auto& [key, value] : base.items()) {
    if (common.count(key) && (!out.contains(key) || out.at(key).is_null())) out[key] = value;
  }
  return out;
}

bool IsNestedHyperparameter(const ordered_json& value) {
  return value.is_object() && !value.contains("type");
}

ordered_json MergeHyperparameters(const ordered_json& user, const ordered_json& base) {
  ordered_json out = ordered_json::object();
  for (const auto& [key, value] : user.items()) {
    if (base.contains(key) && IsNestedHyperparameter(value) &&
        IsNestedHyperparameter(base.at(key))) {
      out[key] = MergeHyperparameters(value, base.at(key));
    } else if (value.is_null() && base.contains(key)) {
      out[key] = base.at(key);
    } else {
      out[key] = value;
    }
  }
  for (const auto& [key, value] : base.items()) {
    if (!out.contains(key)) out[key] = value;
  }
  return out;
}

ordered_json PerDevice(const ordered_json& variables) {
  if (variables.is_object()) {
    // "gpu" is cuda's old name: merged as cuda, so that a side naming either meets the other.
    ordered_json out = ordered_json::object();
    for (const auto& [device, list] : variables.items())
      out[device == "gpu" ? "cuda" : device] = list;
    return out;
  }
  return {{"cpu", variables}, {"cuda", variables}, {"rocm", variables}};
}

ordered_json Concatenate(const ordered_json& first, const ordered_json& second) {
  ordered_json out = ordered_json::array();
  for (const auto* list : {&first, &second}) {
    if (!list->is_array()) continue;
    for (const auto& entry : *list) out.push_back(entry);
  }
  return out;
}

// Template entries first, so that the user's later entries override them when applied in order.
ordered_json MergeEnvironmentVariables(const ordered_json& user, const ordered_json& base) {
  const bool user_ok = user.is_array() || user.is_object();
  const bool base_ok = base.is_array() || base.is_object();
  if (!user_ok || !base_ok) return user;
  if (user.is_array() && base.is_array()) return Concatenate(base, user);
  const ordered_json user_map = PerDevice(user);
  const ordered_json base_map = PerDevice(base);
  ordered_json out = ordered_json::object();
  for (const auto* side : {&user_map, &base_map}) {
    for (const auto& [device, unused] : side->items()) {
      if (out.contains(device)) continue;
      const ordered_json none = ordered_json::array();
      const auto& from_base = base_map.contains(device) ? base_map.at(device) : none;
      const auto& from_user = user_map.contains(device) ? user_map.at(device) : none;
      // A device the user set to null keeps the template's entries.
      out[device] = Concatenate(from_base, from_user);
    }
  }
  return out;
}

// The user's entries, then the template's whose `key_of` is new (Determined's merge of
// bind_mounts by container_path and of log_policies by name).
template <class KeyOf>
ordered_json UnionBy(const ordered_json& user, const ordered_json& base, KeyOf key_of) {
  if (!user.is_array() || !base.is_array()) return user;
  ordered_json out = user;
  std::set<std::string> seen;
  for (const auto& entry : user) seen.insert(key_of(entry));
  for (const auto& entry : base) {
    if (seen.insert(key_of(entry)).second) out.push_back(entry);
  }
  return out;
}

std::string TextAt(const ordered_json& entry, const char* key) {
  if (!entry.is_object() || !entry.contains(key)) return "";
  const ordered_json& value = entry.at(key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("type")) return TextAt(value, "type");  // legacy action
  return value.dump();
}

std::string MountKey(const ordered_json& mount) { return TextAt(mount, "container_path"); }

// Named policies by name; unnamed (legacy) ones by action and pattern.
std::string PolicyKey(const ordered_json& policy) {
  const std::string name = TextAt(policy, "name");
  if (!name.empty()) return "name:" + name;
  return "unnamed:" + TextAt(policy, "action") + ":" + TextAt(policy, "pattern");
}

ordered_json MergeValue(const ordered_json& user, const ordered_json& base,
                        const std::string& path) {
  if (user.is_null()) return base;
  if (base.is_null()) return user;
  if (path == "environment.environment_variables") return MergeEnvironmentVariables(user, base);
  if (path == "bind_mounts") return UnionBy(user, base, MountKey);
  // Credentials are one unit: a user's password never goes to the template's registry.
  if (path == "environment.registry_auth") return user;
  if (path == "log_policies") return UnionBy(user, base, PolicyKey);
  if (!user.is_object() || !base.is_object()) return user;
  if (path == "checkpoint_storage") {
    return MergeUnion(user, base, "type",
                      {"save_experiment_best", "save_trial_best", "save_trial_latest"}, path);
  }
  if (path == "searcher") {
    return MergeUnion(user, base, "name",
                      {"metric", "smaller_is_better", "source_trial_id", "source_checkpoint_uuid"},
                      path);
  }
  if (path == "hyperparameters") return MergeHyperparameters(user, base);
  return MergeMaps(user, base, path);
}

// The line of a top-level key in a YAML text, for errors about it.
int TopLevelKeyLine(const std::string& yaml_text, const std::string& key) {
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    if (!root.IsMap()) return 1;
    for (const auto& entry : root) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) {
        return entry.first.Mark().is_null() ? 1 : entry.first.Mark().line + 1;
      }
    }
  } catch (const YAML::Exception&) {
  }
  return 1;
}

Result<ordered_json> LoadMap(const std::string& yaml_text, const std::string& what) {
  CAIRN_ASSIGN_OR_RETURN(ordered_json value, YamlTextToJson(yaml_text, what));
  if (!value.is_object()) {
    return Status::InvalidArgument(what + ": line 1: expected a map of experiment settings");
  }
  return value;
}

}  // namespace

Status CheckTemplate(const std::string& template_yaml) {
  CAIRN_ASSIGN_OR_RETURN(ordered_json value, LoadMap(template_yaml, "template"));
  if (value.contains("template")) {
    return Status::InvalidArgument("template: line " +
                                   std::to_string(TopLevelKeyLine(template_yaml, "template")) +
                                   ": template: a template cannot itself use a template");
  }
  return Status::Ok();
}

Result<std::optional<std::string>> TemplateNameOf(const std::string& config_yaml) {
  CAIRN_ASSIGN_OR_RETURN(ordered_json value, LoadMap(config_yaml, "config"));
  if (!value.contains("template") || value.at("template").is_null()) {
    return std::optional<std::string>();
  }
  if (!value.at("template").is_string() || value.at("template").get<std::string>().empty()) {
    return Status::InvalidArgument("line " +
                                   std::to_string(TopLevelKeyLine(config_yaml, "template")) +
                                   ": template: expected the name of a template");
  }
  return std::optional<std::string>(value.at("template").get<std::string>());
}

Result<ordered_json> MergeTemplate(const ordered_json& template_config,
                                   const ordered_json& config) {
  if (!template_config.is_null() && !template_config.is_object()) {
    return Status::InvalidArgument("template: expected a map of experiment settings");
  }
  if (!config.is_null() && !config.is_object()) {
    return Status::InvalidArgument("config: expected a map of experiment settings");
  }
  if (template_config.is_object() && template_config.contains("template")) {
    return Status::InvalidArgument("template: template: a template cannot itself use a template");
  }
  ordered_json user = config.is_null() ? ordered_json::object() : config;
  user.erase("template");
  return MergeValue(user, template_config.is_null() ? ordered_json::object() : template_config, "");
}

Result<std::string> ApplyTemplate(const std::string& template_yaml,
                                  const std::string& config_yaml) {
  CAIRN_RETURN_IF_ERROR(CheckTemplate(template_yaml));
  CAIRN_ASSIGN_OR_RETURN(ordered_json base, LoadMap(template_yaml, "template"));
  CAIRN_ASSIGN_OR_RETURN(ordered_json user, LoadMap(config_yaml, "config"));
  CAIRN_ASSIGN_OR_RETURN(ordered_json merged, MergeTemplate(base, user));
  return JsonToYamlText(merged);
}

}  // namespace cairn::templates
