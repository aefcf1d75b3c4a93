#include "api/handlers/commands.h"

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "api/render/task_json.h"
#include "api/render_cache.h"
#include "api/rest_util.h"
#include "base/ids.h"
#include "base/yaml_json.h"
#include "commands/tasks/command_config.h"
#include "events/context_store.h"

namespace cairn::api {

using nlohmann::json;

// The task, or NotFound.
Result<views::TaskView> LoadTask(Call& call, const std::string& task_id) {
  CAIRN_ASSIGN_OR_RETURN(auto task, call.services().projections->GetTask(task_id));
  // A task in a workspace the caller may not see does not exist for them.
  if (!task || !call.CanView(task->workspace_id())) {
    return Status::NotFound("task " + task_id + " not found");
  }
  return *task;
}

namespace {

// The template a launch names: template_name, as Determined's CLI sends it, or templateName.
Result<std::string> TemplateNameOf(const json& body) {
  std::string template_name;
  for (const char* key : {"template_name", "templateName"}) {
    CAIRN_ASSIGN_OR_RETURN(std::string name, GetString(body, key, key, false));
    if (!name.empty()) template_name = name;
  }
  return template_name;
}

}  // namespace

Result<LaunchedTask> LaunchTaskOfBody(
    Call& call, const json& body, events::TaskType type, const std::vector<std::string>& extra_keys,
    const std::function<Status(commands::SubmitTask&)>& complete) {
  std::set<std::string> known = {"config", "templateName", "template_name", "files",
                                 "data",   "workspaceId",  "force",         "preview"};
  known.insert(extra_keys.begin(), extra_keys.end());
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(body, "", known));
  // Cairn's own: queue the task even if its pool could never fit it (it then waits for agents to
  // join) instead of refusing it.
  bool force = false;
  if (Present(body, "force")) {
    if (!body.at("force").is_boolean()) return Status::InvalidArgument("force must be a boolean");
    force = body.at("force").get<bool>();
  }
  if (Present(body, "preview") &&
      !(body.at("preview").is_boolean() && !body.at("preview").get<bool>())) {
    return Status::NotSupported("preview is not supported by Cairn yet");
  }
  if (Present(body, "data") &&
      !(body.at("data").is_string() && body.at("data").get<std::string>().empty())) {
    return Status::NotSupported("command data is not supported by Cairn yet");
  }
  // A command needs one (its entrypoint); the other kinds are started from an empty one. The
  // write side reads it, under its template as the write side holds it
  // (commands::SubmitTask::Request).
  commands::SubmitTask::Request request;
  if (Present(body, "config")) {
    request.config_json = body.at("config").dump();
  } else if (type == events::TASK_TYPE_COMMAND) {
    return Status::InvalidArgument("config: required, a map with an entrypoint");
  }
  CAIRN_ASSIGN_OR_RETURN(request.template_name, TemplateNameOf(body));
  std::string context_digest;
  if (Present(body, "files") && !(body.at("files").is_array() && body.at("files").empty())) {
    // det cmd run -c DIR: the directory's files, in the experiment's modelDefinition form; the
    // agent puts them in the task's work directory before it starts.
    CAIRN_ASSIGN_OR_RETURN(auto files, DecodeModelDefinition(body.at("files"), "files"));
    CAIRN_ASSIGN_OR_RETURN(auto stored, call.services().contexts->Put(files));
    context_digest = stored.digest;
  }
  commands::SubmitTask submit;
  submit.task_id = NewUuid();
  submit.job_id = submit.task_id;
  submit.spec.set_task_type(type);
  submit.spec.set_user(call.user().username);
  submit.spec.set_context_digest(context_digest);
  submit.force = force;
  submit.request = std::move(request);
  CAIRN_ASSIGN_OR_RETURN(auto workspace_id, GetInt32(body, "workspaceId", "workspaceId"));
  // 0 or none: the built-in Uncategorized workspace, as Determined defaults it.
  submit.workspace_id = WorkspaceOrUncategorized(workspace_id.value_or(0));
  if (complete) CAIRN_RETURN_IF_ERROR(complete(submit));

  auto outcome = call.Execute(std::move(submit));
  if (!outcome.ok()) {
    // "Can never fit this pool" is a property of the request, as Determined's "slots requested
    // exceeds cluster capacity" is: a 400 with the decider's words.
    if (outcome.status().code() == StatusCode::kFailedPrecondition) {
      return Status::InvalidArgument(outcome.status().message());
    }
    return outcome.status();
  }
  CAIRN_RETURN_IF_ERROR(call.WaitFor(outcome->offset));
  CAIRN_ASSIGN_OR_RETURN(auto task, LoadTask(call, outcome->entity_id));
  return LaunchedTask{std::move(task), outcome->offset};
}

