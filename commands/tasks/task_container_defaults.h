// master.yaml's task_container_defaults as they apply to work: the cluster's
// (ResourcePoolsConfigured) with a resource pool's own over them, filling in what a command's or an
// experiment's own configuration leaves unset. Both are recorded as JSON in Determined's keys
// (image, environment_variables, bind_mounts, registry_auth, force_pull_image, shm_size_bytes,
// log_policies), checked when master.yaml is read (commands/agents/pools_config.h). Merged in
// Determined's order: the task's own, then the pool's, then the cluster's; lists as templates
// merge them (commands/templates/template_merge.h). Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "events.pb.h"

namespace cairn::commands {

// The defaults in `defaults_json` (Determined's task_container_defaults keys) as an experiment
// configuration: environment.{image, environment_variables, registry_auth, force_pull_image},
// bind_mounts, resources.shm_size and log_policies. An empty object for "".
nlohmann::ordered_json AsExperimentDefaults(const std::string& defaults_json);

// The defaults in force in `pool_name`, as an experiment configuration to merge under a user's
// (templates::MergeTemplate): the pool's own over the cluster's. An empty object when none.
nlohmann::ordered_json TaskContainerDefaultsIn(const events::ResourcePoolsConfigured& pools,
                                               const std::string& pool_name);

// The startup_hook in force in `pool_name` (the pool's, else the cluster's; "" = none). It is
// not an experiment's key: every task's run takes it when submitted, trials' runs too.
std::string StartupHookIn(const events::ResourcePoolsConfigured& pools,
                          const std::string& pool_name);

// For a command, notebook, shell or TensorBoard: what `spec` leaves unset comes from `defaults`
// (TaskContainerDefaultsIn's form): the image, registry_auth and shm size; its environment
// variables follow the defaults' (the cuda variant when `slots` > 0, else cpu), so the task's
// win; the defaults' bind mounts follow its own where they mount elsewhere; force_pull_image is
// set if either sets it.
void ApplyTaskContainerDefaults(const nlohmann::ordered_json& defaults, int32_t slots,
                                events::TaskSpec& spec);

}  // namespace cairn::commands
