#include "api/handlers/generic_tasks.h"

#include "api/handlers/commands.h"
#include "api/render/task_json.h"
#include "api/rest_util.h"
#include "base/ids.h"
#include "base/yaml_json.h"
#include "events/context_store.h"
#include "events/redaction.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// A generic task the caller may see, or NotFound.
Result<views::TaskView> LoadGenericTask(Call& call, const std::string& task_id) {
  auto task = LoadTask(call, task_id);
  if (!task.ok() || task->task_type() != events::TASK_TYPE_GENERIC) {
    return Status::NotFound("task '" + task_id + "' not found");
  }
  return *task;
}

// Determined's fork: each top-level key of the child's config replaces the parent's whole.
json ForkedConfig(json parent, const json& child) {
  if (!parent.is_object()) parent = json::object();
  for (const auto& [key, value] : child.items()) parent[key] = value;
  return parent;
}

Result<std::optional<std::string>> OptionalTaskId(const json& body, const char* key) {
  CAIRN_ASSIGN_OR_RETURN(auto id, OptionalString(body, key));
  if (id && id->empty()) id.reset();
  return id;
}

net::Response HoldTask(Call& call, bool held) {
  const std::string& id = call.Param("id");
  auto task = LoadTask(call, id);
  if (!task.ok()) return Error(task.status());
  auto outcome = call.Execute(commands::HoldTask{id, held, call.user().username});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

}  // namespace

net::Response CreateGenericTask(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  Status checked = CheckKnownKeys(*body, "",
                                  {"config", "contextDirectory", "projectId", "forkedFrom",
                                   "parentId", "inheritContext", "noPause"});
  if (!checked.ok()) return Error(checked);
  auto config_text = GetString(*body, "config", "config", false);
  auto forked_from = OptionalTaskId(*body, "forkedFrom");
  auto parent_id = OptionalTaskId(*body, "parentId");
  auto inherit_context = OptionalBool(*body, "inheritContext");
  auto no_pause = OptionalBool(*body, "noPause");
  auto project_id = GetInt32(*body, "projectId", "projectId");
  for (const Status& status : {config_text.status(), forked_from.status(), parent_id.status(),
                               inherit_context.status(), no_pause.status(), project_id.status()}) {
    if (!status.ok()) return Error(status);
  }
  if (config_text->empty() && !*forked_from) {
    return Error(Status::InvalidArgument("No config file nor forked task provided"));
  }
  if (inherit_context->value_or(false) && !*parent_id) {
    return Error(Status::InvalidArgument(
        "inheritContext: could not inherit the context directory since no parentId is given"));
  }
  auto config = YamlTextToJson(*config_text, "config");
  if (!config.ok()) return Error(config.status());
  if (!config->is_object()) {
    return Error(Status::InvalidArgument("config: expected a map with an entrypoint"));
  }
  json merged = json(*config);
  std::string context_digest;
  if (*forked_from) {
    auto parent = LoadGenericTask(call, **forked_from);
    if (!parent.ok()) return Error(parent.status());
    // The fork runs with the source's whole config, secret values and credentials included:
    // only whom they may be shown to (its owner, an admin) forks it.
    if (call.AudienceFor(parent->user()) == Audience::kOthers) {
      return Error(Status::PermissionDenied("only the owner of task " + **forked_from +
                                            " or an admin may fork it: its config may hold "
                                            "their secrets"));
    }
    merged = ForkedConfig(json::parse(parent->config_json(), nullptr, false), merged);
    context_digest = parent->context_digest();
  }
  if (*parent_id) {
    auto parent = LoadGenericTask(call, **parent_id);
    if (!parent.ok()) return Error(parent.status());
    if (inherit_context->value_or(false)) context_digest = parent->context_digest();
  }
  if (Present(*body, "contextDirectory") &&
      !(body->at("contextDirectory").is_array() && body->at("contextDirectory").empty())) {
    auto files = DecodeModelDefinition(body->at("contextDirectory"), "contextDirectory");
    if (!files.ok()) return Error(files.status());
    auto stored = call.services().contexts->Put(*files);
    if (!stored.ok()) return Error(stored.status());
    context_digest = stored->digest;
  }
  int32_t workspace_id = kUncategorizedWorkspace;
  if (project_id->value_or(0) > 0) {
    auto project = call.services().projections->GetProject(**project_id);
    if (!project.ok()) return Error(project.status());
    if (!*project || !call.CanView((*project)->workspace_id())) {
      return Error(Status::NotFound("project '" + std::to_string(**project_id) + "' not found"));
    }
    workspace_id = WorkspaceOrUncategorized((*project)->workspace_id());
  }

  commands::SubmitTask submit;
  submit.task_id = NewUuid();
  submit.job_id = submit.task_id;
  submit.spec.set_task_type(events::TASK_TYPE_GENERIC);
  submit.spec.set_user(call.user().username);
  submit.spec.set_context_digest(context_digest);
  auto* generic = submit.spec.mutable_generic();
  generic->set_parent_task_id(parent_id->value_or(""));
  generic->set_forked_from(forked_from->value_or(""));
  generic->set_no_pause(no_pause->value_or(false));
  submit.request.emplace().config_json = merged.dump();
  submit.workspace_id = workspace_id;
  auto outcome = call.Execute(std::move(submit));
  if (!outcome.ok()) {
    if (outcome.status().code() == StatusCode::kFailedPrecondition) {
      return Error(Status::InvalidArgument(outcome.status().message()));
    }
    return Error(outcome.status());
  }
  if (Status shown = call.WaitFor(outcome->offset); !shown.ok()) return Error(shown);
  return Ok({{"taskId", outcome->entity_id}, {"warnings", json::array()}}, outcome->offset);
}

net::Response GetTaskConfig(Call& call) {
  auto task = LoadTask(call, call.Param("id"));
  if (!task.ok()) return Error(task.status());
  // A generic task's is its config as given (after a fork's merge), without defaults filled in;
  // environment values are shown only to whom they may be (RedactConfig), as everywhere.
  const Audience audience = call.AudienceFor(task->user());
  if (task->task_type() != events::TASK_TYPE_GENERIC) {
    return Ok({{"config", ConfigOf(*task, audience).dump()}});
  }
  return Ok({{"config", RedactConfigJson(task->config_json(), audience)}});
}

net::Response PauseTask(Call& call) { return HoldTask(call, true); }
net::Response UnpauseTask(Call& call) { return HoldTask(call, false); }

}  // namespace cairn::api
