#include "commands/agents/pools_config.h"

#include <cmath>
#include <set>
#include <utility>

#include "base/config_fields.h"
#include "base/fields.h"
#include "commands/experiments/experiment_config.h"
#include "commands/experiments/log_policies.h"
#include "commands/scheduler/scheduler.h"
#include "commands/tasks/command_config.h"
#include "events/limits.h"
#include "events/pool_defaults.h"

namespace cairn::commands {

using namespace config_fields;

namespace {

events::SchedulerConfig DefaultScheduler() {
  events::SchedulerConfig scheduler;
  scheduler.set_type(events::SCHEDULER_TYPE_FAIR_SHARE);
  scheduler.set_fitting_policy(events::FITTING_POLICY_BEST);
  scheduler.set_preemption(false);
  scheduler.set_default_priority(kDefaultPriority);
  return scheduler;
}

// One `scheduler:` block at `path`. Fields it leaves unset take the scheduler defaults, never
// values from another block: that is what makes a pool's override all or nothing.
Result<events::SchedulerConfig> ParseScheduler(const std::string& source, const YAML::Node& node,
                                               const std::string& path) {
  events::SchedulerConfig scheduler = DefaultScheduler();
  if (!IsSet(node)) return scheduler;
  if (!node.IsMap()) return Status::InvalidArgument(Where(source, node, path) + ": expected a map");
  CAIRN_RETURN_IF_ERROR(CheckKeys(
      source, node, path + ".", {"type", "fitting_policy", "preemption", "default_priority"},
      {{"allow_heterogeneous_fits", "heterogeneous fits are not supported"}}));

  const std::string type_field = path + ".type";
  CAIRN_ASSIGN_OR_RETURN(std::string type, OptionalString(source, node["type"], type_field,
                                                          "fair_share, priority or round_robin"));
  if (type.empty() || type == "fair_share") {
    scheduler.set_type(events::SCHEDULER_TYPE_FAIR_SHARE);
  } else if (type == "priority") {
    scheduler.set_type(events::SCHEDULER_TYPE_PRIORITY);
  } else if (type == "round_robin") {
    scheduler.set_type(events::SCHEDULER_TYPE_ROUND_ROBIN);
  } else {
    return Status::InvalidArgument(Where(source, node["type"], type_field) +
                                   ": must be fair_share, priority or round_robin, got '" + type +
                                   "'");
  }

  const std::string fitting_field = path + ".fitting_policy";
  CAIRN_ASSIGN_OR_RETURN(std::string fitting, OptionalString(source, node["fitting_policy"],
                                                             fitting_field, "best or worst"));
  if (fitting.empty() || fitting == "best") {
    scheduler.set_fitting_policy(events::FITTING_POLICY_BEST);
  } else if (fitting == "worst") {
    scheduler.set_fitting_policy(events::FITTING_POLICY_WORST);
  } else {
    return Status::InvalidArgument(Where(source, node["fitting_policy"], fitting_field) +
                                   ": must be best or worst, got '" + fitting + "'");
  }

  if (const YAML::Node preemption = node["preemption"]; IsSet(preemption)) {
    const std::string field = path + ".preemption";
    CAIRN_ASSIGN_OR_RETURN(bool enabled, Scalar<bool>(source, preemption, field, "true or false"));
    if (enabled && scheduler.type() != events::SCHEDULER_TYPE_PRIORITY) {
      return Status::InvalidArgument(Where(source, preemption, field) +
                                     ": only the priority scheduler preempts, and " + type_field +
                                     " is " + commands::SchedulerTypeName(scheduler.type()));
    }
    scheduler.set_preemption(enabled);
  }

  if (const YAML::Node priority = node["default_priority"]; IsSet(priority)) {
    const std::string field = path + ".default_priority";
    CAIRN_ASSIGN_OR_RETURN(int value, Scalar<int>(source, priority, field, "an integer"));
    if (value < kMinPriority || value > kMaxPriority) {
      return Status::InvalidArgument(
          Where(source, priority, field) + ": must be between " + std::to_string(kMinPriority) +
          " and " + std::to_string(kMaxPriority) + ", got " + std::to_string(value));
    }
    scheduler.set_default_priority(value);
  }
  return scheduler;
}

// `key` under `map`, or its deprecated `alias` when `key` is not set; never both, so that two
// different values cannot silently disagree. `*field` becomes the name actually used.
Result<YAML::Node> FieldOrAlias(const std::string& source, const YAML::Node& map,
                                const std::string& prefix, const std::string& key,
                                const std::string& alias, std::string* field) {
  const YAML::Node current = map[key];
  const YAML::Node deprecated = map[alias];
  if (IsSet(current) && IsSet(deprecated)) {
    return Status::InvalidArgument(Where(source, KeyNode(map, alias), prefix + alias) +
                                   ": deprecated name of " + prefix + key +
                                   "; set only one of them");
  }
  *field = prefix + (IsSet(deprecated) ? alias : key);
  return IsSet(deprecated) ? deprecated : current;
}

// A default pool as configured, with where it was said (or where it would have been said) so
// that an unknown pool can be reported at a line.
struct DefaultPoolChoice {
  std::string name = kDefaultPool;
  std::string field;
  YAML::Node node;
  bool explicitly_set = false;
};

Status ParseDefaultPool(const std::string& source, const YAML::Node& resource_manager,
                        const std::string& key, const std::string& alias,
                        DefaultPoolChoice* choice) {
  std::string field;
  CAIRN_ASSIGN_OR_RETURN(YAML::Node node, FieldOrAlias(source, resource_manager,
                                                       "resource_manager.", key, alias, &field));
  if (!IsSet(node)) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(choice->name, Scalar<std::string>(source, node, field, "a pool name"));
  if (choice->name.empty()) {
    return Status::InvalidArgument(Where(source, node, field) + ": must name a resource pool");
  }
  choice->field = field;
  choice->node = node;
  choice->explicitly_set = true;
  return Status::Ok();
}

// One `task_container_defaults:` block at `path`, in Determined's keys: the fields Cairn applies
// are checked and kept as JSON (commands/tasks/task_container_defaults.h), preemption_timeout
// apart; the rest are refused by name.
struct ContainerDefaults {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  double preemption_grace_seconds = 0;  // 0 = not given
};

Result<ContainerDefaults> ParseTaskContainerDefaults(const std::string& source,
                                                     const YAML::Node& node,
                                                     const std::string& path) {
  ContainerDefaults out;
  if (!IsSet(node)) return out;
  using fields::Field;
  const Field top{node, path, node.Mark().is_null() ? 1 : node.Mark().line + 1, source};
  CAIRN_ASSIGN_OR_RETURN(fields::MapFields map, fields::MapFields::Read(top, "a map"));
  const char* kKubernetes = "Cairn has no Kubernetes resource manager yet; pod specs do not apply";
  const char* kNetwork = "Cairn's containers share the host's network";
  const char* kLater = "not supported by Cairn yet";
  CAIRN_RETURN_IF_ERROR(map.Check(
      {"preemption_timeout", "image", "environment_variables", "bind_mounts", "registry_auth",
       "force_pull_image", "shm_size_bytes", "log_policies", "startup_hook"},
      {{"cpu_pod_spec", kKubernetes},
       {"gpu_pod_spec", kKubernetes},
       {"checkpoint_gc_pod_spec", kKubernetes},
       {"kubernetes", kKubernetes},
       {"network_mode", kNetwork},
       {"dtrain_network_interface", kNetwork},
       {"nccl_port_range", kNetwork},
       {"gloo_port_range", kNetwork},
       {"add_capabilities", kNetwork},
       {"drop_capabilities", kNetwork},
       {"devices", "a container gets its slots' GPUs and nothing else"},
       {"work_dir", kLater},
       {"slurm", kLater},
       {"pbs", kLater}}));
  if (auto field = map.Get("preemption_timeout")) {
    CAIRN_ASSIGN_OR_RETURN(double seconds, fields::ReadNumber(*field));
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > kMaxPreemptionGraceSeconds) {
      return fields::Invalid(*field, "must be more than 0 and at most 86400 seconds");
    }
    out.preemption_grace_seconds = seconds;
  }
  events::TaskSpec read;
  nlohmann::json shown;
  if (auto field = map.Get("image")) {
    CAIRN_RETURN_IF_ERROR(ReadTaskImage(*field, read, shown));
    out.config["image"] = nlohmann::ordered_json::parse(shown.dump());
  }
  if (auto field = map.Get("environment_variables")) {
    // Checked as an experiment's are; kept as written (gpu named cuda), so that the cluster's and
    // a pool's lists merge into one list.
    CAIRN_RETURN_IF_ERROR(experiments::ReadEnvironmentVariables(*field).status());
    CAIRN_ASSIGN_OR_RETURN(nlohmann::json variables, fields::JsonOf(*field));
    if (variables.is_object() && variables.contains("gpu")) {
      variables["cuda"] = std::move(variables["gpu"]);
      variables.erase("gpu");
    }
    out.config["environment_variables"] = nlohmann::ordered_json::parse(variables.dump());
  }
  if (auto field = map.Get("bind_mounts")) {
    CAIRN_RETURN_IF_ERROR(ReadBindMounts(*field, read, shown));
    out.config["bind_mounts"] = nlohmann::ordered_json::parse(shown.dump());
  }
  if (auto field = map.Get("registry_auth")) {
    CAIRN_RETURN_IF_ERROR(ReadRegistryAuth(*field, read, shown));
    out.config["registry_auth"] = nlohmann::ordered_json::parse(
        RegistryAuthJson(read.registry_auth(), /*with_password=*/true).dump());
  }
  if (auto field = map.Get("force_pull_image")) {
    CAIRN_ASSIGN_OR_RETURN(bool force, fields::ReadBool(*field));
    out.config["force_pull_image"] = force;
  }
  if (auto field = map.Get("shm_size_bytes")) {
    CAIRN_ASSIGN_OR_RETURN(out.config["shm_size_bytes"], ReadShmSize(*field));
  }
  if (auto field = map.Get("startup_hook")) {
    CAIRN_ASSIGN_OR_RETURN(std::string hook, fields::ReadString(*field, "an inline script"));
    if (hook.size() > kMaxStartupHookBytes || hook.find('\0') != std::string::npos) {
      return fields::Invalid(*field, "must be a script of at most 64 KiB");
    }
    if (!hook.empty()) out.config["startup_hook"] = hook;
  }
  if (auto field = map.Get("log_policies")) {
    CAIRN_ASSIGN_OR_RETURN(auto policies, experiments::ReadLogPolicies(*field));
    out.config["log_policies"] =
        nlohmann::ordered_json::parse(experiments::LogPoliciesJson(policies).dump());
  }
  return out;
}

std::string DefaultsJsonText(const ContainerDefaults& defaults) {
  return defaults.config.empty() ? std::string() : defaults.config.dump();
}

events::ResourcePoolConfig PoolNamedDefault(const events::SchedulerConfig& scheduler) {
  events::ResourcePoolConfig pool;
  pool.set_pool_name(kDefaultPool);
  *pool.mutable_scheduler() = scheduler;
  pool.set_scheduler_from_pool(false);
  pool.set_max_aux_containers_per_agent(kMaxZeroSlotContainersPerAgent);
  return pool;
}

// One entry of `resource_pools`, at `path`, given the cluster-wide scheduler it may inherit.
Result<events::ResourcePoolConfig> ParsePool(const std::string& source, const YAML::Node& node,
                                             const std::string& path,
                                             const events::SchedulerConfig& cluster_scheduler) {
  if (!node.IsMap()) {
    return Status::InvalidArgument(Where(source, node, path) +
                                   ": expected a map with at least pool_name");
  }
  CAIRN_RETURN_IF_ERROR(CheckKeys(
      source, node, path + ".",
      {"pool_name", "description", "scheduler", "max_aux_containers_per_agent",
       "max_cpu_containers_per_agent", "task_container_defaults"},
      {{"provider",
        "dynamic agents (provider) are not supported; start agents by hand with --pool NAME"}}));
  events::ResourcePoolConfig pool;

  const std::string name_field = path + ".pool_name";
  if (!IsSet(node["pool_name"])) {
    return Status::InvalidArgument(Where(source, node, name_field) + ": required");
  }
  CAIRN_ASSIGN_OR_RETURN(std::string name,
                         Scalar<std::string>(source, node["pool_name"], name_field, "a pool name"));
  if (!IsSafeId(name)) {
    return Status::InvalidArgument(Where(source, node["pool_name"], name_field) + ": must be " +
                                   SafeIdRuleText() + ", got '" + name + "'");
  }
  pool.set_pool_name(name);

  CAIRN_ASSIGN_OR_RETURN(std::string description, OptionalString(source, node["description"],
                                                                 path + ".description", "text"));
  pool.set_description(description);

  // A blank `scheduler:` (no value, or {}) sets nothing, so the pool inherits; any field set
  // makes the pool's block the whole scheduler.
  const YAML::Node scheduler = node["scheduler"];
  if (IsSet(scheduler) && !(scheduler.IsMap() && scheduler.size() == 0)) {
    CAIRN_ASSIGN_OR_RETURN(*pool.mutable_scheduler(),
                           ParseScheduler(source, scheduler, path + ".scheduler"));
    pool.set_scheduler_from_pool(true);
  } else {
    *pool.mutable_scheduler() = cluster_scheduler;
    pool.set_scheduler_from_pool(false);
  }

  pool.set_max_aux_containers_per_agent(kMaxZeroSlotContainersPerAgent);
  std::string aux_field;
  CAIRN_ASSIGN_OR_RETURN(YAML::Node aux,
                         FieldOrAlias(source, node, path + ".", "max_aux_containers_per_agent",
                                      "max_cpu_containers_per_agent", &aux_field));
  if (IsSet(aux)) {
    CAIRN_ASSIGN_OR_RETURN(int containers,
                           Scalar<int>(source, aux, aux_field, "a number of containers"));
    if (containers < 0) {
      return Status::InvalidArgument(Where(source, aux, aux_field) + ": must be 0 or more, got " +
                                     std::to_string(containers));
    }
    pool.set_max_aux_containers_per_agent(containers);
  }
  CAIRN_ASSIGN_OR_RETURN(ContainerDefaults defaults,
                         ParseTaskContainerDefaults(source, node["task_container_defaults"],
                                                    path + ".task_container_defaults"));
  pool.set_task_container_defaults_json(DefaultsJsonText(defaults));
  pool.set_preemption_grace_seconds(defaults.preemption_grace_seconds);
  return pool;
}

// The pools of a document that uses the current format (or says nothing about pools).
Status ParseCurrentPools(const std::string& source, const YAML::Node& root,
                         events::ResourcePoolsConfigured* pools) {
  const YAML::Node resource_manager = root["resource_manager"];
  events::SchedulerConfig cluster_scheduler = DefaultScheduler();
  DefaultPoolChoice compute;
  compute.field = "resource_manager.default_compute_resource_pool";
  DefaultPoolChoice aux;
  aux.field = "resource_manager.default_aux_resource_pool";
  if (IsSet(resource_manager)) {
    if (!resource_manager.IsMap()) {
      return Status::InvalidArgument(Where(source, resource_manager, "resource_manager") +
                                     ": expected a map");
    }
    CAIRN_RETURN_IF_ERROR(CheckKeys(
        source, resource_manager, "resource_manager.",
        {"type", "scheduler", "default_compute_resource_pool", "default_aux_resource_pool",
         "default_gpu_resource_pool", "default_cpu_resource_pool"}));
    CAIRN_ASSIGN_OR_RETURN(std::string type, OptionalString(source, resource_manager["type"],
                                                            "resource_manager.type", "agent"));
    if (!type.empty() && type != "agent") {
      return Status::NotSupported(Where(source, resource_manager["type"], "resource_manager.type") +
                                  ": only the agent resource manager is supported, got '" + type +
                                  "'");
    }
    CAIRN_ASSIGN_OR_RETURN(cluster_scheduler, ParseScheduler(source, resource_manager["scheduler"],
                                                             "resource_manager.scheduler"));
    CAIRN_RETURN_IF_ERROR(ParseDefaultPool(source, resource_manager,
                                           "default_compute_resource_pool",
                                           "default_gpu_resource_pool", &compute));
    CAIRN_RETURN_IF_ERROR(ParseDefaultPool(source, resource_manager, "default_aux_resource_pool",
                                           "default_cpu_resource_pool", &aux));
  }

  const YAML::Node list = root["resource_pools"];
  if (!IsSet(list)) {
    *pools->add_pools() = PoolNamedDefault(cluster_scheduler);
  } else {
    if (!list.IsSequence()) {
      return Status::InvalidArgument(Where(source, list, "resource_pools") +
                                     ": expected a list of pools");
    }
    if (list.size() == 0) {
      return Status::InvalidArgument(Where(source, list, "resource_pools") +
                                     ": must list at least one pool");
    }
    std::map<std::string, size_t> index_by_name;
    size_t index = 0;
    for (const YAML::Node& entry : list) {
      const std::string path = "resource_pools[" + std::to_string(index) + "]";
      CAIRN_ASSIGN_OR_RETURN(events::ResourcePoolConfig pool,
                             ParsePool(source, entry, path, cluster_scheduler));
      auto [first, inserted] = index_by_name.emplace(pool.pool_name(), index);
      if (!inserted) {
        return Status::InvalidArgument(
            Where(source, entry["pool_name"], path + ".pool_name") + ": duplicate pool name '" +
            pool.pool_name() + "' (also resource_pools[" + std::to_string(first->second) + "])");
      }
      *pools->add_pools() = std::move(pool);
      ++index;
    }
  }

  for (DefaultPoolChoice* choice : {&compute, &aux}) {
    bool configured = false;
    for (const auto& pool : pools->pools()) configured |= pool.pool_name() == choice->name;
    if (configured) continue;
    if (choice->explicitly_set) {
      return Status::InvalidArgument(Where(source, choice->node, choice->field) +
                                     ": no resource pool named '" + choice->name +
                                     "' (configured: " + PoolNamesOf(*pools) + ")");
    }
    // Not written, so the error points at the section that should have said it.
    const YAML::Node section = IsSet(resource_manager) ? KeyNode(root, "resource_manager")
                                                       : KeyNode(root, "resource_pools");
    return Status::InvalidArgument(Where(source, section, choice->field) +
                                   ": not set, so it is 'default', but no resource pool is named "
                                   "'default' (configured: " +
                                   PoolNamesOf(*pools) + ")");
  }
  pools->set_default_compute_pool(compute.name);
  pools->set_default_aux_pool(aux.name);
  return Status::Ok();
}

}  // namespace