net::Response LaunchCommand(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto launched = LaunchTaskOfBody(call, *body, events::TASK_TYPE_COMMAND, {}, nullptr);
  if (!launched.ok()) return Error(launched.status());
  const views::TaskView& task = launched->task;
  return Ok({{"command", CommandJson(task, call.UserIdOf(task.user()))},
             {"config", ConfigOf(task, call.AudienceFor(task.user()))},
             {"warnings", json::array()}},
            launched->offset);
}

Result<std::function<bool(const views::TaskView&)>> TaskListFilter(Call& call) {
  std::vector<std::string> states = call.request().QueryParams("states");
  for (const std::string& state : states) {
    if (!IsNtscStateName(state)) {
      return Status::InvalidArgument("states: unknown task state '" + state +
                                     "' (STATE_QUEUED, STATE_STARTING, STATE_RUNNING, "
                                     "STATE_TERMINATING or STATE_TERMINATED)");
    }
  }
  return std::function<bool(const views::TaskView&)>(
      [&call, users = call.request().QueryParams("users"), states = std::move(states),
       workspace = call.request().QueryParam("workspaceId")](const views::TaskView& task) {
        if (!call.CanView(task.workspace_id())) return false;
        if (!workspace.empty() &&
            workspace != std::to_string(WorkspaceOrUncategorized(task.workspace_id()))) {
          return false;  // 0 (events from before workspaces) is Uncategorized
        }
        if (!states.empty() &&
            std::find(states.begin(), states.end(), NtscState(task)) == states.end()) {
          return false;
        }
        return users.empty() || std::find(users.begin(), users.end(), task.user()) != users.end();
      });
}

Result<std::string> TaskListAnswerVersion(Call& call, events::TaskType type) {
  const uint64_t access = call.services().writer->AccessGeneration();
  Projections* projections = call.services().projections;
  CAIRN_ASSIGN_OR_RETURN(uint64_t views,
                         projections->TaskListVersion(type, call.request().QueryParams("users")));
  // The version is task_order's, the views the tasks projection's: only once every projection
  // applied that event (they may not, for a moment, while catching up in bulk) is a render sure
  // to show it.
  if (projections->AppliedOffset() <= views) {
    return Status::Unavailable("the projections have not all applied offset " +
                               std::to_string(views));
  }
  return std::to_string(views) + " " + std::to_string(access);
}

net::Response ListCommands(Call& call) {
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  auto filter = TaskListFilter(call);
  if (!filter.ok()) return Error(filter.status());
  const auto& shown = *filter;
  if (paging->offset == 0 && paging->limit == 0) {
    // The commands' ids from the submission-order index, then only their views: not every task
    // there ever was (trials and notebooks outnumber commands on a busy cluster).
    std::vector<std::string> ids;
    Status listed = call.services().projections->VisitTaskIds(events::TASK_TYPE_COMMAND,
                                                              [&](const std::string& task_id) {
                                                                ids.push_back(task_id);
                                                                return true;
                                                              });
    if (!listed.ok()) return Error(listed);
    auto tasks = call.services().projections->GetTasks(ids);
    if (!tasks.ok()) return Error(tasks.status());
    // Assembled from each command's rendered text, kept by the version of its view: the same
    // bytes as rendering the whole list, at the cost of the commands that changed.
    net::Response answer;
    answer.body = R"({"commands":[)";
    bool first = true;
    for (const auto& task : *tasks) {
      if (task.task_type() != events::TASK_TYPE_COMMAND || !shown(task)) continue;
      const int user_id = call.UserIdOf(task.user());
      auto render = [&] { return JsonText(CommandJson(task, user_id)); };
      if (!first) answer.body += ',';
      first = false;
      RenderCache* renders = call.services().renders;
      answer.body += renders == nullptr
                         ? render()
                         : renders->Get("command " + task.task_id() + " @" +
                                            std::to_string(task.last_event_offset()) + " user " +
                                            std::to_string(user_id),
                                        render);
    }
    answer.body += "]}";
    return answer;
  }
  auto page = TaskPage(call, events::TASK_TYPE_COMMAND, [&](const views::TaskView& task) {
    return CommandJson(task, call.UserIdOf(task.user()));
  });
  if (!page.ok()) return Error(page.status());
  return Ok({{"commands", std::move(*page)}});
}

