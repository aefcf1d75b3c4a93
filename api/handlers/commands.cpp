#include "api/handlers/commands.h"

#include <map>

#include "api/render/task_json.h"
#include "api/rest_util.h"
#include "base/ids.h"

namespace cairn::api {

using nlohmann::json;

// The task, or NotFound.
Result<views::TaskView> LoadTask(Call& call, const std::string& task_id) {
  CAIRN_ASSIGN_OR_RETURN(auto task, call.services().projections->GetTask(task_id));
  if (!task) return Status::NotFound("task " + task_id + " not found");
  return *task;
}

http::Response LaunchCommand(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(
          *body, "", {"config", "templateName", "files", "data", "workspaceId", "force"});
      !known.ok()) {
    return Error(known);
  }
  // Cairn's own: queue the command even if its pool could never fit it (it then waits for
  // agents to join) instead of refusing it.
  bool force = false;
  if (Present(*body, "force")) {
    if (!body->at("force").is_boolean()) {
      return Error(Status::InvalidArgument("force must be a boolean"));
    }
    force = body->at("force").get<bool>();
  }
  if (Present(*body, "templateName")) {
    return Error(Status::NotSupported("configuration templates are not supported by Cairn yet"));
  }
  if (Present(*body, "files") && !(body->at("files").is_array() && body->at("files").empty())) {
    return Error(
        Status::NotSupported("uploading a context (--context) is not supported for commands yet"));
  }
  if (Present(*body, "data") &&
      !(body->at("data").is_string() && body->at("data").get<std::string>().empty())) {
    return Error(Status::NotSupported("command data is not supported by Cairn yet"));
  }
  if (!Present(*body, "config") || !body->at("config").is_object()) {
    return Error(Status::InvalidArgument("config must be an object with an entrypoint"));
  }
  const json& config = body->at("config");
  if (Status known = CheckKnownKeys(
          config, "config", {"entrypoint", "description", "resources", "environment", "work_dir"},
          {"bind_mounts", "tensorboard_args", "idle_timeout", "notebook_idle_type", "debug", "pbs",
           "slurm"});
      !known.ok()) {
    return Error(known);
  }
  commands::SubmitTask submit;
  submit.task_id = NewUuid();
  submit.job_id = submit.task_id;
  submit.spec.set_task_type(events::TASK_TYPE_COMMAND);
  submit.spec.set_user(call.user().username);
  submit.force = force;
  json effective = json::object();

  if (!Present(config, "entrypoint"))
    return Error(Status::InvalidArgument("config.entrypoint is required"));
  const json& entrypoint = config.at("entrypoint");
  if (entrypoint.is_string()) {
    // A string runs through the shell, as Determined does.
    if (entrypoint.get<std::string>().empty()) {
      return Error(Status::InvalidArgument("config.entrypoint must not be empty"));
    }
    submit.spec.add_entrypoint("/bin/sh");
    submit.spec.add_entrypoint("-c");
    submit.spec.add_entrypoint(entrypoint.get<std::string>());
  } else if (entrypoint.is_array() && !entrypoint.empty()) {
    for (const auto& arg : entrypoint) {
      if (!arg.is_string()) {
        return Error(Status::InvalidArgument("config.entrypoint must be a list of strings"));
      }
      submit.spec.add_entrypoint(arg.get<std::string>());
    }
  } else {
    return Error(Status::InvalidArgument(
        "config.entrypoint must be a non-empty list of strings or a string"));
  }
  effective["entrypoint"] = entrypoint;

  auto description = GetString(config, "description", "config.description", false);
  if (!description.ok()) return Error(description.status());
  if (description->empty()) {
    std::string joined;
    for (const auto& arg : entrypoint.is_string() ? json::array({entrypoint}) : entrypoint) {
      joined += (joined.empty() ? "" : " ") + arg.get<std::string>();
    }
    if (joined.size() > 60) joined = joined.substr(0, 57) + "...";
    *description = "Command (" + joined + ")";
  }
  submit.spec.set_description(*description);
  effective["description"] = *description;

