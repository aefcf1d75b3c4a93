#include "api/experiment_api.h"

#include <filesystem>
#include <random>

#include "api/experiment_json.h"
#include "api/log_stream.h"
#include "api/rest_util.h"
#include "base/clock.h"
#include "base/ids.h"
#include "commands/experiment_state.h"
#include "commands/experiments/experiment_config.h"
#include "commands/experiments/template_merge.h"
#include "commands/experiments/yaml_json.h"
#include "events/envelope_util.h"

namespace cairn {

using nlohmann::json;

namespace {

constexpr auto kProjectionWait = std::chrono::seconds(10);

// "TRAIN", "VALIDATE", "CHECKPOINT", "EXIT": the protocol's names are the enum's, unprefixed.
std::string WorkloadKindText(events::WorkloadKind kind) {
  const std::string name = events::WorkloadKind_Name(kind);
  const std::string prefix = "WORKLOAD_KIND_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

Result<events::WorkloadKind> ParseWorkloadKind(const std::string& text) {
  if (text == "TRAIN") return events::WORKLOAD_KIND_TRAIN;
  if (text == "VALIDATE") return events::WORKLOAD_KIND_VALIDATE;
  if (text == "CHECKPOINT") return events::WORKLOAD_KIND_CHECKPOINT;
  return Status::InvalidArgument("completed.kind must be TRAIN, VALIDATE or CHECKPOINT");
}

Result<int64_t> ParseId(const std::string& text, const std::string& what) {
  json holder = {{"id", text}};
  auto id = GetInt(holder, "id", what + " id");
  if (!id.ok() || !id->has_value() || **id <= 0) {
    return Status::InvalidArgument(what + " id must be a positive integer, not '" + text + "'");
  }
  return **id;
}

// The context must hold the entrypoint's module, or every trial would fail the same way.
Status CheckEntrypointInContext(const std::string& entrypoint,
                                const std::vector<ContextFile>& files) {
  auto colon = entrypoint.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == entrypoint.size()) {
    return Status::InvalidArgument("entrypoint: '" + entrypoint +
                                   "' must name the trial class as module:Class");
  }
  std::string module = entrypoint.substr(0, colon);
  for (char& c : module) {
    if (c == '.') c = '/';
  }
  for (const auto& file : files) {
    if (file.path == module + ".py" || file.path == module + "/__init__.py") return Status::Ok();
  }
  return Status::InvalidArgument("entrypoint: the model definition has no " + module + ".py for '" +
                                 entrypoint + "'");
}

class ExperimentRequest {
 public:
  ExperimentRequest(const RestApiDeps& deps, const http::Request& request, std::string username,
                    commands::CommandMeta meta)
      : deps_(deps), request_(request), username_(std::move(username)), meta_(std::move(meta)) {}