// The pools of a whole document: the legacy format (top-level `scheduler`, one pool "default")
// or the current one, plus the preemption grace period.
Result<events::ResourcePoolsConfigured> ParsePools(const std::string& source,
                                                   const YAML::Node& root) {
  events::ResourcePoolsConfigured pools;
  pools.set_source(source);
  CAIRN_ASSIGN_OR_RETURN(ContainerDefaults defaults,
                         ParseTaskContainerDefaults(source, root["task_container_defaults"],
                                                    "task_container_defaults"));
  pools.set_preemption_grace_seconds(defaults.preemption_grace_seconds > 0
                                         ? defaults.preemption_grace_seconds
                                         : kDefaultPreemptionGraceSeconds);
  pools.set_task_container_defaults_json(DefaultsJsonText(defaults));

  const char* legacy_key = root["scheduler"]     ? "scheduler"
                           : root["provisioner"] ? "provisioner"
                                                 : nullptr;
  const char* current_key = root["resource_manager"] ? "resource_manager"
                            : root["resource_pools"] ? "resource_pools"
                                                     : nullptr;
  if (legacy_key && current_key) {
    return Status::InvalidArgument(
        Where(source, KeyNode(root, legacy_key), legacy_key) +
        ": the legacy format (top-level scheduler/provisioner) cannot be mixed with " +
        current_key + "; move it to resource_manager.scheduler or resource_pools");
  }
  if (root["provisioner"]) {
    return Status::NotSupported(
        Where(source, KeyNode(root, "provisioner"), "provisioner") +
        ": dynamic agents (provisioner) are not supported; start agents by hand with --pool NAME");
  }
  if (legacy_key) {
    CAIRN_ASSIGN_OR_RETURN(events::SchedulerConfig scheduler,
                           ParseScheduler(source, root["scheduler"], "scheduler"));
    *pools.add_pools() = PoolNamedDefault(scheduler);
    pools.set_default_compute_pool(kDefaultPool);
    pools.set_default_aux_pool(kDefaultPool);
    return pools;
  }
  CAIRN_RETURN_IF_ERROR(ParseCurrentPools(source, root, &pools));
  return pools;
}

}  // namespace cairn::commands
