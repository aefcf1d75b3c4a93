#include "api/handlers/experiments.h"

#include <charconv>
#include <random>
#include <set>

#include "api/handlers/checkpoints.h"
#include "api/handlers/experiment_common.h"
#include "api/handlers/job_queue.h"
#include "api/render/experiment_json.h"
#include "api/rest_util.h"
#include "base/encoding.h"
#include "base/tar_gz.h"
#include "base/yaml_json.h"
#include "events/context_store.h"

namespace cairn::api {

using nlohmann::json;

namespace {

net::Response Action(Call& call, commands::ExperimentAction::Kind kind) {
  auto id = ParseId(call.Param("id"), "experiment");
  if (!id.ok()) return Error(id.status());
  auto outcome = call.ExecuteAndShow(commands::ExperimentAction{*id, kind});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

// The name, description, notes and labels a PATCH changes. Determined's CLI sends all four as
// they are with one of them changed, so only the ones that differ from `shown` (the experiment
// as rendered) become the command's.
Result<commands::UpdateExperiment> ExperimentEdit(const json& body, const json& shown,
                                                  int64_t experiment_id) {
  commands::UpdateExperiment edit;
  edit.experiment_id = experiment_id;
  for (auto [key, field] :
       {std::pair{"name", &edit.name}, std::pair{"description", &edit.description},
        std::pair{"notes", &edit.notes}}) {
    CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> value, OptionalString(body, key));
    if (value && *value != shown.value(key, std::string())) *field = std::move(value);
  }
  CAIRN_ASSIGN_OR_RETURN(auto labels, OptionalLabels(body));
  if (labels && json(*labels) != shown.value("labels", json::array())) {
    edit.labels = std::move(labels);
  }
  return edit;
}

// The config a new experiment was stored with, as its submitter sees it: the storage it inherited
// from its workspace or master.yaml keeps its credentials to itself (events/redaction.h).
json ShownConfig(const std::string& config_json) {
  json config = json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  RedactConfig(config, Audience::kOwner);
  return config;
}

}  // namespace

net::Response CreateExperiment(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known =
          CheckKnownKeys(*body, "",
                         {"config", "modelDefinition", "activate", "parentId", "projectId",
                          "template", "validateOnly", "workspaceId", "packages"},
                         {"unmanaged", "parentId"});
      !known.ok()) {
    return Error(known);
  }
  if (Present(*body, "parentId")) {
    return Error(Status::NotSupported("parentId: forking an experiment is not supported yet"));
  }
  std::string config_text;
  if (Present(*body, "config") && body->at("config").is_object()) {
    config_text = JsonToYamlText(body->at("config"));
  } else {
    auto text = GetString(*body, "config", "config", true);
    if (!text.ok()) return Error(text.status());
    config_text = *text;
  }
  auto template_name = GetString(*body, "template", "template", false);
  if (!template_name.ok()) return Error(template_name.status());
  // None is the write side's to refuse, after the configuration's own errors.
  Result<std::vector<ContextFile>> files = std::vector<ContextFile>{};
  if (Present(*body, "modelDefinition")) files = DecodeModelDefinition(body->at("modelDefinition"));
  if (!files.ok()) return Error(files.status());
  // Cairn's extension: PEDL's local packages, in the same shape as the model definition's files.
  if (Present(*body, "packages")) {
    auto packages = DecodeModelDefinition(body->at("packages"), "packages");
    if (!packages.ok()) return Error(packages.status());
    files = AddPackages(std::move(*files), std::move(*packages));
    if (!files.ok()) return Error(files.status());
  }
  for (const char* flag : {"activate", "validateOnly"}) {
    if (Present(*body, flag) && !body->at(flag).is_boolean()) {
      return Error(Status::InvalidArgument(std::string(flag) + " must be true or false"));
    }
  }
  auto project_id = GetInt32(*body, "projectId", "projectId");
  if (!project_id.ok()) return Error(project_id.status());
  const bool validate_only = Present(*body, "validateOnly") && body->at("validateOnly").get<bool>();