  std::optional<http::Response> Dispatch(const std::vector<std::string>& parts) {
    const std::string& method = request_.method;
    auto is = [&](std::initializer_list<const char*> route) { return MatchesRoute(parts, route); };
    auto not_allowed = [&] { return MethodNotAllowed(request_); };
    if (is({"api", "v1", "experiments"})) {
      if (method == "POST") return Create();
      if (method == "GET") return List();
      return not_allowed();
    }
    if (is({"api", "v1", "experiments", "*"})) {
      if (method == "GET") return Get(parts[3]);
      if (method == "PATCH") return Patch(parts[3]);
      if (method == "DELETE") {
        return Error(Status::NotSupported("deleting an experiment is not supported yet"));
      }
      return not_allowed();
    }
    if (is({"api", "v1", "experiments", "*", "*"})) {
      const std::string& what = parts[4];
      if (what == "trials") return method == "GET" ? Trials(parts[3]) : not_allowed();
      if (what == "checkpoints") {
        return method == "GET" ? Checkpoints(parts[3], std::nullopt) : not_allowed();
      }
      if (what == "activate" || what == "pause" || what == "cancel" || what == "kill") {
        return method == "POST" ? Action(parts[3], what) : not_allowed();
      }
      // Determined's other experiment endpoints (archive, move, metrics, ...) answer clearly.
      return Error(Status::NotSupported("experiments/{id}/" + what +
                                        " is not supported by this Cairn master yet"));
    }
    if (is({"api", "v1", "trials", "*"})) return method == "GET" ? Trial(parts[3]) : not_allowed();
    if (is({"api", "v1", "trials", "*", "workloads"})) {
      return method == "GET" ? Workloads(parts[3]) : not_allowed();
    }
    if (is({"api", "v1", "trials", "*", "logs"})) {
      return method == "GET" ? TrialLogs(parts[3]) : not_allowed();
    }
    if (is({"api", "v1", "trials", "*", "checkpoints"})) {
      return method == "GET" ? TrialCheckpoints(parts[3]) : not_allowed();
    }
    if (is({"api", "v1", "templates"})) return method == "GET" ? Templates() : not_allowed();
    if (is({"api", "v1", "templates", "*"})) {
      if (method == "GET") return GetTemplate(parts[3]);
      if (method == "POST") return SaveTemplate(parts[3], commands::SaveTemplate::Mode::kCreate);
      if (method == "PATCH") return SaveTemplate(parts[3], commands::SaveTemplate::Mode::kUpdate);
      if (method == "DELETE") return DeleteTemplate(parts[3]);
      return not_allowed();
    }
    return std::nullopt;
  }

 private:
  Result<commands::Outcome> Execute(commands::Command command) {
    return deps_.loop->Execute(std::move(command), meta_);
  }
  Status WaitFor(uint64_t offset) {
    return deps_.projections->WaitForOffset(offset, kProjectionWait);
  }

  Result<ExperimentView> LoadExperiment(const std::string& id_text) {
    CAIRN_ASSIGN_OR_RETURN(int64_t id, ParseId(id_text, "experiment"));
    CAIRN_ASSIGN_OR_RETURN(auto experiment, deps_.projections->GetExperiment(id));
    if (!experiment) return Status::NotFound("experiment " + std::to_string(id) + " not found");
    return *experiment;
  }

  static Result<json> ExperimentWithTrials(const ExperimentView& experiment) {
    return ExperimentJson(experiment, experiment.trial_ids_size());
  }

  // The template's text, read from the write side where templates live.
  Result<std::string> TemplateText(const std::string& name) {
    std::optional<std::string> text;
    deps_.loop->Read([&](const commands::DecisionState& state) {
      auto it = state.templates.find(name);
      if (it != state.templates.end()) text = it->second.config_yaml();
    });
    if (!text) return Status::NotFound("template " + name + " not found");
    return *text;
  }

