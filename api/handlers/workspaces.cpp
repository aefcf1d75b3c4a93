#include "api/handlers/workspaces.h"

#include <algorithm>

#include "api/handlers/experiment_common.h"
#include "api/handlers/users.h"
#include "api/render/tenancy_json.h"
#include "api/rest_util.h"
#include "base/encoding.h"
#include "commands/experiments/experiment_config.h"

namespace cairn::api {

using nlohmann::json;

namespace {

Result<int32_t> IdParam(const Call& call, const std::string& what) {
  return ParseInt32Id(call.Param("id"), what);
}

// The workspace `id` if the caller may see it; NotFound otherwise, as Determined answers (a
// workspace one may not see does not exist for them).
Result<views::WorkspaceView> LoadWorkspace(Call& call, int32_t id) {
  CAIRN_ASSIGN_OR_RETURN(auto workspace, call.services().projections->GetWorkspace(id));
  if (!workspace || !call.CanView(id)) {
    return Status::NotFound("workspace " + std::to_string(id) + " not found");
  }
  return *workspace;
}

Result<views::ProjectView> LoadProject(Call& call, int32_t id) {
  CAIRN_ASSIGN_OR_RETURN(auto project, call.services().projections->GetProject(id));
  if (!project || !call.CanView(project->workspace_id())) {
    return Status::NotFound("project " + std::to_string(id) + " not found");
  }
  return *project;
}

// Determined's fields Cairn does not have: refused when they ask for something.
Status RefuseUnsupported(const json& body, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (!Present(body, key)) continue;
    const json& value = body.at(key);
    if ((value.is_object() || value.is_array()) && value.empty()) continue;
    return Status::NotSupported(std::string(key) + " is not supported by Cairn's workspaces");
  }
  return Status::Ok();
}

// The entity id's number: "workspace/7" -> 7.
int32_t EntityNumber(const std::string& entity_id) {
  const size_t slash = entity_id.rfind('/');
  return static_cast<int32_t>(std::stol(entity_id.substr(slash + 1)));
}

// The workspace as the projections show it (after a write: ExecuteAndShow waited for them).
net::Response AnswerWorkspace(Call& call, int32_t id, uint64_t offset, bool created) {
  auto workspace = LoadWorkspace(call, id);
  if (!workspace.ok()) return Error(workspace.status());
  json body = {{"workspace", WorkspaceJson(*workspace, call.user().id, UsernamesById(call))}};
  if (created) body["namespaceBindings"] = json::object();
  return Ok(body, offset);
}

net::Response AnswerProject(Call& call, int32_t id, uint64_t offset) {
  auto project = LoadProject(call, id);
  if (!project.ok()) return Error(project.status());
  auto workspace = call.services().projections->GetWorkspace(project->workspace_id());
  if (!workspace.ok()) return Error(workspace.status());
  const std::string workspace_name = *workspace ? (*workspace)->name() : "";
  return Ok({{"project", ProjectJson(*project, workspace_name, UsernamesById(call))}}, offset);
}

// Runs a command and answers `body` once the projections show it (a client reads its own
// writes), or why not.
net::Response ExecuteAndAnswer(Call& call, commands::Command command,
                               const json& body = json::object()) {
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(body, outcome->offset);
}

net::Response SetWorkspaceArchived(Call& call, bool archived) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadWorkspace(call, *id); !visible.ok()) return Error(visible.status());
  commands::UpdateWorkspace update;
  update.workspace_id = *id;
  update.archived = archived;
  return ExecuteAndAnswer(call, update);
}

net::Response SetWorkspacePinned(Call& call, bool pinned) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadWorkspace(call, *id); !visible.ok()) return Error(visible.status());
  return ExecuteAndAnswer(call, commands::PinWorkspace{*id, pinned});
}

net::Response SetProjectArchived(Call& call, bool archived) {
  auto id = IdParam(call, "project");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadProject(call, *id); !visible.ok()) return Error(visible.status());
  commands::UpdateProject update;
  update.project_id = *id;
  update.archived = archived;
  return ExecuteAndAnswer(call, update);
}