  commands::CreateExperiment command;
  auto& request = command.request.emplace();
  request.config_yaml = std::move(config_text);
  request.template_name = std::move(*template_name);
  request.project_id = std::max(0, project_id->value_or(0));
  for (const auto& file : *files) request.context_paths.push_back(file.path);
  request.default_checkpoint_dir = call.services().facts.default_checkpoint_dir;
  request.default_checkpoint_storage = call.services().facts.default_checkpoint_storage;
  request.seed_if_unset = std::random_device()();
  auto& created = command.created;
  if (!files->empty()) {
    auto context = validate_only ? DescribeContext(*files) : call.services().contexts->Put(*files);
    if (!context.ok()) return Error(context.status());
    created.set_context_digest(context->digest);
    created.set_context_bytes(context->total_bytes);
  }
  created.set_owner(call.user().username);
  created.set_activate(Present(*body, "activate") && body->at("activate").get<bool>());
  if (validate_only) {
    auto decision = call.Preview(command);
    if (!decision.ok()) return Error(decision.status());
    // Determined answers with an empty experiment, every field at its zero value, which its CLI
    // (`det experiment create --test`) parses before it reports success.
    return Ok({{"experiment", ExperimentJson(views::ExperimentView{}, 0, Audience::kOwner)},
               {"config", ShownConfig(decision->events.at(0).experiment_created().config_json())}});
  }
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  auto experiment = LoadExperiment(call, outcome->entity_id);
  if (!experiment.ok()) return Error(experiment.status());
  auto rendered = ExperimentWithTrials(call, *experiment);
  if (!rendered.ok()) return Error(rendered.status());
  return Ok({{"experiment", *rendered}, {"config", ShownConfig(experiment->config_json())}},
            outcome->offset);
}

net::Response ListExperiments(Call& call) {
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto experiments = call.services().projections->ListExperiments();
  if (!experiments.ok()) return Error(experiments.status());
  // `users` filters by owner (the CLI sends the current user unless --all).
  std::set<std::string> users;
  for (const auto& value : call.request().QueryParams("users")) users.insert(value);
  std::vector<views::ExperimentView> selected;
  const std::string project = call.request().QueryParam("projectId");
  const std::string workspace = call.request().QueryParam("workspaceId");
  // archived=false (the CLI's default) hides archived experiments, archived=true shows only
  // them, and no filter shows both.
  const std::string archived = call.request().QueryParam("archived");
  for (auto& experiment : *experiments) {
    if (experiment.deleted()) continue;
    if (!archived.empty() && (archived == "true") != experiment.archived()) continue;
    if (!users.empty() && !users.count(experiment.owner())) continue;
    if (!call.CanView(experiment.workspace_id())) continue;
    // 0 in views of events from before workspaces: Uncategorized (id 1).
    if (!project.empty() &&
        project != std::to_string(ProjectOrUncategorized(experiment.project_id()))) {
      continue;
    }
    if (!workspace.empty() &&
        workspace != std::to_string(WorkspaceOrUncategorized(experiment.workspace_id()))) {
      continue;
    }
    selected.push_back(std::move(experiment));
  }
  auto [page, pagination] = Page(std::move(selected), *paging);
  json list = json::array();
  for (const auto& experiment : page) {
    auto rendered = ExperimentWithTrials(call, experiment);
    if (!rendered.ok()) return Error(rendered.status());
    list.push_back(*rendered);
  }
  return Ok({{"experiments", list}, {"pagination", pagination}});
}

net::Response GetExperiment(Call& call) {
  const std::string& id = call.Param("id");
  auto experiment = LoadExperiment(call, id);
  if (!experiment.ok()) return Error(experiment.status());
  auto rendered = ExperimentWithTrials(call, *experiment);
  if (!rendered.ok()) return Error(rendered.status());
  return Ok({{"experiment", *rendered}, {"jobSummary", nullptr}});
}

net::Response ExperimentTrials(Call& call) {
  const std::string& id = call.Param("id");
  auto experiment = LoadExperiment(call, id);
  if (!experiment.ok()) return Error(experiment.status());
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto trials = call.services().projections->ListTrials(experiment->experiment_id());
  if (!trials.ok()) return Error(trials.status());
  auto [page, pagination] = Page(std::move(*trials), *paging);
  json list = json::array();
  for (const auto& trial : page) list.push_back(TrialJson(trial));
  return Ok({{"trials", list}, {"pagination", pagination}});
}

net::Response ExperimentCheckpoints(Call& call) {
  return ListCheckpointsOf(call, call.Param("id"), std::nullopt);
}

net::Response ArchiveExperiment(Call& call) {
  return Action(call, commands::ExperimentAction::Kind::kArchive);
}
net::Response UnarchiveExperiment(Call& call) {
  return Action(call, commands::ExperimentAction::Kind::kUnarchive);
}
net::Response DeleteExperiment(Call& call) {
  return Action(call, commands::ExperimentAction::Kind::kDelete);
}
net::Response DeleteTensorboardFilesRoute(Call& call) {
  auto id = ParseId(call.Param("id"), "experiment");
  if (!id.ok()) return Error(id.status());
  auto outcome = call.Execute(commands::DeleteTensorboardFiles{*id});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}