  http::Response Create() {
    auto body = ParseBody(request_);
    if (!body.ok()) return Error(body.status());
    if (Status known = CheckKnownKeys(*body, "",
                                      {"config", "modelDefinition", "activate", "parentId",
                                       "projectId", "template", "validateOnly", "workspaceId"},
                                      {"unmanaged", "parentId"});
        !known.ok()) {
      return Error(known);
    }
    if (Present(*body, "parentId")) {
      return Error(Status::NotSupported("parentId: forking an experiment is not supported yet"));
    }
    std::string config_text;
    if (Present(*body, "config") && body->at("config").is_object()) {
      config_text = experiments::JsonToYamlText(body->at("config"));
    } else {
      auto text = GetString(*body, "config", "config", true);
      if (!text.ok()) return Error(text.status());
      config_text = *text;
    }
    auto template_name = GetString(*body, "template", "template", false);
    if (!template_name.ok()) return Error(template_name.status());
    std::string name = *template_name;
    if (name.empty()) {
      auto named = experiments::TemplateNameOf(config_text);
      if (!named.ok()) return Error(named.status());
      if (*named) name = **named;
    }
    std::string merged = config_text;
    if (!name.empty()) {
      auto text = TemplateText(name);
      if (!text.ok()) return Error(text.status());
      auto applied = experiments::ApplyTemplate(*text, config_text);
      if (!applied.ok()) return Error(applied.status());
      merged = *applied;
    }
    auto config = experiments::ParseExperimentConfig(merged);
    if (!config.ok()) return Error(config.status());
    if (!config->checkpoint_storage) {
      nlohmann::ordered_json effective = config->effective;
      effective["checkpoint_storage"] = {
          {"type", "shared_fs"},     {"host_path", deps_.default_checkpoint_dir},
          {"storage_path", nullptr}, {"save_experiment_best", 0},
          {"save_trial_best", 1},    {"save_trial_latest", 1}};
      config = experiments::ParseExperimentConfig(effective.dump());
      if (!config.ok()) return Error(config.status());
    }
    if (config->checkpoint_storage->host_path.empty() ||
        config->checkpoint_storage->host_path[0] != '/') {
      return Error(
          Status::InvalidArgument("checkpoint_storage.host_path: must be an absolute path"));
    }
    if (!config->experiment_seed) {
      std::random_device random;
      experiments::SetExperimentSeed(*config, random());
    }
    if (!Present(*body, "modelDefinition")) {
      return Error(Status::InvalidArgument(
          "modelDefinition is required: the directory with the trial class"));
    }
    auto files = DecodeModelDefinition(body->at("modelDefinition"));
    if (!files.ok()) return Error(files.status());
    if (Status entry = CheckEntrypointInContext(config->entrypoint, *files); !entry.ok()) {
      return Error(entry);
    }
    for (const char* flag : {"activate", "validateOnly"}) {
      if (Present(*body, flag) && !body->at(flag).is_boolean()) {
        return Error(Status::InvalidArgument(std::string(flag) + " must be true or false"));
      }
    }
    const bool validate_only =
        Present(*body, "validateOnly") && body->at("validateOnly").get<bool>();
    if (validate_only) return Ok({{"experiment", nullptr}, {"config", config->effective}});
    auto stored = deps_.contexts->Put(*files);
    if (!stored.ok()) return Error(stored.status());

    commands::CreateExperiment command;
    auto& created = command.created;
    created.set_name(config->name);
    created.set_owner(username_);
    created.set_original_config(config_text);
    created.set_config_json(config->effective.dump());
    created.set_seed(*config->experiment_seed);
    created.set_context_digest(stored->digest);
    created.set_context_bytes(stored->total_bytes);
    created.set_template_name(name);
    created.set_activate(Present(*body, "activate") && body->at("activate").get<bool>());
    auto* resources = created.mutable_resources();
    resources->set_resource_pool(config->resources.resource_pool);
    resources->set_priority(config->resources.priority.value_or(0));
    resources->set_weight(config->resources.weight);
    resources->set_max_slots(config->resources.max_slots.value_or(0));
    auto outcome = Execute(std::move(command));
    if (!outcome.ok()) return Error(outcome.status());
    if (Status waited = WaitFor(outcome->offset); !waited.ok()) return Error(waited);
    auto experiment = LoadExperiment(outcome->entity_id);
    if (!experiment.ok()) return Error(experiment.status());
    auto rendered = ExperimentWithTrials(*experiment);
    if (!rendered.ok()) return Error(rendered.status());
    return Ok({{"experiment", *rendered}, {"config", config->effective}}, outcome->offset);
  }

  http::Response List() {
    auto paging = ReadPaging(request_);
    if (!paging.ok()) return Error(paging.status());
    auto experiments = deps_.projections->ListExperiments();
    if (!experiments.ok()) return Error(experiments.status());
    // `users` filters by owner (the CLI sends the current user unless --all).
    std::set<std::string> users;
    for (const auto& value : request_.QueryParams("users")) users.insert(value);
    std::vector<ExperimentView> selected;
    for (auto& experiment : *experiments) {
      if (!users.empty() && !users.count(experiment.owner())) continue;
      selected.push_back(std::move(experiment));
    }
    auto [page, pagination] = Page(std::move(selected), *paging);
    json list = json::array();
    for (const auto& experiment : page) {
      auto rendered = ExperimentWithTrials(experiment);
      if (!rendered.ok()) return Error(rendered.status());
      list.push_back(*rendered);
    }
    return Ok({{"experiments", list}, {"pagination", pagination}});
  }