  submit.resources.set_slots(1);  // Determined's default when the request omits it
  if (Present(config, "resources")) {
    const json& resources = config.at("resources");
    if (!resources.is_object())
      return Error(Status::InvalidArgument("config.resources must be an object"));
    if (Status known = CheckKnownKeys(
            resources, "config.resources",
            {"slots", "priority", "weight", "resource_pool", "max_slots", "preemptible"},
            {"shm_size", "devices"});
        !known.ok()) {
      return Error(known);
    }
    auto slots = GetInt32(resources, "slots", "config.resources.slots");
    if (!slots.ok()) return Error(slots.status());
    if (*slots) {
      if (**slots < 0 || **slots > 4096) {
        return Error(Status::InvalidArgument("config.resources.slots must be between 0 and 4096"));
      }
      submit.resources.set_slots(static_cast<int32_t>(**slots));
    }
    auto priority = GetInt32(resources, "priority", "config.resources.priority");
    if (!priority.ok()) return Error(priority.status());
    if (*priority) {
      if (**priority < 1 || **priority > 99) {
        return Error(Status::InvalidArgument("config.resources.priority must be between 1 and 99"));
      }
      submit.resources.set_priority(static_cast<int32_t>(**priority));
    }
    if (Present(resources, "weight")) {
      if (!resources.at("weight").is_number() || resources.at("weight").get<double>() <= 0) {
        return Error(Status::InvalidArgument("config.resources.weight must be a positive number"));
      }
      submit.resources.set_weight(resources.at("weight").get<double>());
    }
    auto max_slots = GetInt32(resources, "max_slots", "config.resources.max_slots");
    if (!max_slots.ok()) return Error(max_slots.status());
    if (*max_slots) {
      if (**max_slots < 0) {
        return Error(Status::InvalidArgument("config.resources.max_slots must not be negative"));
      }
      submit.resources.set_max_slots(**max_slots);
    }
    // Cairn's opt-in to Slurm-style preemption (SIGTERM, grace period, re-queue); commands are
    // otherwise not preemptible, as the seeds say.
    if (Present(resources, "preemptible")) {
      if (!resources.at("preemptible").is_boolean()) {
        return Error(Status::InvalidArgument("config.resources.preemptible must be true or false"));
      }
      submit.spec.set_preemptible(resources.at("preemptible").get<bool>());
    }
    // "" (or absent) leaves the choice to the decider: the default compute pool, or the
    // default aux pool for a command that asks for no slot.
    auto pool = GetString(resources, "resource_pool", "config.resources.resource_pool", false);
    if (!pool.ok()) return Error(pool.status());
    submit.resources.set_resource_pool(*pool);
  }
  if (Present(config, "environment")) {
    const json& environment = config.at("environment");
    if (!environment.is_object()) {
      return Error(Status::InvalidArgument("config.environment must be an object"));
    }
    if (Status known =
            CheckKnownKeys(environment, "config.environment", {"environment_variables"},
                           {"image", "ports", "proxy_ports", "registry_auth", "force_pull_image",
                            "pod_spec", "add_capabilities", "drop_capabilities"});
        !known.ok()) {
      return Error(known);
    }
    if (Present(environment, "environment_variables")) {
      const json& variables = environment.at("environment_variables");
      if (!variables.is_array()) {
        return Error(
            Status::NotSupported("config.environment.environment_variables per device type is not "
                                 "supported yet; use a list of KEY=VALUE"));
      }
      for (const auto& variable : variables) {
        if (!variable.is_string() || variable.get<std::string>().find('=') == std::string::npos) {
          return Error(Status::InvalidArgument(
              "config.environment.environment_variables entries must be KEY=VALUE strings"));
        }
        submit.spec.add_environment_variables(variable.get<std::string>());
      }
      effective["environment"] = {{"environment_variables", variables}};
    }
  }
  auto work_dir = GetString(config, "work_dir", "config.work_dir", false);
  if (!work_dir.ok()) return Error(work_dir.status());
  if (!work_dir->empty()) {
    submit.spec.set_work_dir(*work_dir);
    effective["work_dir"] = *work_dir;
  }
  // What the user asked for; the pool and priority the decider resolves are filled in from the
  // recorded task when the config is shown (ConfigOf).
  json& effective_resources = effective["resources"];
  effective_resources = {{"slots", submit.resources.slots()}};
  if (!submit.resources.resource_pool().empty()) {
    effective_resources["resource_pool"] = submit.resources.resource_pool();
  }
  if (submit.resources.priority() != 0) {
    effective_resources["priority"] = submit.resources.priority();
  }
  if (submit.resources.weight() != 0) effective_resources["weight"] = submit.resources.weight();
  if (submit.resources.max_slots() != 0) {
    effective_resources["max_slots"] = submit.resources.max_slots();
  }
  if (submit.spec.preemptible()) effective_resources["preemptible"] = true;
  submit.config_json = effective.dump();