net::Response ActivateExperiment(Call& call) {
  return Action(call, commands::ExperimentAction::Kind::kActivate);
}
net::Response PauseExperiment(Call& call) {
  return Action(call, commands::ExperimentAction::Kind::kPause);
}
net::Response CancelExperiment(Call& call) {
  return Action(call, commands::ExperimentAction::Kind::kCancel);
}
net::Response KillExperiment(Call& call) {
  return Action(call, commands::ExperimentAction::Kind::kKill);
}

namespace {

// det experiment set gc-policy's checkpointStorage {saveExperimentBest, saveTrialBest,
// saveTrialLatest} (or Determined's snake_case query names), all three required.
Result<commands::UpdateExperiment::GcPolicy> GcPolicyOf(
    const std::function<Result<std::optional<int64_t>>(const char* camel, const char* snake)>&
        read) {
  commands::UpdateExperiment::GcPolicy policy;
  const std::tuple<const char*, const char*, int*> fields[] = {
      {"saveExperimentBest", "save_experiment_best", &policy.save_experiment_best},
      {"saveTrialBest", "save_trial_best", &policy.save_trial_best},
      {"saveTrialLatest", "save_trial_latest", &policy.save_trial_latest}};
  for (const auto& [camel, snake, value] : fields) {
    CAIRN_ASSIGN_OR_RETURN(auto given, read(camel, snake));
    if (!given) return Status::InvalidArgument(std::string(camel) + ": required");
    if (*given < 0 || *given > 1'000'000) {
      return Status::InvalidArgument(std::string(camel) + ": 0 to 1000000");
    }
    *value = static_cast<int>(*given);
  }
  return policy;
}

Result<commands::UpdateExperiment::GcPolicy> GcPolicyOf(const json& storage) {
  if (!storage.is_object()) return Status::InvalidArgument("checkpointStorage: expected an object");
  return GcPolicyOf([&](const char* camel, const char*) {
    return GetInt(storage, camel, std::string("checkpointStorage.") + camel);
  });
}

}  // namespace

net::Response PatchExperiment(Call& call) {
  const std::string& id_text = call.Param("id");
  auto id = ParseId(id_text, "experiment");
  if (!id.ok()) return Error(id.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(
          *body, "",
          {"id", "resources", "name", "description", "notes", "labels", "checkpointStorage"});
      !known.ok()) {
    return Error(known);
  }
  auto current = LoadExperiment(call, id_text);
  if (!current.ok()) return Error(current.status());
  auto edit = ExperimentEdit(*body, ExperimentJson(*current, 0, Audience::kOwner), *id);
  if (!edit.ok()) return Error(edit.status());
  if (Present(*body, "resources")) {
    auto update =
        ParseJobUpdate(body->at("resources"), "resources", JobUpdateShape::kExperimentResources);
    if (!update.ok()) return Error(update.status());
    update->job_id = current->job_id();
    edit->job_change = std::move(*update);
  }
  if (Present(*body, "checkpointStorage")) {
    auto policy = GcPolicyOf(body->at("checkpointStorage"));
    if (!policy.ok()) return Error(policy.status());
    edit->gc_policy = *policy;
  }
  // One command, so that a refused part leaves the other undone too.
  auto outcome = call.ExecuteAndShow(std::move(*edit));
  if (!outcome.ok()) return Error(outcome.status());
  auto experiment = LoadExperiment(call, id_text);
  if (!experiment.ok()) return Error(experiment.status());
  auto rendered = ExperimentWithTrials(call, *experiment);
  if (!rendered.ok()) return Error(rendered.status());
  return Ok({{"experiment", *rendered}}, outcome->offset);
}

}  // namespace cairn::api

namespace cairn::api {

net::Response ContinueExperimentRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"id", "overrideConfig"}, {}); !known.ok()) {
    return Error(known);
  }
  auto id = GetInt(*body, "id", "id");
  if (!id.ok()) return Error(id.status());
  if (!*id || **id <= 0) return Error(Status::InvalidArgument("id: the experiment to continue"));
  auto override_yaml = GetString(*body, "overrideConfig", "overrideConfig", false);
  if (!override_yaml.ok()) return Error(override_yaml.status());
  commands::ContinueExperiment command;
  command.experiment_id = **id;
  command.override_yaml = *override_yaml;
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  auto continued = LoadExperiment(call, std::to_string(**id));
  if (!continued.ok()) return Error(continued.status());
  auto rendered = ExperimentWithTrials(call, *continued);
  if (!rendered.ok()) return Error(rendered.status());
  json shown = json::parse(continued->config_json());
  RedactConfig(shown, call.AudienceFor(continued->owner()));
  return Ok({{"experiment", *rendered}, {"config", shown}}, outcome->offset);
}