  http::Response Get(const std::string& id) {
    auto experiment = LoadExperiment(id);
    if (!experiment.ok()) return Error(experiment.status());
    auto rendered = ExperimentWithTrials(*experiment);
    if (!rendered.ok()) return Error(rendered.status());
    return Ok({{"experiment", *rendered}, {"jobSummary", nullptr}});
  }

  http::Response Trials(const std::string& id) {
    auto experiment = LoadExperiment(id);
    if (!experiment.ok()) return Error(experiment.status());
    auto paging = ReadPaging(request_);
    if (!paging.ok()) return Error(paging.status());
    auto trials = deps_.projections->ListTrials(experiment->experiment_id());
    if (!trials.ok()) return Error(trials.status());
    auto [page, pagination] = Page(std::move(*trials), *paging);
    json list = json::array();
    for (const auto& trial : page) list.push_back(TrialJson(trial));
    return Ok({{"trials", list}, {"pagination", pagination}});
  }

  Result<TrialView> LoadTrial(const std::string& id_text) {
    CAIRN_ASSIGN_OR_RETURN(int64_t id, ParseId(id_text, "trial"));
    CAIRN_ASSIGN_OR_RETURN(auto trial, deps_.projections->GetTrial(id));
    if (!trial) return Status::NotFound("trial " + std::to_string(id) + " not found");
    return *trial;
  }

  http::Response Trial(const std::string& id) {
    auto trial = LoadTrial(id);
    if (!trial.ok()) return Error(trial.status());
    return Ok({{"trial", TrialJson(*trial)}});
  }

  http::Response Workloads(const std::string& id) {
    auto trial = LoadTrial(id);
    if (!trial.ok()) return Error(trial.status());
    auto paging = ReadPaging(request_);
    if (!paging.ok()) return Error(paging.status());
    auto workloads = deps_.projections->ListWorkloads(trial->trial_id());
    if (!workloads.ok()) return Error(workloads.status());
    auto [page, pagination] = Page(std::move(*workloads), *paging);
    json list = json::array();
    for (const auto& workload : page) list.push_back(WorkloadJson(workload));
    return Ok({{"workloads", list}, {"pagination", pagination}});
  }

  // Every run's logs, one run after another (`det trial logs`, `det experiment create -f`).
  http::Response TrialLogs(const std::string& id) {
    auto trial = LoadTrial(id);
    if (!trial.ok()) return Error(trial.status());
    const bool follow = request_.QueryParam("follow") == "true";
    Projections* projections = deps_.projections;
    const int64_t trial_id = trial->trial_id();
    return StreamTaskLogs(deps_, follow, [projections, trial_id] {
      LogSources sources;
      auto current = projections->GetTrial(trial_id);
      if (!current.ok() || !*current) {
        sources.ended = true;
        return sources;
      }
      for (int run = 1; run <= (*current)->runs(); ++run) {
        sources.task_ids.push_back(commands::TrialRunTaskId(trial_id, run));
      }
      sources.ended = (*current)->ended();
      return sources;
    });
  }

  http::Response Checkpoints(const std::string& id, std::optional<int64_t> trial_id) {
    auto experiment = LoadExperiment(id);
    if (!experiment.ok()) return Error(experiment.status());
    auto paging = ReadPaging(request_);
    if (!paging.ok()) return Error(paging.status());
    auto checkpoints =
        deps_.projections->ListCheckpoints(experiment->experiment_id(), trial_id.value_or(0));
    if (!checkpoints.ok()) return Error(checkpoints.status());
    auto [page, pagination] = Page(std::move(*checkpoints), *paging);
    json list = json::array();
    for (const auto& checkpoint : page) list.push_back(CheckpointJson(checkpoint));
    return Ok({{"checkpoints", list}, {"pagination", pagination}});
  }

