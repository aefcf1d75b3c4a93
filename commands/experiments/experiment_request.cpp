#include "commands/experiments/experiment_request.h"

#include <nlohmann/json.hpp>

#include "base/yaml_json.h"
#include "commands/policies/config_policies.h"
#include "commands/tasks/task_container_defaults.h"
#include "commands/templates/template_decider.h"
#include "commands/templates/template_merge.h"
#include "commands/tenancy/tenancy_decider.h"
#include "events/workspace_defaults.h"

namespace cairn::commands {

namespace {

// The model definition must hold a trial class's module, or every trial would fail the same way.
// A command is the user's to get right, as in Determined (it may run what the image has).
Status CheckEntrypointInContext(const experiments::ExperimentConfig& config,
                                const std::vector<std::string>& context_paths) {
  const std::string& entrypoint = config.entrypoint;
  if (!config.entrypoint_argv.empty() || !experiments::IsTrialClassEntrypoint(entrypoint)) {
    return Status::Ok();
  }
  const auto colon = entrypoint.find(':');
  std::string module = entrypoint.substr(0, colon);
  for (char& c : module) {
    if (c == '.') c = '/';
  }
  for (const auto& path : context_paths) {
    if (path == module + ".py" || path == module + "/__init__.py") return Status::Ok();
  }
  return Status::InvalidArgument("entrypoint: the model definition has no " + module + ".py for '" +
                                 entrypoint + "'");
}

// The configuration with checkpoint storage, in Determined's order: its own, else its
// workspace's, else master.yaml's, else shared_fs in the master's directory.
Result<experiments::ExperimentConfig> WithCheckpointStorage(
    experiments::ExperimentConfig config, const WorkspaceRecord* workspace,
    const CreateExperiment::Request& request) {
  if (!config.checkpoint_storage) {
    nlohmann::ordered_json effective = config.effective;
    if (workspace != nullptr && !workspace->checkpoint_storage_json.empty()) {
      effective["checkpoint_storage"] =
          nlohmann::ordered_json::parse(workspace->checkpoint_storage_json, nullptr, false);
    } else if (request.default_checkpoint_storage.is_object()) {
      effective["checkpoint_storage"] = request.default_checkpoint_storage;
    } else {
      effective["checkpoint_storage"] = {
          {"type", "shared_fs"},     {"host_path", request.default_checkpoint_dir},
          {"storage_path", nullptr}, {"save_experiment_best", 0},
          {"save_trial_best", 1},    {"save_trial_latest", 1}};
    }
    CAIRN_ASSIGN_OR_RETURN(config, experiments::ParseExperimentConfig(effective.dump()));
  }
  if (!config.checkpoint_storage->IsObjectStore() &&
      (config.checkpoint_storage->host_path.empty() ||
       config.checkpoint_storage->host_path[0] != '/')) {
    return Status::InvalidArgument("checkpoint_storage.host_path: must be an absolute path");
  }
  return config;
}

// The project a new experiment goes to: the request's, else the configuration's workspace and
// project by name (NotFound unless the user may see the workspace), else Uncategorized.
Result<int32_t> ExperimentProject(const DecisionState& state, int32_t requested,
                                  const experiments::ExperimentConfig& config,
                                  const CommandMeta& meta) {
  if (requested > 0) return requested;
  if (config.workspace.empty()) return kUncategorizedProject;
  const WorkspaceRecord* workspace = state.tenancy.FindWorkspace(config.workspace);
  const ProjectRecord* project =
      workspace != nullptr ? state.tenancy.FindProject(workspace->id, config.project) : nullptr;
  const UserRecord* user = ActingUser(state, meta);
  if (project == nullptr ||
      (user != nullptr && !state.tenancy.Allows(*user, Permission::kViewWorkspace,
                                                WorkspaceOrUncategorized(workspace->id)))) {
    return Status::NotFound("workspace/project '" + config.workspace + "/" + config.project +
                            "' not found");
  }
  return project->id;
}

}  // namespace

Result<events::ExperimentCreated> ConfigureExperiment(const DecisionState& state,
                                                      const CreateExperiment& command,
                                                      const CommandMeta& meta) {
  const CreateExperiment::Request& request = *command.request;
  std::string template_name = request.template_name;
  if (template_name.empty()) {
    CAIRN_ASSIGN_OR_RETURN(auto named, templates::TemplateNameOf(request.config_yaml));
    if (named) template_name = std::move(*named);
  }
  std::string merged = request.config_yaml;
  if (!template_name.empty()) {
    CAIRN_ASSIGN_OR_RETURN(merged,
                           ConfigWithTemplate(state, template_name, request.config_yaml, meta));
  }
  CAIRN_ASSIGN_OR_RETURN(auto parsed, experiments::ParseExperimentConfig(merged));
  // The project (so the workspace) is the user's to choose; its config policies then apply.
  CAIRN_ASSIGN_OR_RETURN(int32_t project_id,
                         ExperimentProject(state, request.project_id, parsed, meta));
  const ProjectRecord* project = state.tenancy.FindProject(project_id);
  const int32_t workspace_id = project ? project->workspace_id : kUncategorizedWorkspace;
  if (!state.tenancy.config_policies.empty()) {
    CAIRN_ASSIGN_OR_RETURN(nlohmann::ordered_json as_json, YamlTextToJson(merged, "config"));
    CAIRN_ASSIGN_OR_RETURN(as_json, WithInvariantConfigs(state.tenancy, workspace_id,
                                                         kExperimentWorkload, std::move(as_json)));
    merged = JsonToYamlText(as_json);
    CAIRN_ASSIGN_OR_RETURN(parsed, experiments::ParseExperimentConfig(merged));
    CAIRN_RETURN_IF_ERROR(
        CheckConstraints(state.tenancy, workspace_id, kExperimentWorkload,
                         {parsed.resources.slots_per_trial, parsed.resources.max_slots,
                          parsed.resources.priority, "resources.slots_per_trial"}));
  }
  // The pool's task_container_defaults fill what the configuration leaves unset, before
  // Determined's own defaults (log_policies') do. An unknown pool is reported by the decider.
  if (auto pool = ResolveWorkspacePool(state, workspace_id, parsed.resources.resource_pool, false);
      pool.ok()) {
    const nlohmann::ordered_json defaults = TaskContainerDefaultsIn(state.pools_config, *pool);
    if (!defaults.empty()) {
      CAIRN_ASSIGN_OR_RETURN(nlohmann::ordered_json as_json, YamlTextToJson(merged, "config"));
      CAIRN_ASSIGN_OR_RETURN(as_json, templates::MergeTemplate(defaults, as_json));
      merged = JsonToYamlText(as_json);
      CAIRN_ASSIGN_OR_RETURN(parsed, experiments::ParseExperimentConfig(merged));
    }
  }
  CAIRN_ASSIGN_OR_RETURN(
      auto config,
      WithCheckpointStorage(std::move(parsed), state.tenancy.FindWorkspace(workspace_id), request));
  if (!config.experiment_seed) experiments::SetExperimentSeed(config, request.seed_if_unset);
  if (request.context_paths.empty()) {
    return Status::InvalidArgument(
        "modelDefinition is required: the directory with the trial class");
  }
  CAIRN_RETURN_IF_ERROR(CheckEntrypointInContext(config, request.context_paths));

  events::ExperimentCreated created = command.created;
  created.set_name(config.name);
  created.set_original_config(request.config_yaml);
  created.set_config_json(config.effective.dump());
  created.set_seed(*config.experiment_seed);
  created.set_template_name(template_name);
  created.set_project_id(project_id);
  auto* resources = created.mutable_resources();
  resources->set_resource_pool(config.resources.resource_pool);
  resources->set_priority(config.resources.priority.value_or(0));
  resources->set_weight(config.resources.weight);
  resources->set_max_slots(config.resources.max_slots.value_or(0));
  return created;
}

Result<experiments::ExperimentConfig> ContinuedConfig(const ExperimentRecord& experiment,
                                                      const std::string& override_yaml) {
  if (experiment.config == nullptr) {
    return Status::FailedPrecondition(
        "experiment " + std::to_string(experiment.experiment_id) +
        "'s configuration cannot be read: " + experiment.config_error);
  }
  CAIRN_ASSIGN_OR_RETURN(std::string merged,
                         templates::ApplyTemplate(JsonToYamlText(experiment.config->effective),
                                                  override_yaml.empty() ? "{}" : override_yaml));
  return experiments::ParseExperimentConfig(merged);
}

}  // namespace cairn::commands