net::Response ExperimentModelDef(Call& call) {
  auto experiment = LoadExperiment(call, call.Param("id"));
  if (!experiment.ok()) return Error(experiment.status());
  auto files = call.services().contexts->Get(experiment->context_digest());
  if (!files.ok()) return Error(files.status());
  std::string archive;
  TarGzWriter writer([&archive](std::string_view bytes) {
    archive.append(bytes);
    return true;
  });
  for (const auto& file : *files) {
    if (Status added = writer.AddFile(file.path, file.mode, file.content); !added.ok()) {
      return Error(added);
    }
  }
  if (Status finished = writer.Finish(); !finished.ok()) return Error(finished);
  return Ok({{"b64Tgz", Base64Encode(archive)}});
}

net::Response PreviewSearchRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (!body->contains("config") || !(*body)["config"].is_object()) {
    return Error(Status::InvalidArgument("config: the experiment configuration, an object"));
  }
  if (!(*body)["config"].contains("searcher")) {
    return Error(Status::InvalidArgument("invalid experiment configuration: missing searcher"));
  }
  auto config = experiments::ParseExperimentConfig((*body)["config"].dump());
  if (!config.ok()) {
    return Error(
        Status::InvalidArgument("invalid experiment configuration: " + config.status().message()));
  }
  auto preview = experiments::PreviewSearch(*config);
  if (!preview.ok()) {
    return Error(
        Status::InvalidArgument("invalid searcher configuration: " + preview.status().message()));
  }
  json trials = json::array();
  for (const auto& entry : preview->entries) {
    json unit = {{"maxLength", entry.to_completion}};
    if (!entry.to_completion) {
      unit["name"] = preview->length_unit;
      unit["value"] = entry.length;
    }
    trials.push_back({{"count", entry.count}, {"unit", std::move(unit)}});
  }
  return Ok({{"summary", {{"config", config->effective["searcher"]}, {"trials", trials}}}});
}

net::Response PreviewGcRoute(Call& call) {
  const std::string& id_text = call.Param("id");
  auto id = ParseId(id_text, "experiment");
  if (!id.ok()) return Error(id.status());
  auto experiment = LoadExperiment(call, id_text);
  if (!experiment.ok()) return Error(experiment.status());
  auto policy =
      GcPolicyOf([&](const char* camel, const char* snake) -> Result<std::optional<int64_t>> {
        std::string text = call.request().QueryParam(snake);
        if (text.empty()) text = call.request().QueryParam(camel);
        if (text.empty()) return std::optional<int64_t>();
        int64_t value = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size()) {
          return Status::InvalidArgument(std::string(snake) + ": a number, not '" +
                                         text.substr(0, 20) + "'");
        }
        return std::optional<int64_t>(value);
      });
  if (!policy.ok()) return Error(policy.status());
  commands::UpdateExperiment change;
  change.experiment_id = *id;
  change.gc_policy = *policy;
  auto decision = call.Preview(change);
  if (!decision.ok()) return Error(decision.status());
  // Determined's model.Checkpoint with its Go field names, as its CLI reads them.
  json checkpoints = json::array();
  for (const auto& event : decision->events) {
    if (!event.has_checkpoints_deleted()) continue;
    for (const std::string& uuid : event.checkpoints_deleted().uuids()) {
      auto checkpoint = call.services().projections->GetCheckpoint(uuid);
      if (!checkpoint.ok() || !*checkpoint) continue;
      const views::CheckpointView& view = **checkpoint;
      checkpoints.push_back({{"UUID", uuid},
                             {"TrialID", view.trial_id()},
                             {"ExperimentID", *id},
                             {"ReportTime", FormatRfc3339(view.report_time_unix_micros())},
                             {"State", "COMPLETED"},
                             {"StepsCompleted", view.total_batches()},
                             {"Resources", json::object()}});
    }
  }
  json config = json::parse(experiment->config_json(), nullptr, false);
  std::string metric;
  if (config.is_object() && config.value("searcher", json()).is_object()) {
    metric = config["searcher"].value("metric", "");
  }
  return Ok({{"checkpoints", std::move(checkpoints)}, {"metric_name", metric}});
}

}  // namespace cairn::api