  http::Response TrialCheckpoints(const std::string& id) {
    auto trial = LoadTrial(id);
    if (!trial.ok()) return Error(trial.status());
    return Checkpoints(std::to_string(trial->experiment_id()), trial->trial_id());
  }

  http::Response Action(const std::string& id_text, const std::string& what) {
    auto id = ParseId(id_text, "experiment");
    if (!id.ok()) return Error(id.status());
    using Kind = commands::ExperimentAction::Kind;
    Kind kind = what == "activate" ? Kind::kActivate
                : what == "pause"  ? Kind::kPause
                : what == "cancel" ? Kind::kCancel
                                   : Kind::kKill;
    auto outcome = Execute(commands::ExperimentAction{*id, kind});
    if (!outcome.ok()) return Error(outcome.status());
    if (Status waited = WaitFor(outcome->offset); !waited.ok()) return Error(waited);
    return Ok(json::object(), outcome->offset);
  }

  // Determined's PatchExperiment; Cairn applies the scheduling fields (resources.priority,
  // weight, maxSlots, and resourcePool) as a job-queue change of the experiment's job.
  http::Response Patch(const std::string& id_text) {
    auto id = ParseId(id_text, "experiment");
    if (!id.ok()) return Error(id.status());
    auto body = ParseBody(request_);
    if (!body.ok()) return Error(body.status());
    if (Status known =
            CheckKnownKeys(*body, "", {"id", "resources"},
                           {"name", "description", "notes", "labels", "checkpointStorage"});
        !known.ok()) {
      return Error(known);
    }
    std::string job_id;
    deps_.loop->Read([&](const commands::DecisionState& state) {
      if (const auto* experiment = state.FindExperiment(*id)) job_id = experiment->job_id;
    });
    if (job_id.empty()) return Error(Status::NotFound("experiment " + id_text + " not found"));
    commands::UpdateJob update;
    update.job_id = job_id;
    if (Present(*body, "resources")) {
      const json& resources = body->at("resources");
      if (!resources.is_object()) {
        return Error(Status::InvalidArgument("resources must be an object"));
      }
      if (Status known = CheckKnownKeys(resources, "resources",
                                        {"priority", "weight", "maxSlots", "resourcePool"});
          !known.ok()) {
        return Error(known);
      }
      auto priority = GetInt32(resources, "priority", "resources.priority");
      auto max_slots = GetInt32(resources, "maxSlots", "resources.maxSlots");
      auto pool = GetString(resources, "resourcePool", "resources.resourcePool", false);
      if (!priority.ok()) return Error(priority.status());
      if (!max_slots.ok()) return Error(max_slots.status());
      if (!pool.ok()) return Error(pool.status());
      update.priority = *priority;
      update.max_slots = *max_slots;
      if (!pool->empty()) update.resource_pool = *pool;
      if (Present(resources, "weight")) {
        if (!resources.at("weight").is_number()) {
          return Error(Status::InvalidArgument("resources.weight must be a number"));
        }
        update.weight = resources.at("weight").get<double>();
      }
    }
    auto outcome = Execute(std::move(update));
    if (!outcome.ok()) return Error(outcome.status());
    if (Status waited = WaitFor(outcome->offset); !waited.ok()) return Error(waited);
    auto experiment = LoadExperiment(id_text);
    if (!experiment.ok()) return Error(experiment.status());
    auto rendered = ExperimentWithTrials(*experiment);
    if (!rendered.ok()) return Error(rendered.status());
    return Ok({{"experiment", *rendered}}, outcome->offset);
  }

  static json TemplateJson(const events::TemplateSaved& saved) {
    auto config = experiments::YamlTextToJson(saved.config_yaml(), "template");
    return {{"name", saved.name()},
            {"config", config.ok() ? json(*config) : json::object()},
            {"workspaceId", saved.workspace_id()}};
  }

