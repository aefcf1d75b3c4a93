#include "api/handlers/models.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "api/handlers/checkpoints.h"
#include "api/render/experiment_json.h"
#include "api/render/model_json.h"
#include "api/rest_util.h"
#include "base/encoding.h"
#include "events/redaction.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// --- Reading requests ---------------------------------------------------------------------

// A text field that may be absent or null (the CLI sends nulls for what it leaves out).
// Metadata as the JSON object's text.
Result<std::optional<std::string>> OptionalMetadata(const json& body) {
  if (!Present(body, "metadata")) return std::optional<std::string>();
  if (!body.at("metadata").is_object()) {
    return Status::InvalidArgument("metadata: expected an object");
  }
  return std::optional<std::string>(body.at("metadata").dump());
}

// The workspace a body names by workspaceId or workspaceName; nullopt when it names none. One
// the caller may not see is not found, as for every read.
Result<std::optional<int32_t>> BodyWorkspace(Call& call, const json& body) {
  CAIRN_ASSIGN_OR_RETURN(auto id, GetInt32(body, "workspaceId", "workspaceId"));
  CAIRN_ASSIGN_OR_RETURN(auto name, OptionalString(body, "workspaceName"));
  const commands::WorkspaceRecord* workspace = nullptr;
  std::string named;
  if (name && !name->empty()) {
    workspace = call.tenancy().FindWorkspace(*name);
    named = *name;
  } else if (id.value_or(0) > 0) {
    workspace = call.tenancy().FindWorkspace(*id);
    named = std::to_string(*id);
  } else {
    return std::optional<int32_t>();
  }
  if (workspace == nullptr || !call.CanViewModels(workspace->id)) {
    return Status::NotFound("workspace " + named + " not found");
  }
  if (id.value_or(0) > 0 && *id != workspace->id) {
    return Status::InvalidArgument("workspaceId " + std::to_string(*id) + " and workspaceName " +
                                   named + " name different workspaces");
  }
  return std::optional<int32_t>(workspace->id);
}

// "ORDER_BY_DESC" -> true; ASC, UNSPECIFIED or none -> false.
Result<bool> Descending(const Call& call) {
  const std::string order = call.request().QueryParam("orderBy");
  if (order.empty() || order == "ORDER_BY_UNSPECIFIED" || order == "ORDER_BY_ASC") return false;
  if (order == "ORDER_BY_DESC") return true;
  return Status::InvalidArgument("orderBy must be ORDER_BY_ASC or ORDER_BY_DESC, not " + order);
}

// --- Loading and rendering ----------------------------------------------------------------

// A model by the path's {modelName}: its name, or (all digits) its id, as Determined takes it.
// A model the caller may not see is not found.
Result<views::ModelView> LoadModel(Call& call, const std::string& identifier) {
  Queries& projections = *call.services().projections;
  std::optional<views::ModelView> model;
  if (!identifier.empty() && identifier.size() <= 9 &&
      identifier.find_first_not_of("0123456789") == std::string::npos) {
    CAIRN_ASSIGN_OR_RETURN(model, projections.GetModel(std::stoi(identifier)));
  } else {
    CAIRN_ASSIGN_OR_RETURN(model, projections.GetModelByName(identifier));
  }
  if (!model || !call.CanViewModels(model->workspace_id())) {
    return Status::NotFound("model " + identifier + " not found");
  }
  return std::move(*model);
}

Result<views::ModelView> LoadModel(Call& call) { return LoadModel(call, call.Param("modelName")); }

// The model and the version number a version's path names.
Result<std::pair<views::ModelView, int32_t>> LoadVersionPath(Call& call) {
  CAIRN_ASSIGN_OR_RETURN(views::ModelView model, LoadModel(call));
  CAIRN_ASSIGN_OR_RETURN(int32_t number,
                         ParseInt32Id(call.Param("modelVersionNum"), "model version"));
  return std::make_pair(std::move(model), number);
}

// The v1Checkpoint a version embeds, with the training metadata (the experiment's configuration,
// the trial's hyperparameters) Determined's client requires of a checkpoint that names its trial.
// Whoever sees the model sees the checkpoint it names.
Result<json> VersionCheckpointJson(Call& call, const std::string& uuid) {
  CAIRN_ASSIGN_OR_RETURN(auto rendered, CheckpointWithTrainingJson(call, uuid));
  if (rendered) return std::move(*rendered);
  return json{{"uuid", uuid},
              {"state", "STATE_UNSPECIFIED"},
              {"resources", json::object()},
              {"metadata", json::object()},
              {"training", json::object()}};
}