// The workspaces a bindings request names: `workspaceNames` and/or `workspaceIds`.
Result<std::vector<int32_t>> BoundWorkspaces(Call& call, const json& body) {
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(
      body, "", {"resourcePoolName", "workspaceNames", "workspaceIds", "isDefault"}));
  std::vector<int32_t> ids;
  const commands::TenancyState& tenancy = call.tenancy();
  if (Present(body, "workspaceNames")) {
    if (!body.at("workspaceNames").is_array()) {
      return Status::InvalidArgument("workspaceNames: expected a list of names");
    }
    for (const auto& name : body.at("workspaceNames")) {
      if (!name.is_string()) return Status::InvalidArgument("workspaceNames: expected names");
      const commands::WorkspaceRecord* workspace = tenancy.FindWorkspace(name.get<std::string>());
      if (workspace == nullptr) {
        return Status::NotFound("workspace " + name.get<std::string>() + " not found");
      }
      ids.push_back(workspace->id);
    }
  }
  if (Present(body, "workspaceIds")) {
    if (!body.at("workspaceIds").is_array()) {
      return Status::InvalidArgument("workspaceIds: expected a list of ids");
    }
    for (const auto& id : body.at("workspaceIds")) {
      if (!id.is_number_integer()) return Status::InvalidArgument("workspaceIds: expected ids");
      ids.push_back(id.get<int32_t>());
    }
  }
  if (Present(body, "resourcePoolName") &&
      body.at("resourcePoolName") != json(call.Param("name"))) {
    return Status::InvalidArgument("resourcePoolName does not match the pool in the path");
  }
  return ids;
}

net::Response ChangePoolBindings(Call& call, commands::SetPoolBindings::Mode mode) {
  auto body = call.Body(/*allow_empty=*/mode == commands::SetPoolBindings::Mode::kReplace);
  if (!body.ok()) return Error(body.status());
  auto ids = BoundWorkspaces(call, *body);
  if (!ids.ok()) return Error(ids.status());
  if (ids->empty() && mode != commands::SetPoolBindings::Mode::kReplace) {
    return Error(Status::InvalidArgument("name at least one workspace (workspaceNames)"));
  }
  return ExecuteAndAnswer(call, commands::SetPoolBindings{call.Param("name"), *ids, mode});
}

// Optional string fields of a PATCH: absent or null leaves the value.
}  // namespace

std::map<int32_t, std::string> UsernamesById(Call& call) {
  std::map<int32_t, std::string> names;
  auto users = call.services().projections->ListUsers();
  if (!users.ok()) return names;
  for (const auto& user : *users) names[user.id()] = user.username();
  return names;
}

net::Response ListWorkspaces(Call& call) {
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto workspaces = call.services().projections->ListWorkspaces();
  if (!workspaces.ok()) return Error(workspaces.status());
  const net::Request& request = call.request();
  const std::string exact = request.QueryParam("nameCaseSensitive");
  const std::string name = AsciiLower(request.QueryParam("name"));
  const std::string archived = request.QueryParam("archived");
  const std::string pinned = request.QueryParam("pinned");
  std::vector<views::WorkspaceView> kept;
  for (auto& workspace : *workspaces) {
    if (!call.CanView(workspace.id())) continue;
    if (!exact.empty() && workspace.name() != exact) continue;
    if (!name.empty() && AsciiLower(workspace.name()) != name) continue;
    if (!archived.empty() && archived != (workspace.archived() ? "true" : "false")) continue;
    const auto& pins = workspace.pinned_by();
    const bool is_pinned = std::find(pins.begin(), pins.end(), call.user().id) != pins.end();
    if (!pinned.empty() && pinned != (is_pinned ? "true" : "false")) continue;
    kept.push_back(std::move(workspace));
  }
  if (request.QueryParam("sortBy") == "SORT_BY_NAME") {
    std::stable_sort(kept.begin(), kept.end(),
                     [](const auto& a, const auto& b) { return a.name() < b.name(); });
  }
  if (request.QueryParam("orderBy") == "ORDER_BY_DESC") std::reverse(kept.begin(), kept.end());
  auto [page, pagination] = Page(std::move(kept), *paging);
  const auto usernames = UsernamesById(call);
  json list = json::array();
  for (const auto& workspace : page) {
    list.push_back(WorkspaceJson(workspace, call.user().id, usernames));
  }
  return Ok({{"workspaces", list}, {"pagination", pagination}});
}