  http::Response Templates() {
    json list = json::array();
    deps_.loop->Read([&](const commands::DecisionState& state) {
      for (const auto& [name, saved] : state.templates) list.push_back(TemplateJson(saved));
    });
    return Ok(
        {{"templates", list},
         {"pagination", {{"startIndex", 0}, {"endIndex", list.size()}, {"total", list.size()}}}});
  }

  http::Response GetTemplate(const std::string& name) {
    std::optional<json> found;
    deps_.loop->Read([&](const commands::DecisionState& state) {
      auto it = state.templates.find(name);
      if (it != state.templates.end()) found = TemplateJson(it->second);
    });
    if (!found) return Error(Status::NotFound("template " + name + " not found"));
    return Ok({{"template", *found}});
  }

  // POST carries {"name", "config", "workspaceId"}; the CLI's PATCH carries the bare config.
  http::Response SaveTemplate(const std::string& name, commands::SaveTemplate::Mode mode) {
    auto body = ParseBody(request_);
    if (!body.ok()) return Error(body.status());
    commands::SaveTemplate command;
    command.name = name;
    command.mode = mode;
    json config = *body;
    if (mode == commands::SaveTemplate::Mode::kCreate) {
      if (Status known = CheckKnownKeys(*body, "", {"name", "config", "workspaceId"});
          !known.ok()) {
        return Error(known);
      }
      auto body_name = GetString(*body, "name", "name", false);
      if (!body_name.ok()) return Error(body_name.status());
      if (!body_name->empty() && *body_name != name) {
        return Error(Status::InvalidArgument(
            "name '" + *body_name + "' differs from the template in the path, '" + name + "'"));
      }
      auto workspace = GetInt32(*body, "workspaceId", "workspaceId");
      if (!workspace.ok()) return Error(workspace.status());
      if (workspace->value_or(0) > 1) {
        return Error(Status::NotFound("workspace " + std::to_string(**workspace) +
                                      " not found (Cairn has one workspace, 1)"));
      }
      config = Present(*body, "config") ? body->at("config") : json::object();
    }
    if (config.is_string()) {
      command.config_yaml = config.get<std::string>();
    } else if (config.is_object()) {
      command.config_yaml = experiments::JsonToYamlText(nlohmann::ordered_json(config));
    } else {
      return Error(Status::InvalidArgument("config must be a map (or YAML text)"));
    }
    auto outcome = Execute(std::move(command));
    if (!outcome.ok()) return Error(outcome.status());
    return GetTemplate(name);
  }

  http::Response DeleteTemplate(const std::string& name) {
    auto outcome = Execute(commands::DeleteTemplate{name});
    if (!outcome.ok()) return Error(outcome.status());
    return Ok(json::object(), outcome->offset);
  }