Result<json> VersionJson(Call& call, const views::ModelVersionView& version,
                         const views::ModelView& model) {
  CAIRN_ASSIGN_OR_RETURN(json checkpoint, VersionCheckpointJson(call, version.checkpoint_uuid()));
  return ModelVersionJson(version, model, std::move(checkpoint));
}

// The model's id in a registry decision's entity, "model/<id>[/version/<number>]".
int32_t ModelIdOf(const commands::Outcome& outcome) {
  const std::string& entity = outcome.entity_id;
  return std::stoi(entity.substr(entity.find('/') + 1));
}

// The version's number in it.
int32_t VersionOf(const commands::Outcome& outcome) {
  const std::string& entity = outcome.entity_id;
  return std::stoi(entity.substr(entity.rfind('/') + 1));
}

// Runs a registry command and answers with the model as it is now ({"model": v1Model}), or with
// {} when `show_model` is false.
net::Response RunModelCommand(Call& call, commands::Command command, bool show_model) {
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  if (!show_model) return Ok(json::object(), outcome->offset);
  auto model = call.services().projections->GetModel(ModelIdOf(*outcome));
  if (!model.ok()) return Error(model.status());
  if (!*model) return Error(Status::NotFound("model " + outcome->entity_id + " not found"));
  return Ok({{"model", ModelJson(**model)}}, outcome->offset);
}

// The version as it is now: {"modelVersion": v1ModelVersion}.
net::Response VersionAnswer(Call& call, int32_t model_id, int32_t number,
                            std::optional<uint64_t> offset) {
  Queries& projections = *call.services().projections;
  auto model = projections.GetModel(model_id);
  if (!model.ok()) return Error(model.status());
  auto version = projections.GetModelVersion(model_id, number);
  if (!version.ok()) return Error(version.status());
  if (!*model || !*version) {
    return Error(Status::NotFound("version " + std::to_string(number) + " of model " +
                                  std::to_string(model_id) + " not found"));
  }
  auto rendered = VersionJson(call, **version, **model);
  if (!rendered.ok()) return Error(rendered.status());
  return Ok({{"modelVersion", *rendered}}, offset);
}

// --- Listing models -----------------------------------------------------------------------

bool ContainsIgnoringCase(const std::string& text, const std::string& part) {
  return AsciiLower(text).find(AsciiLower(part)) != std::string::npos;
}

// The filters of GET /api/v1/models (Determined's GetModelsRequest).
struct ModelFilter {
  std::optional<bool> archived;
  std::string name;
  std::string description;
  std::optional<int32_t> id;
  std::vector<std::string> labels;
  std::set<std::string> users;
  std::set<int32_t> user_ids;
  std::set<int32_t> workspace_ids;
  bool by_workspace = false;

  bool Admits(const views::ModelView& model) const {
    if (archived && model.archived() != *archived) return false;
    if (!name.empty() && !ContainsIgnoringCase(model.name(), name)) return false;
    if (!description.empty() && !ContainsIgnoringCase(model.description(), description)) {
      return false;
    }
    if (id && model.id() != *id) return false;
    for (const auto& label : labels) {
      if (std::find(model.labels().begin(), model.labels().end(), label) == model.labels().end()) {
        return false;
      }
    }
    if (!users.empty() && !users.count(model.username())) return false;
    if (!user_ids.empty() && !user_ids.count(model.user_id())) return false;
    return !by_workspace || workspace_ids.count(model.workspace_id());
  }
};

Result<std::set<int32_t>> IntParams(const Call& call, const std::string& name) {
  std::set<int32_t> values;
  for (const auto& text : call.request().QueryParams(name)) {
    CAIRN_ASSIGN_OR_RETURN(int32_t value, ParseInt32Id(text, name));
    values.insert(value);
  }
  return values;
}