namespace {

// checkpointStorageConfig as the write side keeps it: nullopt when absent or null (the CLI's
// "leave it"), "" for {} (Determined's way of removing it), else the storage checked and in
// Determined's keys.
Result<std::optional<std::string>> ReadStorageConfig(const json& body) {
  if (!body.contains("checkpointStorageConfig") || body.at("checkpointStorageConfig").is_null()) {
    return std::optional<std::string>();
  }
  const json& given = body.at("checkpointStorageConfig");
  if (given.is_object() && given.empty()) return std::optional<std::string>("");
  CAIRN_ASSIGN_OR_RETURN(
      json storage, experiments::NormalizedCheckpointStorage(given, "checkpointStorageConfig"));
  return std::optional<std::string>(storage.dump());
}

}  // namespace

net::Response CreateWorkspaceRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  Status checked =
      CheckKnownKeys(*body, "",
                     {"name", "agentUserGroup", "checkpointStorageConfig", "defaultComputePool",
                      "defaultAuxPool", "clusterNamespaceMeta", "clusterQuotaPairs"});
  if (checked.ok()) {
    checked = RefuseUnsupported(*body, {"clusterNamespaceMeta", "clusterQuotaPairs"});
  }
  if (!checked.ok()) return Error(checked);
  commands::CreateWorkspace create;
  auto storage = ReadStorageConfig(*body);
  if (!storage.ok()) return Error(storage.status());
  create.checkpoint_storage_json = storage->value_or("");
  if (Present(*body, "agentUserGroup")) {
    auto linked = ReadAgentUserGroup(*body, "agentUserGroup");
    if (!linked.ok()) return Error(linked.status());
    create.agent_user = *linked;
  }
  auto name = GetString(*body, "name", "name", true);
  auto compute = GetString(*body, "defaultComputePool", "defaultComputePool", false);
  auto aux = GetString(*body, "defaultAuxPool", "defaultAuxPool", false);
  for (const auto* field : {&name, &compute, &aux}) {
    if (!field->ok()) return Error(field->status());
  }
  create.name = *name;
  create.default_compute_pool = *compute;
  create.default_aux_pool = *aux;
  auto outcome = call.ExecuteAndShow(create);
  if (!outcome.ok()) return Error(outcome.status());
  return AnswerWorkspace(call, EntityNumber(outcome->entity_id), outcome->offset, true);
}

net::Response GetWorkspace(Call& call) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  auto workspace = LoadWorkspace(call, *id);
  if (!workspace.ok()) return Error(workspace.status());
  return Ok({{"workspace", WorkspaceJson(*workspace, call.user().id, UsernamesById(call))}});
}

net::Response PatchWorkspace(Call& call) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadWorkspace(call, *id); !visible.ok()) return Error(visible.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  Status checked =
      CheckKnownKeys(*body, "",
                     {"name", "agentUserGroup", "checkpointStorageConfig",
                      "defaultComputeResourcePool", "defaultAuxResourcePool", "defaultComputePool",
                      "defaultAuxPool", "clusterNamespaceMeta", "clusterQuotaPairs"});
  if (checked.ok()) {
    checked = RefuseUnsupported(*body, {"clusterNamespaceMeta", "clusterQuotaPairs"});
  }
  if (!checked.ok()) return Error(checked);
  commands::UpdateWorkspace update;
  update.workspace_id = *id;
  auto storage = ReadStorageConfig(*body);
  if (!storage.ok()) return Error(storage.status());
  update.checkpoint_storage_json = *storage;
  if (Present(*body, "agentUserGroup")) {
    auto linked = ReadAgentUserGroup(*body, "agentUserGroup");
    if (!linked.ok()) return Error(linked.status());
    update.agent_user = *linked;
  }
  // The CLI sends defaultComputeResourcePool; older clients the shorter names.
  const std::pair<std::optional<std::string>*, std::pair<const char*, const char*>> fields[] = {
      {&update.name, {"name", "name"}},
      {&update.default_compute_pool, {"defaultComputeResourcePool", "defaultComputePool"}},
      {&update.default_aux_pool, {"defaultAuxResourcePool", "defaultAuxPool"}}};
  for (const auto& [target, keys] : fields) {
    for (const char* key : {keys.first, keys.second}) {
      auto value = OptionalString(*body, key);
      if (!value.ok()) return Error(value.status());
      if (*value) *target = **value;
    }
  }
  auto outcome = call.ExecuteAndShow(update);
  if (!outcome.ok()) return Error(outcome.status());
  return AnswerWorkspace(call, *id, outcome->offset, false);
}