Result<json> TaskPage(Call& call, events::TaskType type,
                      const std::function<json(const views::TaskView&)>& render) {
  CAIRN_ASSIGN_OR_RETURN(auto paging, call.ReadPaging());
  CAIRN_ASSIGN_OR_RETURN(const auto shown, TaskListFilter(call));
  json list = json::array();
  // Walk the tasks in submission order (newest first with ORDER_BY_DESC, as the web UI lists
  // them) and read only as many as the page needs, not every task there ever was. Newest first
  // walks the ids alone to their end first.
  Projections* projections = call.services().projections;
  size_t skipped = 0;
  Status read;
  auto visit_ids = [&](const std::function<bool(const std::string&)>& visit) -> Status {
    if (call.request().QueryParam("orderBy") != "ORDER_BY_DESC") {
      return projections->VisitTaskIds(type, visit);
    }
    std::vector<std::string> ids;
    CAIRN_RETURN_IF_ERROR(projections->VisitTaskIds(type, [&](const std::string& task_id) {
      ids.push_back(task_id);
      return true;
    }));
    for (auto id = ids.rbegin(); id != ids.rend() && visit(*id);) ++id;
    return Status::Ok();
  };
  CAIRN_RETURN_IF_ERROR(visit_ids([&](const std::string& task_id) {
    auto task = projections->GetTask(task_id);
    if (!task.ok()) {
      read = task.status();
      return false;
    }
    if (!*task || !shown(**task)) return true;
    if (skipped < paging.offset) {
      ++skipped;
      return true;
    }
    list.push_back(render(**task));
    return paging.limit == 0 || list.size() < paging.limit;
  }));
  CAIRN_RETURN_IF_ERROR(read);
  return list;
}

net::Response GetCommand(Call& call) {
  const std::string& id = call.Param("id");
  auto task = LoadTask(call, id);
  if (!task.ok()) return Error(task.status());
  if (task->task_type() != events::TASK_TYPE_COMMAND) {
    return Error(Status::NotFound("command " + id + " not found"));
  }
  return Ok({{"command", CommandJson(*task, call.UserIdOf(task->user()))},
             {"config", ConfigOf(*task, call.AudienceFor(task->user()))}});
}

net::Response KillCommand(Call& call) {
  return KillTask(call, call.Param("id"), /*as_command=*/true);
}

namespace {

net::Response SetPriority(Call& call, const std::string& kind) {
  const std::string& id = call.Param("id");
  static const std::map<std::string, std::pair<std::string, events::TaskType>> kKinds = {
      {"commands", {"command", events::TASK_TYPE_COMMAND}},
      {"notebooks", {"notebook", events::TASK_TYPE_NOTEBOOK}},
      {"shells", {"shell", events::TASK_TYPE_SHELL}},
      {"tensorboards", {"tensorboard", events::TASK_TYPE_TENSORBOARD}}};
  const auto& [singular, type] = kKinds.at(kind);
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  const std::string id_key = singular + "Id";
  if (Status known = CheckKnownKeys(*body, "", {"priority", id_key}); !known.ok()) {
    return Error(known);
  }
  auto body_id = GetString(*body, id_key.c_str(), id_key, false);
  if (!body_id.ok()) return Error(body_id.status());
  if (!body_id->empty() && *body_id != id) {
    return Error(Status::InvalidArgument(id_key + " " + *body_id + " does not match the path"));
  }
  auto priority = GetInt32(*body, "priority", "priority");
  if (!priority.ok()) return Error(priority.status());
  if (!*priority) return Error(Status::InvalidArgument("priority is required"));
  auto task = LoadTask(call, id);
  if (!task.ok() || task->task_type() != type) {
    return Error(Status::NotFound(singular + " " + id + " not found"));
  }
  commands::UpdateJob update;
  update.job_id = task->job_id();
  update.priority = **priority;
  auto outcome = call.Execute(std::move(update));
  if (!outcome.ok()) return Error(outcome.status());
  if (!call.WaitFor(outcome->offset).ok()) return Ok(json::object(), outcome->offset);
  auto updated = LoadTask(call, id);
  if (!updated.ok()) return Ok(json::object(), outcome->offset);
  return Ok({{singular, CommandJson(*updated, call.UserIdOf(updated->user()))}}, outcome->offset);
}

}  // namespace

net::Response SetCommandPriority(Call& call) { return SetPriority(call, "commands"); }
net::Response SetNotebookPriority(Call& call) { return SetPriority(call, "notebooks"); }
net::Response SetShellPriority(Call& call) { return SetPriority(call, "shells"); }
net::Response SetTensorboardPriority(Call& call) { return SetPriority(call, "tensorboards"); }

net::Response KillTask(Call& call, const std::string& id, bool as_command, bool from_root) {
  auto outcome =
      call.Execute(commands::KillTask{id, "killed by " + call.user().username, from_root});
  if (!outcome.ok()) return Error(outcome.status());
  // The kill is durable: answer 200 even when the projections are slow to show it.
  if (!as_command || !call.WaitFor(outcome->offset).ok())
    return Ok(json::object(), outcome->offset);
  auto task = LoadTask(call, id);
  if (!task.ok()) return Ok(json::object(), outcome->offset);
  return Ok({{"command", CommandJson(*task, call.UserIdOf(task->user()))}}, outcome->offset);
}

}  // namespace cairn::api