Result<ModelFilter> ReadModelFilter(const Call& call) {
  const net::Request& request = call.request();
  ModelFilter filter;
  const std::string archived = request.QueryParam("archived");
  if (archived == "true" || archived == "false") {
    filter.archived = archived == "true";
  } else if (!archived.empty()) {
    return Status::InvalidArgument("archived must be true or false");
  }
  filter.name = request.QueryParam("name");
  filter.description = request.QueryParam("description");
  if (request.HasQueryParam("id")) {
    CAIRN_ASSIGN_OR_RETURN(filter.id, ParseInt32Id(request.QueryParam("id"), "id"));
  }
  filter.labels = request.QueryParams("labels");
  for (const auto& user : request.QueryParams("users")) filter.users.insert(user);
  CAIRN_ASSIGN_OR_RETURN(filter.user_ids, IntParams(call, "userIds"));
  CAIRN_ASSIGN_OR_RETURN(filter.workspace_ids, IntParams(call, "workspaceIds"));
  filter.by_workspace = !filter.workspace_ids.empty();
  for (const auto& name : request.QueryParams("workspaceNames")) {
    filter.by_workspace = true;
    // An unknown name matches no model, as Determined's filter does.
    if (const auto* workspace = call.tenancy().FindWorkspace(name)) {
      filter.workspace_ids.insert(workspace->id);
    }
  }
  return filter;
}

// Orders models by Determined's GetModelsRequest.SortBy (ids break ties).
Status SortModels(const Call& call, std::vector<views::ModelView>& models) {
  const std::string sort_by = call.request().QueryParam("sortBy");
  std::function<bool(const views::ModelView&, const views::ModelView&)> before;
  if (sort_by == "SORT_BY_NAME") {
    before = [](const auto& a, const auto& b) { return a.name() < b.name(); };
  } else if (sort_by == "SORT_BY_DESCRIPTION") {
    before = [](const auto& a, const auto& b) { return a.description() < b.description(); };
  } else if (sort_by == "SORT_BY_CREATION_TIME") {
    before = [](const auto& a, const auto& b) {
      return a.creation_time_unix_micros() < b.creation_time_unix_micros();
    };
  } else if (sort_by == "SORT_BY_LAST_UPDATED_TIME") {
    before = [](const auto& a, const auto& b) {
      return a.last_updated_time_unix_micros() < b.last_updated_time_unix_micros();
    };
  } else if (sort_by == "SORT_BY_NUM_VERSIONS") {
    before = [](const auto& a, const auto& b) { return a.versions_size() < b.versions_size(); };
  } else if (sort_by == "SORT_BY_WORKSPACE") {
    const commands::TenancyState& tenancy = call.tenancy();
    auto name_of = [&tenancy](const views::ModelView& model) {
      const auto* workspace = tenancy.FindWorkspace(WorkspaceOrUncategorized(model.workspace_id()));
      return workspace != nullptr ? workspace->name : std::string();
    };
    before = [name_of](const auto& a, const auto& b) { return name_of(a) < name_of(b); };
  } else if (sort_by.empty() || sort_by == "SORT_BY_UNSPECIFIED") {
    before = [](const auto&, const auto&) { return false; };
  } else {
    return Status::InvalidArgument("sortBy: unknown " + sort_by);
  }
  CAIRN_ASSIGN_OR_RETURN(bool descending, Descending(call));
  std::stable_sort(models.begin(), models.end(), [&](const auto& a, const auto& b) {
    const bool a_first = descending ? before(b, a) : before(a, b);
    const bool b_first = descending ? before(a, b) : before(b, a);
    if (a_first || b_first) return a_first;
    return descending ? a.id() > b.id() : a.id() < b.id();
  });
  return Status::Ok();
}

// A command's optional texts, read from a body (Determined's PostModel, PatchModel and the
// version requests share the names).
struct Texts {
  std::optional<std::string> name, description, comment, notes, metadata_json;
  std::optional<std::vector<std::string>> labels;
};

Result<Texts> ReadTexts(const json& body) {
  Texts texts;
  CAIRN_ASSIGN_OR_RETURN(texts.name, OptionalString(body, "name"));
  CAIRN_ASSIGN_OR_RETURN(texts.description, OptionalString(body, "description"));
  CAIRN_ASSIGN_OR_RETURN(texts.comment, OptionalString(body, "comment"));
  CAIRN_ASSIGN_OR_RETURN(texts.notes, OptionalString(body, "notes"));
  CAIRN_ASSIGN_OR_RETURN(texts.metadata_json, OptionalMetadata(body));
  CAIRN_ASSIGN_OR_RETURN(texts.labels, OptionalLabels(body));
  return texts;
}