  const RestApiDeps& deps_;
  const http::Request& request_;
  std::string username_;
  commands::CommandMeta meta_;
};

// ---------------------------------------------------------------------------------------------
// The trial harness's protocol.

json WorkloadAnswer(const events::TrialWorkloadAssigned& assigned) {
  json workload = {{"kind", WorkloadKindText(assigned.kind())}};
  if (assigned.kind() == events::WORKLOAD_KIND_TRAIN) {
    workload["batches"] = assigned.batches();
    workload["startBatch"] = assigned.start_batch();
  }
  if (assigned.kind() == events::WORKLOAD_KIND_EXIT) workload["reason"] = assigned.reason();
  return {{"workload", workload}};
}

Result<commands::ReportWorkload> ParseReport(const std::string& allocation_id, const json& body) {
  commands::ReportWorkload report;
  report.allocation_id = allocation_id;
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(body, "", {"sequence", "completed"}));
  CAIRN_ASSIGN_OR_RETURN(auto sequence, GetInt32(body, "sequence", "sequence"));
  if (!sequence) return Status::InvalidArgument("sequence is required");
  report.sequence = *sequence;
  if (!Present(body, "completed")) return report;
  const json& completed = body.at("completed");
  if (!completed.is_object()) return Status::InvalidArgument("completed must be an object");
  CAIRN_ASSIGN_OR_RETURN(std::string kind, GetString(completed, "kind", "completed.kind", true));
  CAIRN_ASSIGN_OR_RETURN(report.completed, ParseWorkloadKind(kind));
  if (Present(completed, "metrics")) report.metrics_json = completed.at("metrics").dump();
  switch (report.completed) {
    case events::WORKLOAD_KIND_TRAIN: {
      CAIRN_ASSIGN_OR_RETURN(auto batches, GetInt(completed, "batches", "completed.batches"));
      report.batches = batches.value_or(0);
      break;
    }
    case events::WORKLOAD_KIND_CHECKPOINT: {
      auto& checkpoint = report.checkpoint;
      CAIRN_ASSIGN_OR_RETURN(std::string uuid,
                             GetString(completed, "uuid", "completed.uuid", true));
      checkpoint.set_uuid(uuid);
      CAIRN_ASSIGN_OR_RETURN(auto batches, GetInt(completed, "batches", "completed.batches"));
      checkpoint.set_total_batches(batches.value_or(0));
      CAIRN_ASSIGN_OR_RETURN(auto size, GetInt(completed, "sizeBytes", "completed.sizeBytes"));
      checkpoint.set_size_bytes(size.value_or(0));
      if (Present(completed, "resources")) {
        if (!completed.at("resources").is_object()) {
          return Status::InvalidArgument("completed.resources must map paths to sizes");
        }
        for (const auto& [path, bytes] : completed.at("resources").items()) {
          if (!bytes.is_number_integer()) {
            return Status::InvalidArgument("completed.resources." + path + " must be an integer");
          }
          (*checkpoint.mutable_resources())[path] = bytes.get<int64_t>();
        }
      }
      if (Present(completed, "metadata")) {
        checkpoint.set_metadata_json(completed.at("metadata").dump());
      }
      break;
    }
    default:
      break;
  }
  return report;
}

// The trial whose live run holds `allocation_id`, with its run and experiment; nullptr when the
// allocation is not a live trial run's (it ended, or was never one).
struct LiveTrial {
  const commands::TrialRecord* trial = nullptr;
  const commands::ExperimentRecord* experiment = nullptr;
};
LiveTrial FindLiveTrial(const commands::DecisionState& state, const std::string& allocation_id) {
  const commands::TrialRecord* trial = state.FindTrialByAllocation(allocation_id);
  if (trial == nullptr) return {};
  const commands::TaskRecord* task = state.FindTask(trial->task_id);
  const commands::ExperimentRecord* experiment = state.FindExperiment(trial->experiment_id);
  if (task == nullptr || task->allocation_id != allocation_id || !task->holds_allocation() ||
      experiment == nullptr || experiment->config == nullptr) {
    return {};
  }
  return {trial, experiment};
}

http::Response TrialDescription(const RestApiDeps& deps, const std::string& allocation_id) {
  std::optional<json> described;
  Status status = Status::NotFound("allocation " + allocation_id + " is not a live trial's");
  deps.loop->Read([&](const commands::DecisionState& state) {
    auto [trial, experiment] = FindLiveTrial(state, allocation_id);
    if (trial == nullptr) return;
    const auto& config = *experiment->config;
    json hparams = json::parse(trial->hparams_json, nullptr, /*allow_exceptions=*/false);
    json latest = nullptr;
    if (!trial->latest_checkpoint.empty()) {
      latest = {{"uuid", trial->latest_checkpoint}, {"batches", trial->checkpoint_batches}};
    }
    described = json{{"trialId", trial->trial_id},
                     {"experimentId", trial->experiment_id},
                     {"requestId", trial->request_id},
                     {"hparams", hparams.is_discarded() ? json::object() : hparams},
                     {"entrypoint", config.entrypoint},
                     {"checkpointDir", experiments::CheckpointDirectory(config)},
                     {"latestCheckpoint", latest},
                     {"batchesCompleted", trial->checkpoint_batches},
                     {"recordsPerEpoch", config.records_per_epoch},
                     {"globalBatchSize", config.global_batch_size.value_or(0)},
                     {"environmentVariables", config.environment.environment_variables_cpu}};
  });
  if (!described) return Error(status);
  return Ok(*described);
}

http::Response TrialContext(const RestApiDeps& deps, const std::string& allocation_id) {
  std::string digest;
  deps.loop->Read([&](const commands::DecisionState& state) {
    if (auto live = FindLiveTrial(state, allocation_id); live.trial != nullptr) {
      digest = live.experiment->context_digest;
    }
  });
  if (digest.empty()) {
    return Error(Status::NotFound("allocation " + allocation_id + " is not a live trial's"));
  }
  auto files = deps.contexts->GetHarnessJson(digest);
  if (!files.ok()) return Error(files.status());
  http::Response response;
  response.body = std::move(*files);
  return response;
}

http::Response ReportWorkload(const RestApiDeps& deps, const http::Request& request,
                              const std::string& allocation_id) {
  auto body = ParseBody(request);
  if (!body.ok()) return Error(body.status());
  auto report = ParseReport(allocation_id, *body);
  if (!report.ok()) return Error(report.status());
  const int32_t sequence = report->sequence;
  commands::CommandMeta meta{"allocation:" + allocation_id, NewUuid(), "", NowUnixMicros()};
  auto outcome = deps.loop->Execute(std::move(*report), meta);
  if (!outcome.ok()) return Error(outcome.status());
  // The answer was decided in the same write, by the experiment reactor.
  std::optional<json> answer;
  deps.loop->Read([&](const commands::DecisionState& state) {
    const commands::TrialRecord* trial = state.FindTrialByAllocation(allocation_id);
    if (trial != nullptr && trial->workload_allocation == allocation_id &&
        trial->last_sequence == sequence && !trial->awaiting_answer) {
      answer = WorkloadAnswer(trial->last_answer);
    }
  });
  if (!answer) {
    return Error(
        Status::Unavailable("workload " + std::to_string(sequence) + " has no answer yet; retry"));
  }
  return Ok(*answer, outcome->offset);
}

}  // namespace