net::Response DeleteWorkspaceRoute(Call& call) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadWorkspace(call, *id); !visible.ok()) return Error(visible.status());
  // Deleted at once (only empty workspaces are), so the CLI need not poll.
  return ExecuteAndAnswer(call, commands::DeleteWorkspace{*id}, {{"completed", true}});
}

net::Response ArchiveWorkspace(Call& call) { return SetWorkspaceArchived(call, true); }
net::Response UnarchiveWorkspace(Call& call) { return SetWorkspaceArchived(call, false); }
net::Response PinWorkspaceRoute(Call& call) { return SetWorkspacePinned(call, true); }
net::Response UnpinWorkspace(Call& call) { return SetWorkspacePinned(call, false); }

net::Response ListWorkspaceProjects(Call& call) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  auto workspace = LoadWorkspace(call, *id);
  if (!workspace.ok()) return Error(workspace.status());
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto projects = call.services().projections->ListProjects();
  if (!projects.ok()) return Error(projects.status());
  const std::string name = AsciiLower(call.request().QueryParam("name"));
  const std::string archived = call.request().QueryParam("archived");
  std::vector<views::ProjectView> kept;
  for (auto& project : *projects) {
    if (project.workspace_id() != *id) continue;
    if (!name.empty() && AsciiLower(project.name()) != name) continue;
    if (!archived.empty() && archived != (project.archived() ? "true" : "false")) continue;
    kept.push_back(std::move(project));
  }
  auto [page, pagination] = Page(std::move(kept), *paging);
  const auto usernames = UsernamesById(call);
  json list = json::array();
  for (const auto& project : page) {
    list.push_back(ProjectJson(project, workspace->name(), usernames));
  }
  return Ok({{"projects", list}, {"pagination", pagination}});
}

net::Response CreateProjectRoute(Call& call) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadWorkspace(call, *id); !visible.ok()) return Error(visible.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"name", "workspaceId", "description", "key"});
      !known.ok()) {
    return Error(known);
  }
  if (Present(*body, "key")) {
    return Error(Status::NotSupported("key: Cairn derives a project's key from its name"));
  }
  auto workspace_id = GetInt32(*body, "workspaceId", "workspaceId");
  if (!workspace_id.ok()) return Error(workspace_id.status());
  if (workspace_id->has_value() && **workspace_id != *id) {
    return Error(Status::InvalidArgument("workspaceId does not match the workspace in the path"));
  }
  auto name = GetString(*body, "name", "name", true);
  if (!name.ok()) return Error(name.status());
  auto description = GetString(*body, "description", "description", false);
  if (!description.ok()) return Error(description.status());
  auto outcome = call.ExecuteAndShow(commands::CreateProject{*id, *name, *description});
  if (!outcome.ok()) return Error(outcome.status());
  return AnswerProject(call, EntityNumber(outcome->entity_id), outcome->offset);
}

net::Response WorkspacePools(Call& call) {
  auto id = IdParam(call, "workspace");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadWorkspace(call, *id); !visible.ok()) return Error(visible.status());
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto pools = call.services().projections->ListPools();
  if (!pools.ok()) return Error(pools.status());
  std::vector<std::string> names;
  for (const auto& pool : *pools) {
    if (call.tenancy().PoolAllows(pool.config().pool_name(), *id))
      names.push_back(pool.config().pool_name());
  }
  auto [page, pagination] = Page(std::move(names), *paging);
  return Ok({{"resourcePools", page}, {"pagination", pagination}});
}

