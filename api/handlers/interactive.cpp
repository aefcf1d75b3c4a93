#include "api/handlers/interactive.h"

#include <algorithm>
#include <set>
#include <vector>

#include "api/handlers/commands.h"
#include "api/handlers/experiment_common.h"
#include "api/render/task_json.h"
#include "api/rest_util.h"
#include "base/ssh_keys.h"
#include "base/task_secrets.h"
#include "commands/experiments/experiment_config.h"
#include "commands/tenancy/tenancy.h"
#include "events/envelope_util.h"

namespace cairn::api {

using nlohmann::json;

namespace {

struct Kind {
  events::TaskType type;
  const char* singular;  // "notebook": the answer's key and the words of errors
  const char* plural;    // "notebooks": the path's and the list's key
};

constexpr Kind kNotebook{events::TASK_TYPE_NOTEBOOK, "notebook", "notebooks"};
constexpr Kind kShell{events::TASK_TYPE_SHELL, "shell", "shells"};
constexpr Kind kTensorboard{events::TASK_TYPE_TENSORBOARD, "tensorboard", "tensorboards"};

// The v1Notebook / v1Shell / v1Tensorboard shape: a command's, and what each kind adds.
json NtscJson(Call& call, const views::TaskView& task) {
  json out = CommandJson(task, call.UserIdOf(task.user()));
  out["cairn"]["ready"] = task.ready();
  if (task.idle_timeout_seconds() > 0)
    out["cairn"]["idleTimeoutSeconds"] = task.idle_timeout_seconds();
  switch (task.task_type()) {
    case events::TASK_TYPE_NOTEBOOK:
      out["serviceAddress"] = ServicePath(task.task_id());
      break;
    case events::TASK_TYPE_TENSORBOARD: {
      out["serviceAddress"] = ServicePath(task.task_id());
      json config = json::parse(task.config_json(), nullptr, false);
      for (const char* key : {"experimentIds", "trialIds"}) {
        out[key] = config.is_object() && config.contains(key) ? config[key] : json::array();
      }
      break;
    }
    case events::TASK_TYPE_SHELL: {
      // sshd accepts logins for the account it runs as, which the agent reports when the shell
      // is ready; before that, Determined's default task user.
      const std::string user = task.service_user().empty() ? "root" : task.service_user();
      out["agentUserGroup"] = {{"user", user}, {"group", user}};
      const std::string& agent_token = call.services().agent_token;
      if (agent_token.empty()) break;
      // The host's public key (not a secret), so that ssh can check it is the task's sshd.
      auto host = TaskSshKeyPair(agent_token, kShellHostKeyPurpose, task.task_id());
      if (host.ok()) out["cairn"]["hostPublicKey"] = host->public_key;
      // The key pair is the owner's alone: not even an admin gets it.
      if (call.user().username == task.user()) {
        auto keys = TaskSshKeyPair(agent_token, kShellUserKeyPurpose, task.task_id());
        if (keys.ok()) {
          out["privateKey"] = keys->private_key;
          out["publicKey"] = keys->public_key;
        }
      }
      break;
    }
    default:
      break;
  }
  return out;
}

Result<views::TaskView> LoadKind(Call& call, const Kind& kind, const std::string& id) {
  auto task = LoadTask(call, id);
  if (!task.ok() || task->task_type() != kind.type) {
    return Status::NotFound(std::string(kind.singular) + " " + id + " not found");
  }
  return *task;
}

// TensorBoard's --logdir_spec entries for the experiments and trials asked for: where their
// trials' harness writes event files, under each experiment's checkpoint storage
// (<storage>/tensorboard/experiment/<id>[/trial/<id>]).
Status AddLogdirs(Call& call, const json& body, commands::SubmitTask& submit) {
  std::vector<int64_t> experiment_ids, trial_ids;
  for (auto [key, ids] :
       {std::pair{"experimentIds", &experiment_ids}, std::pair{"trialIds", &trial_ids}}) {
    if (!Present(body, key)) continue;
    if (!body.at(key).is_array())
      return Status::InvalidArgument(std::string(key) + ": a list of ids");
    for (const auto& id : body.at(key)) {
      if (!id.is_number_integer() || id.get<int64_t>() <= 0) {
        return Status::InvalidArgument(std::string(key) + ": a list of positive ids");
      }
      ids->push_back(id.get<int64_t>());
    }
  }
  if (Present(body, "filters") && !(body.at("filters").is_object() && body.at("filters").empty())) {
    return Status::NotSupported("TensorBoard filters are not supported by Cairn yet");
  }
  if (experiment_ids.empty() && trial_ids.empty()) {
    return Status::InvalidArgument(
        "a TensorBoard needs experimentIds or trialIds: the experiments whose metrics it shows");
  }
  auto storage_of = [&](const views::ExperimentView& experiment) -> Result<std::string> {
    CAIRN_ASSIGN_OR_RETURN(auto config,
                           experiments::ParseExperimentConfig(experiment.config_json()));
    std::string root = experiments::CheckpointDirectory(config);
    if (config.checkpoint_storage && config.checkpoint_storage->IsObjectStore()) {
      return Status::NotSupported("experiment " + std::to_string(experiment.experiment_id()) +
                                  " keeps its checkpoints in " + config.checkpoint_storage->type +
                                  "; TensorBoards read event files from shared_fs storage only");
    }
    if (root.empty()) {
      return Status::FailedPrecondition("experiment " + std::to_string(experiment.experiment_id()) +
                                        " has no checkpoint storage to hold event files");
    }
    return root + "/tensorboard/experiment/" + std::to_string(experiment.experiment_id());
  };
  for (int64_t id : experiment_ids) {
    CAIRN_ASSIGN_OR_RETURN(auto experiment, LoadExperiment(call, std::to_string(id)));
    CAIRN_ASSIGN_OR_RETURN(std::string directory, storage_of(experiment));
    submit.spec.add_tensorboard_logdirs("experiment_" + std::to_string(id) + ":" + directory);
  }
  for (int64_t id : trial_ids) {
    CAIRN_ASSIGN_OR_RETURN(auto trial, LoadTrial(call, std::to_string(id)));
    CAIRN_ASSIGN_OR_RETURN(auto experiment,
                           LoadExperiment(call, std::to_string(trial.experiment_id())));
    CAIRN_ASSIGN_OR_RETURN(std::string directory, storage_of(experiment));
    submit.spec.add_tensorboard_logdirs("trial_" + std::to_string(id) + ":" + directory +
                                        "/trial/" + std::to_string(id));
  }
  // Shown back in its configuration, and in its description, by the write side.
  submit.request->experiment_ids = std::move(experiment_ids);
  submit.request->trial_ids = std::move(trial_ids);
  return Status::Ok();
}

net::Response Launch(Call& call, const Kind& kind) {
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  std::vector<std::string> extra_keys;
  std::function<Status(commands::SubmitTask&)> complete;
  if (kind.type == events::TASK_TYPE_TENSORBOARD) {
    extra_keys = {"experimentIds", "trialIds", "filters"};
    complete = [&](commands::SubmitTask& submit) { return AddLogdirs(call, *body, submit); };
  }
  auto launched = LaunchTaskOfBody(call, *body, kind.type, extra_keys, complete);
  if (!launched.ok()) return Error(launched.status());
  const views::TaskView& task = launched->task;
  return Ok({{kind.singular, NtscJson(call, task)},
             {"config", ConfigOf(task, call.AudienceFor(task.user()))},
             {"warnings", json::array()}},
            launched->offset);
}

net::Response List(Call& call, const Kind& kind) {
  auto page =
      TaskPage(call, kind.type, [&](const views::TaskView& task) { return NtscJson(call, task); });
  if (!page.ok()) return Error(page.status());
  return Ok({{kind.plural, std::move(*page)}});
}

net::Response Get(Call& call, const Kind& kind) {
  auto task = LoadKind(call, kind, call.Param("id"));
  if (!task.ok()) return Error(task.status());
  return Ok({{kind.singular, NtscJson(call, *task)},
             {"config", ConfigOf(*task, call.AudienceFor(task->user()))}});
}

net::Response Kill(Call& call, const Kind& kind) {
  const std::string& id = call.Param("id");
  auto task = LoadKind(call, kind, id);
  if (!task.ok()) return Error(task.status());
  auto outcome = call.Execute(commands::KillTask{id, "killed by " + call.user().username});
  if (!outcome.ok()) return Error(outcome.status());
  if (!call.WaitFor(outcome->offset).ok()) return Ok(json::object(), outcome->offset);
  auto killed = LoadKind(call, kind, id);
  if (!killed.ok()) return Ok(json::object(), outcome->offset);
  return Ok({{kind.singular, NtscJson(call, *killed)}}, outcome->offset);
}

// The owner, an admin of the task's workspace, or a cluster admin; anyone else who may see the
// task is refused (403), anyone who may not does not learn it exists (404).
Result<views::TaskView> LoadServedTask(Call& call) {
  const std::string& id = call.Param("id");
  auto task = LoadTask(call, id);
  if (!task.ok() || !IsInteractiveTask(task->task_type())) {
    return Status::NotFound("no notebook, shell or TensorBoard " + id);
  }
  if (task->user() != call.user().username && !call.user().admin) {
    CAIRN_RETURN_IF_ERROR(call.Require(commands::Permission::kAssignRoles,
                                       WorkspaceOrUncategorized(task->workspace_id()),
                                       "reach another user's " + TaskTypeName(task->task_type()) +
                                           " (only its owner and workspace admins may)"));
  }
  return *task;
}

// A caller without a credential (Call::ssh_tunnel) reaches a shell's sshd and nothing else; every
// other case gets the same answer, so that it learns nothing about other tasks.
Status TunnelRefusal() {
  return Status::Unauthenticated(
      "Please use 'det user login' to log in first (only a shell's SSH tunnel needs no token)");
}

// A ready, running shell whose owner is an active user (deactivating a user shuts their shells'
// doors as it ends their sessions); anything else is the same refusal, at once (no catching up
// with the log, whose wait would tell a shell that exists from one that does not).
Result<views::TaskView> LoadTunnelledShell(Call& call) {
  auto task = call.services().projections->GetTask(call.Param("id"));
  if (!task.ok() || !*task || (*task)->task_type() != events::TASK_TYPE_SHELL ||
      !(*task)->ready() || (*task)->state() != views::TASK_STATE_RUNNING) {
    return TunnelRefusal();
  }
  const auto owner = call.services().writer->FindUser((*task)->user());
  if (!owner || !owner->active) return TunnelRefusal();
  return **task;
}

}  // namespace

std::string UpstreamRequest(const net::Request& request, const std::string& authorization) {
  static const std::set<std::string> kDropped = {"authorization",
                                                 "connection",
                                                 "keep-alive",
                                                 "proxy-connection",
                                                 "te",
                                                 "trailer",
                                                 "transfer-encoding",
                                                 "content-length",
                                                 "upgrade",
                                                 "proxy-authorization",
                                                 "cookie",
                                                 "x-forwarded-for",
                                                 "x-forwarded-host",
                                                 "x-forwarded-proto",
                                                 "expect"};
  const bool websocket = [&] {
    std::string upgrade = request.Header("upgrade");
    std::transform(upgrade.begin(), upgrade.end(), upgrade.begin(), ::tolower);
    return upgrade == "websocket";
  }();
  std::string head = request.method + " " + request.target + " HTTP/1.1\r\n";
  for (const auto& [name, value] : request.headers) {
    if (kDropped.count(name) || name.find_first_of("\r\n") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos) {
      continue;
    }
    head += name + ": " + value + "\r\n";
  }
  // The service keeps its own cookies, never the session's.
  std::string cookies;
  ForEachCookie(request.Header("cookie"), [&](std::string_view name, std::string_view cookie) {
    if (name != kProxyCookieName) cookies += (cookies.empty() ? "" : "; ") + std::string(cookie);
  });
  if (!cookies.empty()) head += "cookie: " + cookies + "\r\n";
  if (!authorization.empty()) head += "authorization: " + authorization + "\r\n";
  if (websocket) {
    head += "connection: Upgrade\r\nupgrade: websocket\r\n";
  } else {
    head += "connection: close\r\n";
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    head += "content-length: " + std::to_string(request.body.size()) + "\r\n";
  }
  const std::string client = request.remote_address.substr(0, request.remote_address.rfind(':'));
  if (!client.empty()) head += "x-forwarded-for: " + client + "\r\n";
  if (!request.Header("host").empty())
    head += "x-forwarded-host: " + request.Header("host") + "\r\n";
  head += "\r\n";
  return head + request.body;
}

net::Response LaunchNotebook(Call& call) { return Launch(call, kNotebook); }
net::Response LaunchShell(Call& call) { return Launch(call, kShell); }
net::Response LaunchTensorboard(Call& call) { return Launch(call, kTensorboard); }
net::Response ListNotebooks(Call& call) { return List(call, kNotebook); }
net::Response ListShells(Call& call) { return List(call, kShell); }
net::Response ListTensorboards(Call& call) { return List(call, kTensorboard); }
net::Response GetNotebook(Call& call) { return Get(call, kNotebook); }
net::Response GetShell(Call& call) { return Get(call, kShell); }
net::Response GetTensorboard(Call& call) { return Get(call, kTensorboard); }
net::Response KillNotebook(Call& call) { return Kill(call, kNotebook); }
net::Response KillShell(Call& call) { return Kill(call, kShell); }
net::Response KillTensorboard(Call& call) { return Kill(call, kTensorboard); }

net::Response ProxyToTask(Call& call) {
  auto task = call.ssh_tunnel() ? LoadTunnelledShell(call) : LoadServedTask(call);
  if (!task.ok()) return Error(task.status());
  // A projection behind the log may still show the task starting or stopping after it ended (or
  // became ready): before answering so, it catches up with the log and the task is read again.
  // A running task, the path of every proxied byte, does not wait.
  if ((!task->ready() || task->state() != views::TASK_STATE_RUNNING) && call.CatchUp().ok()) {
    task = LoadServedTask(call);
    if (!task.ok()) return Error(task.status());
  }
  if (task->state() == views::TASK_STATE_TERMINATED) {
    return Error(Status::NotFound(TaskTypeName(task->task_type()) + " " + task->task_id() +
                                  " has ended (" + task->exit_reason() + ")"));
  }
  if (!task->ready() || task->state() != views::TASK_STATE_RUNNING) {
    return Error(Status::Unavailable(TaskTypeName(task->task_type()) + " " + task->task_id() +
                                     " is not ready yet (" + NtscState(*task) +
                                     "); try again shortly"));
  }
  auto tunnel = std::make_shared<net::Tunnel>();
  tunnel->host = task->service_host();
  tunnel->port = static_cast<uint16_t>(task->service_port());
  if (task->task_type() == events::TASK_TYPE_SHELL) {
    // SSH inside a WebSocket, as Determined's CLI tunnels it: unwrapped into sshd's stream.
    tunnel->mode = net::Tunnel::Mode::kWebSocketToTcp;
  } else {
    tunnel->mode = net::Tunnel::Mode::kRaw;
    std::string authorization;
    if (task->task_type() == events::TASK_TYPE_NOTEBOOK) {
      // Jupyter only answers requests with the task's token, which only the master and the
      // agent can derive: nobody reaches a notebook around the proxy.
      authorization = "token " + DeriveTaskToken(call.services().agent_token, kJupyterTokenPurpose,
                                                 task->task_id());
    }
    tunnel->first_bytes = UpstreamRequest(call.request(), authorization);
  }
  if (call.ssh_tunnel()) tunnel->unreachable_message = "the shell's sshd cannot be reached";
  if (call.services().on_proxy_traffic) {
    tunnel->on_traffic = [record = call.services().on_proxy_traffic,
                          id = task->task_id()](size_t bytes) { record(id, bytes); };
    // A request is activity, but one without a credential only once bytes move.
    if (!call.ssh_tunnel()) call.services().on_proxy_traffic(task->task_id(), 0);
  }
  net::Response response;
  response.tunnel = std::move(tunnel);
  return response;
}

net::Response SetProxyCookie(Call& call) {
  auto task = LoadServedTask(call);
  if (!task.ok()) return Error(task.status());
  net::Response response = Ok({{"serviceAddress", ServicePath(task->task_id())}});
  std::string cookie = std::string(kProxyCookieName) + "=" + call.token() +
                       "; Path=" + ServicePath(task->task_id()) + "; HttpOnly; SameSite=Strict";
  if (call.services().facts.tls) cookie += "; Secure";
  response.headers.emplace_back("Set-Cookie", cookie);
  return response;
}

net::Response InteractivePage(Call& call) {
  net::Response response;
  response.content_type = "text/html; charset=utf-8";
  response.headers.emplace_back("Content-Security-Policy",
                                "default-src 'self'; script-src 'self' 'unsafe-inline'");
  response.headers.emplace_back("Cache-Control", "no-store");
  (void)call;
  // Determined's CLI opens /det/interactive/<taskId>/<type>/<description>/<pool>/<wait page>.
  // The page needs only the task id: it logs in (the web UI's session is per tab), asks the
  // master for the proxy cookie and goes to the service.
  response.body = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>Cairn: opening a task</title></head>
<body style="font-family: sans-serif; margin: 3em">
<h1>Opening <span id="task"></span></h1>
<p id="status">Checking your session...</p>
<form id="login" hidden>
  <p><label>User <input id="user" autocomplete="username"></label>
  <label>Password <input id="password" type="password" autocomplete="current-password"></label>
  <button>Log in</button></p>
</form>
<script>
const taskId = decodeURIComponent(location.pathname.split("/")[3] || "");
document.getElementById("task").textContent = taskId;
const status = document.getElementById("status");
async function open(token) {
  const answer = await fetch(`/api/v1/tasks/${encodeURIComponent(taskId)}/proxy-cookie`,
                             {method: "POST", headers: {Authorization: `Bearer ${token}`}});
  const body = await answer.json();
  if (!answer.ok) { status.textContent = body.message || `error ${answer.status}`; return false; }
  // The service's pages share the master's origin: no session may stay where their scripts
  // could read it. The cookie is HttpOnly and sent to this task's path only.
  sessionStorage.removeItem("cairn.token");
  location.replace(body.serviceAddress);
  return true;
}
const saved = sessionStorage.getItem("cairn.token");
(async () => {
  if (saved && await open(saved)) return;
  status.textContent = "Log in to open it.";
  document.getElementById("login").hidden = false;
})();
document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = await fetch("/api/v1/auth/login", {method: "POST", body: JSON.stringify({
      username: document.getElementById("user").value,
      password: document.getElementById("password").value})});
  const body = await answer.json();
  if (!answer.ok) { status.textContent = body.message || "login failed"; return; }
  await open(body.token);
});
</script></body></html>
)";
  return response;
}

}  // namespace cairn::api