// The body as an object with only `known` keys, and its texts.
Result<std::pair<json, Texts>> ReadBody(Call& call, const std::set<std::string>& known,
                                        const std::set<std::string>& not_supported = {}) {
  CAIRN_ASSIGN_OR_RETURN(json body, call.Body(/*allow_empty=*/true));
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(body, "", known, not_supported));
  CAIRN_ASSIGN_OR_RETURN(Texts texts, ReadTexts(body));
  return std::make_pair(std::move(body), std::move(texts));
}

net::Response SetArchived(Call& call, bool archived) {
  auto model = LoadModel(call);
  if (!model.ok()) return Error(model.status());
  commands::UpdateModel command;
  command.model_id = model->id();
  command.archived = archived;
  return RunModelCommand(call, std::move(command), /*show_model=*/false);
}

}  // namespace

net::Response CreateModel(Call& call) {
  auto read = ReadBody(
      call, {"name", "description", "labels", "metadata", "notes", "workspaceId", "workspaceName"});
  if (!read.ok()) return Error(read.status());
  auto& [body, texts] = *read;
  if (!texts.name) return Error(Status::InvalidArgument("name: required"));
  auto workspace = BodyWorkspace(call, body);
  if (!workspace.ok()) return Error(workspace.status());
  commands::CreateModel command;
  command.name = *texts.name;
  command.description = texts.description.value_or("");
  command.labels = texts.labels.value_or(std::vector<std::string>{});
  command.metadata_json = texts.metadata_json.value_or("{}");
  command.notes = texts.notes.value_or("");
  command.workspace_id = workspace->value_or(kUncategorizedWorkspace);
  return RunModelCommand(call, std::move(command), /*show_model=*/true);
}

net::Response ListModels(Call& call) {
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto filter = ReadModelFilter(call);
  if (!filter.ok()) return Error(filter.status());
  auto models = call.services().projections->ListModels();
  if (!models.ok()) return Error(models.status());
  std::vector<views::ModelView> selected;
  for (auto& model : *models) {
    if (call.CanViewModels(model.workspace_id()) && filter->Admits(model)) {
      selected.push_back(std::move(model));
    }
  }
  if (Status sorted = SortModels(call, selected); !sorted.ok()) return Error(sorted);
  auto [page, pagination] = Page(std::move(selected), *paging);
  json list = json::array();
  for (const auto& model : page) list.push_back(ModelJson(model));
  return Ok({{"models", list}, {"pagination", pagination}});
}

net::Response GetModel(Call& call) {
  auto model = LoadModel(call);
  if (!model.ok()) return Error(model.status());
  return Ok({{"model", ModelJson(*model)}});
}

net::Response PatchModel(Call& call) {
  auto model = LoadModel(call);
  if (!model.ok()) return Error(model.status());
  auto read = ReadBody(
      call, {"name", "description", "labels", "metadata", "notes", "workspaceId", "workspaceName"});
  if (!read.ok()) return Error(read.status());
  auto& [body, texts] = *read;
  auto workspace = BodyWorkspace(call, body);
  if (!workspace.ok()) return Error(workspace.status());
  commands::UpdateModel command;
  command.model_id = model->id();
  command.name = texts.name;
  command.description = texts.description;
  command.labels = texts.labels;
  command.metadata_json = texts.metadata_json;
  command.notes = texts.notes;
  command.workspace_id = *workspace;
  return RunModelCommand(call, std::move(command), /*show_model=*/true);
}

net::Response ArchiveModel(Call& call) { return SetArchived(call, true); }
net::Response UnarchiveModel(Call& call) { return SetArchived(call, false); }

net::Response DeleteModelRoute(Call& call) {
  auto model = LoadModel(call);
  if (!model.ok()) return Error(model.status());
  return RunModelCommand(call, commands::DeleteModel{model->id()}, /*show_model=*/false);
}

