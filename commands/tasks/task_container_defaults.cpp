#include "commands/tasks/task_container_defaults.h"

#include <set>

#include "commands/tasks/command_config.h"
#include "commands/templates/template_merge.h"

namespace cairn::commands {

namespace {

using nlohmann::ordered_json;

const ordered_json& At(const ordered_json& object, const char* key) {
  static const ordered_json kNull;
  if (!object.is_object()) return kNull;
  auto found = object.find(key);
  return found == object.end() ? kNull : *found;
}

}  // namespace

ordered_json AsExperimentDefaults(const std::string& defaults_json) {
  ordered_json out = ordered_json::object();
  if (defaults_json.empty()) return out;
  const ordered_json defaults = ordered_json::parse(defaults_json, nullptr, false);
  if (!defaults.is_object()) return out;
  for (const char* key : {"image", "environment_variables", "registry_auth", "force_pull_image"}) {
    if (!At(defaults, key).is_null()) out["environment"][key] = At(defaults, key);
  }
  if (!At(defaults, "bind_mounts").is_null()) out["bind_mounts"] = At(defaults, "bind_mounts");
  if (!At(defaults, "shm_size_bytes").is_null()) {
    out["resources"]["shm_size"] = At(defaults, "shm_size_bytes");
  }
  if (!At(defaults, "log_policies").is_null()) out["log_policies"] = At(defaults, "log_policies");
  return out;
}

std::string StartupHookIn(const events::ResourcePoolsConfigured& pools,
                          const std::string& pool_name) {
  auto hook_of = [](const std::string& defaults_json) {
    if (defaults_json.empty()) return std::string();
    const ordered_json defaults = ordered_json::parse(defaults_json, nullptr, false);
    const ordered_json& hook = At(defaults, "startup_hook");
    return hook.is_string() ? hook.get<std::string>() : std::string();
  };
  for (const auto& pool : pools.pools()) {
    if (pool.pool_name() != pool_name) continue;
    if (std::string own = hook_of(pool.task_container_defaults_json()); !own.empty()) return own;
  }
  return hook_of(pools.task_container_defaults_json());
}

ordered_json TaskContainerDefaultsIn(const events::ResourcePoolsConfigured& pools,
                                     const std::string& pool_name) {
  ordered_json cluster = AsExperimentDefaults(pools.task_container_defaults_json());
  for (const auto& pool : pools.pools()) {
    if (pool.pool_name() != pool_name || pool.task_container_defaults_json().empty()) continue;
    auto merged = templates::MergeTemplate(
        cluster, AsExperimentDefaults(pool.task_container_defaults_json()));
    // Both were checked when master.yaml was read; a failure here would mean neither applies.
    return merged.ok() ? *merged : cluster;
  }
  return cluster;
}

void ApplyTaskContainerDefaults(const ordered_json& defaults, int32_t slots,
                                events::TaskSpec& spec) {
  const ordered_json& environment = At(defaults, "environment");
  if (spec.image_cpu().empty() && spec.image_gpu().empty()) {
    SetTaskImage(nlohmann::json::parse(At(environment, "image").dump()), spec);
  }
  ordered_json variables = At(environment, "environment_variables");
  if (variables.is_object()) variables = At(variables, slots > 0 ? "cuda" : "cpu");
  if (variables.is_array() && !variables.empty()) {
    google::protobuf::RepeatedPtrField<std::string> own = spec.environment_variables();
    spec.clear_environment_variables();
    for (const auto& entry : variables) {
      if (entry.is_string()) spec.add_environment_variables(entry.get<std::string>());
    }
    for (const auto& entry : own) spec.add_environment_variables(entry);
  }
  const ordered_json& auth = At(environment, "registry_auth");
  if (spec.registry_auth().username().empty() && auth.is_object()) {
    auto* spec_auth = spec.mutable_registry_auth();
    spec_auth->set_username(auth.value("username", ""));
    spec_auth->set_password(auth.value("password", ""));
    spec_auth->set_server_address(auth.value("serveraddress", ""));
  }
  if (At(environment, "force_pull_image") == true) spec.set_force_pull_image(true);

  const ordered_json& shm = At(At(defaults, "resources"), "shm_size");
  if (spec.shm_size_bytes() == 0 && shm.is_number_integer()) {
    spec.set_shm_size_bytes(shm.get<int64_t>());
  }
  const ordered_json& mounts = At(defaults, "bind_mounts");
  if (!mounts.is_array()) return;
  std::set<std::string> targets;
  for (const auto& mount : spec.bind_mounts()) targets.insert(mount.container_path());
  for (const auto& mount : mounts) {
    const std::string target = mount.value("container_path", "");
    if (!targets.insert(target).second) continue;
    auto* added = spec.add_bind_mounts();
    added->set_host_path(mount.value("host_path", ""));
    added->set_container_path(target);
    added->set_read_only(mount.value("read_only", false));
  }
}

}  // namespace cairn::commands