  auto outcome = call.Execute(std::move(submit));
  if (!outcome.ok()) {
    // "Can never fit this pool" is a property of the request, as Determined's "slots requested
    // exceeds cluster capacity" is: a 400 with the decider's words.
    if (outcome.status().code() == StatusCode::kFailedPrecondition) {
      return Error(Status::InvalidArgument(outcome.status().message()));
    }
    return Error(outcome.status());
  }
  if (Status waited = call.WaitFor(outcome->offset); !waited.ok()) return Error(waited);
  auto task = LoadTask(call, outcome->entity_id);
  if (!task.ok()) return Error(task.status());
  return Ok({{"command", CommandJson(*task, call.UserIdOf(task->user()))},
             {"config", ConfigOf(*task)},
             {"warnings", json::array()}},
            outcome->offset);
}

http::Response ListCommands(Call& call) {
  auto tasks = call.services().projections->ListTasks();
  if (!tasks.ok()) return Error(tasks.status());
  auto users = call.request().QueryParams("users");
  json list = json::array();
  for (const auto& task : *tasks) {
    if (task.task_type() != events::TASK_TYPE_COMMAND) continue;
    if (!users.empty() && std::find(users.begin(), users.end(), task.user()) == users.end())
      continue;
    list.push_back(CommandJson(task, call.UserIdOf(task.user())));
  }
  return Ok({{"commands", list}});
}

http::Response GetCommand(Call& call) {
  const std::string& id = call.Param("id");
  auto task = LoadTask(call, id);
  if (!task.ok()) return Error(task.status());
  if (task->task_type() != events::TASK_TYPE_COMMAND) {
    return Error(Status::NotFound("command " + id + " not found"));
  }
  return Ok(
      {{"command", CommandJson(*task, call.UserIdOf(task->user()))}, {"config", ConfigOf(*task)}});
}

http::Response KillCommand(Call& call) {
  return KillTask(call, call.Param("id"), /*as_command=*/true);
}

namespace {

http::Response SetPriority(Call& call, const std::string& kind) {
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

http::Response SetCommandPriority(Call& call) { return SetPriority(call, "commands"); }
http::Response SetNotebookPriority(Call& call) { return SetPriority(call, "notebooks"); }
http::Response SetShellPriority(Call& call) { return SetPriority(call, "shells"); }
http::Response SetTensorboardPriority(Call& call) { return SetPriority(call, "tensorboards"); }

http::Response KillTask(Call& call, const std::string& id, bool as_command) {
  auto outcome = call.Execute(commands::KillTask{id, "killed by " + call.user().username});
  if (!outcome.ok()) return Error(outcome.status());
  // The kill is durable: answer 200 even when the projections are slow to show it.
  if (!as_command || !call.WaitFor(outcome->offset).ok())
    return Ok(json::object(), outcome->offset);
  auto task = LoadTask(call, id);
  if (!task.ok()) return Ok(json::object(), outcome->offset);
  return Ok({{"command", CommandJson(*task, call.UserIdOf(task->user()))}}, outcome->offset);
}

}  // namespace cairn::api