net::Response ListModelVersions(Call& call) {
  auto model = LoadModel(call);
  if (!model.ok()) return Error(model.status());
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  const std::string sort_by = call.request().QueryParam("sortBy");
  if (!sort_by.empty() && sort_by != "SORT_BY_UNSPECIFIED" && sort_by != "SORT_BY_VERSION" &&
      sort_by != "SORT_BY_CREATION_TIME") {
    return Error(Status::InvalidArgument("sortBy: unknown " + sort_by));
  }
  auto descending = Descending(call);
  if (!descending.ok()) return Error(descending.status());
  auto versions = call.services().projections->ListModelVersions(model->id());
  if (!versions.ok()) return Error(versions.status());
  // By number, which is also registration order: both sorts agree.
  if (*descending) std::reverse(versions->begin(), versions->end());
  auto [page, pagination] = Page(std::move(*versions), *paging);
  json list = json::array();
  for (const auto& version : page) {
    auto rendered = VersionJson(call, version, *model);
    if (!rendered.ok()) return Error(rendered.status());
    list.push_back(std::move(*rendered));
  }
  return Ok({{"model", ModelJson(*model)}, {"modelVersions", list}, {"pagination", pagination}});
}

net::Response RegisterModelVersion(Call& call) {
  auto model = LoadModel(call);
  if (!model.ok()) return Error(model.status());
  auto read = ReadBody(
      call, {"checkpointUuid", "modelName", "name", "comment", "metadata", "labels", "notes"});
  if (!read.ok()) return Error(read.status());
  auto& [body, texts] = *read;
  auto uuid = GetString(body, "checkpointUuid", "checkpointUuid", true);
  if (!uuid.ok()) return Error(uuid.status());
  auto named = GetString(body, "modelName", "modelName", false);
  if (!named.ok()) return Error(named.status());
  if (!named->empty() && *named != model->name() && *named != std::to_string(model->id())) {
    return Error(Status::InvalidArgument("modelName '" + *named +
                                         "' differs from the model in the path, " + model->name()));
  }
  commands::RegisterModelVersion command;
  command.model_id = model->id();
  command.checkpoint_uuid = *uuid;
  command.name = texts.name.value_or("");
  command.comment = texts.comment.value_or("");
  command.notes = texts.notes.value_or("");
  command.metadata_json = texts.metadata_json.value_or("{}");
  command.labels = texts.labels.value_or(std::vector<std::string>{});
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  return VersionAnswer(call, model->id(), VersionOf(*outcome), outcome->offset);
}

net::Response GetModelVersion(Call& call) {
  auto path = LoadVersionPath(call);
  if (!path.ok()) return Error(path.status());
  return VersionAnswer(call, path->first.id(), path->second, std::nullopt);
}

net::Response PatchModelVersion(Call& call) {
  auto path = LoadVersionPath(call);
  if (!path.ok()) return Error(path.status());
  const auto& [model, number] = *path;
  auto read = ReadBody(call, {"name", "comment", "metadata", "labels", "notes"}, {"checkpoint"});
  if (!read.ok()) return Error(read.status());
  const Texts& texts = read->second;
  commands::UpdateModelVersion command;
  command.model_id = model.id();
  command.version = number;
  command.name = texts.name;
  command.comment = texts.comment;
  command.notes = texts.notes;
  command.metadata_json = texts.metadata_json;
  command.labels = texts.labels;
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  return VersionAnswer(call, model.id(), number, outcome->offset);
}

net::Response DeleteModelVersionRoute(Call& call) {
  auto path = LoadVersionPath(call);
  if (!path.ok()) return Error(path.status());
  return RunModelCommand(call, commands::DeleteModelVersion{path->first.id(), path->second},
                         /*show_model=*/false);
}

net::Response ModelLabels(Call& call) {
  const std::string workspace = call.request().QueryParam("workspaceId");
  auto models = call.services().projections->ListModels();
  if (!models.ok()) return Error(models.status());
  std::map<std::string, int> uses;
  for (const auto& model : *models) {
    if (!call.CanViewModels(model.workspace_id())) continue;
    if (!workspace.empty() &&
        workspace != std::to_string(WorkspaceOrUncategorized(model.workspace_id()))) {
      continue;
    }
    for (const auto& label : model.labels()) ++uses[label];
  }
  std::vector<std::pair<std::string, int>> ranked(uses.begin(), uses.end());
  // Most used first, as Determined lists them; names break ties.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  json labels = json::array();
  for (const auto& [label, count] : ranked) labels.push_back(label);
  return Ok({{"labels", labels}});
}

}  // namespace cairn::api