std::optional<http::Response> HandleHarnessRequest(const RestApiDeps& deps,
                                                   const http::Request& request,
                                                   const std::vector<std::string>& parts) {
  if (parts.size() != 5 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "allocations") {
    return std::nullopt;
  }
  const std::string& allocation_id = parts[3];
  const std::string& what = parts[4];
  const bool get = request.method == "GET";
  if (what == "trial" && get) return TrialDescription(deps, allocation_id);
  if (what == "context" && get) return TrialContext(deps, allocation_id);
  if (what == "workloads" && request.method == "POST") {
    return ReportWorkload(deps, request, allocation_id);
  }
  return std::nullopt;
}

std::optional<http::Response> HandleExperimentRequest(const RestApiDeps& deps,
                                                      const http::Request& request,
                                                      const std::vector<std::string>& parts,
                                                      const std::string& username,
                                                      const commands::CommandMeta& meta) {
  if (parts.size() < 3 || parts[0] != "api" || parts[1] != "v1") return std::nullopt;
  if (parts[2] != "experiments" && parts[2] != "trials" && parts[2] != "templates") {
    return std::nullopt;
  }
  auto handled = ExperimentRequest(deps, request, username, meta).Dispatch(parts);
  if (handled) return handled;
  // Determined's endpoints around these that Cairn does not have yet answer clearly.
  std::string path;
  for (size_t i = 2; i < parts.size(); ++i) path += "/" + parts[i];
  return Error(Status::NotSupported(request.method + " /api/v1" + path +
                                    " is not supported by this Cairn master yet"));
}

}  // namespace cairn