net::Response GetProject(Call& call) {
  auto id = IdParam(call, "project");
  if (!id.ok()) return Error(id.status());
  return AnswerProject(call, *id, 0);
}

net::Response PatchProject(Call& call) {
  auto id = IdParam(call, "project");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadProject(call, *id); !visible.ok()) return Error(visible.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"name", "description", "key"}); !known.ok()) {
    return Error(known);
  }
  if (Present(*body, "key")) {
    return Error(Status::NotSupported("key: Cairn derives a project's key from its name"));
  }
  commands::UpdateProject update;
  update.project_id = *id;
  auto name = OptionalString(*body, "name");
  auto description = OptionalString(*body, "description");
  if (!name.ok()) return Error(name.status());
  if (!description.ok()) return Error(description.status());
  update.name = *name;
  update.description = *description;
  auto outcome = call.ExecuteAndShow(update);
  if (!outcome.ok()) return Error(outcome.status());
  return AnswerProject(call, *id, outcome->offset);
}

net::Response DeleteProjectRoute(Call& call) {
  auto id = IdParam(call, "project");
  if (!id.ok()) return Error(id.status());
  if (auto visible = LoadProject(call, *id); !visible.ok()) return Error(visible.status());
  return ExecuteAndAnswer(call, commands::DeleteProject{*id}, {{"completed", true}});
}

net::Response ArchiveProject(Call& call) { return SetProjectArchived(call, true); }
net::Response UnarchiveProject(Call& call) { return SetProjectArchived(call, false); }

net::Response MoveExperimentRoute(Call& call) {
  auto experiment = LoadExperiment(call, call.Param("id"));
  if (!experiment.ok()) return Error(experiment.status());
  if (!call.CanView(experiment->workspace_id())) {
    return Error(Status::NotFound("experiment " + call.Param("id") + " not found"));
  }
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"destinationProjectId", "experimentId"});
      !known.ok()) {
    return Error(known);
  }
  auto destination = GetInt32(*body, "destinationProjectId", "destinationProjectId");
  if (!destination.ok()) return Error(destination.status());
  if (!destination->has_value()) {
    return Error(Status::InvalidArgument("destinationProjectId: required"));
  }
  if (auto visible = LoadProject(call, **destination); !visible.ok()) {
    return Error(visible.status());
  }
  return ExecuteAndAnswer(call,
                          commands::MoveExperiment{experiment->experiment_id(), **destination});
}

net::Response ListPoolBindings(Call& call) {
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto bindings = call.services().projections->ListPoolBindings();
  if (!bindings.ok()) return Error(bindings.status());
  auto pools = call.services().projections->ListPools();
  if (!pools.ok()) return Error(pools.status());
  const std::string& pool_name = call.Param("name");
  if (std::none_of(pools->begin(), pools->end(),
                   [&](const auto& pool) { return pool.config().pool_name() == pool_name; })) {
    return Error(Status::NotFound("resource pool " + pool_name + " does not exist"));
  }
  std::vector<int32_t> ids;
  for (const auto& binding : *bindings) {
    if (binding.pool_name() == pool_name)
      ids.assign(binding.workspace_ids().begin(), binding.workspace_ids().end());
  }
  auto [page, pagination] = Page(std::move(ids), *paging);
  return Ok({{"workspaceIds", page}, {"pagination", pagination}});
}

net::Response AddPoolBindings(Call& call) {
  return ChangePoolBindings(call, commands::SetPoolBindings::Mode::kAdd);
}
net::Response RemovePoolBindings(Call& call) {
  return ChangePoolBindings(call, commands::SetPoolBindings::Mode::kRemove);
}
net::Response ReplacePoolBindings(Call& call) {
  return ChangePoolBindings(call, commands::SetPoolBindings::Mode::kReplace);
}

}  // namespace cairn::api
