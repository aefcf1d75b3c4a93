#include "api/handlers/openpai.h"

#include <map>

#include "api/handlers/auth.h"
#include "api/responses.h"
#include "api/rest_util.h"
#include "base/ids.h"
#include "base/password.h"
#include "commands/pai/pai_job.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// OpenPAI gives times as epoch milliseconds; 0 (not yet) as null.
json Millis(int64_t micros) { return micros > 0 ? json(micros / 1000) : json(nullptr); }

int32_t TotalTasks(const events::PaiJobSubmitted& job) {
  int32_t tasks = 0;
  for (const auto& role : job.task_roles()) tasks += role.task_number();
  return tasks;
}

int32_t TotalGpus(const events::PaiJobSubmitted& job) {
  int32_t gpus = 0;
  for (const auto& role : job.task_roles()) gpus += role.task_number() * role.gpu_number();
  return gpus;
}

json Summary(const views::PaiJobView& view) {
  const auto& job = view.submitted();
  return {{"name", job.job_name()},
          {"username", job.username()},
          {"state", view.state()},
          {"subState", view.state()},
          {"executionType", view.execution_type()},
          {"retries", view.retries()},
          {"createdTime", Millis(view.created_time_unix_micros())},
          {"completedTime", Millis(view.completed_time_unix_micros())},
          {"appExitCode", view.has_exit_code() ? json(view.exit_code()) : json(nullptr)},
          {"virtualCluster", job.virtual_cluster()},
          {"totalGpuNumber", TotalGpus(job)},
          {"totalTaskNumber", TotalTasks(job)},
          {"totalTaskRoleNumber", job.task_roles_size()}};
}

json StatusJson(const views::PaiJobView& view) {
  const auto& job = view.submitted();
  json status = {
      {"username", job.username()},
      {"virtualCluster", job.virtual_cluster()},
      {"state", view.state()},
      {"subState", view.state()},
      {"createdTime", Millis(view.created_time_unix_micros())},
      {"completedTime", Millis(view.completed_time_unix_micros())},
      {"executionType", view.execution_type()},
      {"retries", view.retries()},
      // Every retry here follows a task's failure: OpenPAI counts those as the user's.
      {"retryDetails", {{"user", view.retries()}, {"platform", 0}, {"resource", 0}}},
      {"appExitCode", view.has_exit_code() ? json(view.exit_code()) : json(nullptr)},
      {"appExitTriggerMessage", view.exit_reason()},
      {"appExitTriggerTaskRoleName",
       view.exit_trigger_task_role().empty() ? json(nullptr) : json(view.exit_trigger_task_role())},
      {"appExitTriggerTaskIndex",
       view.exit_trigger_task_index() >= 0 ? json(view.exit_trigger_task_index()) : json(nullptr)},
      {"appExitDiagnostics", view.exit_reason()},
      {"attempt", view.attempt()},
  };
  json roles = json::object();
  for (const auto& role : job.task_roles()) {
    roles[role.name()] = {{"taskRoleStatus", {{"name", role.name()}}},
                          {"taskStatuses", json::array()}};
  }
  for (const auto& task : view.tasks()) {
    json ports = json::object();
    for (const auto& labelled : task.ports()) {
      std::string list;
      for (int32_t port : labelled.ports())
        list += (list.empty() ? "" : ",") + std::to_string(port);
      ports[labelled.label()] = list;
    }
    json entry = {
        {"taskIndex", task.task_index()},
        {"taskState", task.state()},
        {"containerId", task.task_id()},
        {"containerIp", task.ip().empty() ? json(nullptr) : json(task.ip())},
        {"containerPorts", ports},
        {"containerGpus", task.slot_ids_size()},
        {"containerLog", "/api/v1/tasks/" + task.task_id() + "/logs"},
        {"containerExitCode", task.has_exit_code() ? json(task.exit_code()) : json(nullptr)},
        {"agentId", task.agent_id()}};
    roles[task.task_role()]["taskStatuses"].push_back(std::move(entry));
  }
  for (auto& [name, role] : roles.items()) {
    auto& statuses = role["taskStatuses"];
    std::sort(statuses.begin(), statuses.end(), [](const json& a, const json& b) {
      return a["taskIndex"].get<int>() < b["taskIndex"].get<int>();
    });
  }
  return {{"name", job.job_name()}, {"jobStatus", status}, {"taskRoles", roles}};
}

// The job named in the path, if the caller may see it; 404 NoJobError otherwise (a job in a
// workspace the caller cannot see does not exist for them).
Result<views::PaiJobView> JobInPath(Call& call) {
  const std::string& username = call.Param("username");
  const std::string& name = call.Param("jobName");
  auto view = call.services().projections->GetPaiJobByName(username, name);
  if (!view.ok()) return view.status();
  if (!*view || !call.CanView((*view)->submitted().workspace_id())) {
    return Status::NotFound("job " + name + " of user " + username + " not found");
  }
  return std::move(**view);
}

net::Response JobError(const cairn::Status& status) {
  return OpenPaiError(status, status.code() == StatusCode::kNotFound ? "NoJobError" : "");
}

net::Response ListJobsOf(Call& call, const std::string& username) {
  auto jobs = call.services().projections->ListPaiJobs();
  if (!jobs.ok()) return OpenPaiError(jobs.status());
  // Newest first, as OpenPAI lists them.
  std::sort(jobs->begin(), jobs->end(), [](const auto& a, const auto& b) {
    return a.submitted_offset() > b.submitted_offset();
  });
  json list = json::array();
  for (const auto& view : *jobs) {
    if (!username.empty() && view.submitted().username() != username) continue;
    if (!call.CanView(view.submitted().workspace_id())) continue;
    list.push_back(Summary(view));
  }
  return Ok(list);
}

json VirtualCluster(const views::PoolView& pool, const std::vector<views::PaiJobView>& jobs) {
  const auto& usage = pool.usage();
  int running = 0;
  int total = 0;
  for (const auto& job : jobs) {
    if (job.submitted().resource_pool() != pool.config().pool_name()) continue;
    ++total;
    running += job.state() == "RUNNING" || job.state() == "WAITING";
  }
  const double used =
      usage.slots() > 0 ? 100.0 * usage.used_slots() / static_cast<double>(usage.slots()) : 0;
  return {{"capacity", 100},
          {"maxCapacity", 100},
          {"usedCapacity", used},
          {"numJobs", total},
          {"numActiveJobs", running},
          {"resourcesUsed", {{"memory", 0}, {"vCores", 0}, {"GPUs", usage.used_slots()}}},
          {"resourcesTotal", {{"memory", 0}, {"vCores", 0}, {"GPUs", usage.slots()}}},
          {"defaultComputePool", pool.default_compute()},
          {"status", "RUNNING"}};
}

}  // namespace

// POST /api/v1/token {username, password, expiration}: OpenPAI's login. The password is plain
// text, as OpenPAI's clients send it. A refusal does not tell an unknown user from a wrong
// password (both 400 IncorrectPassworkError, OpenPAI's spelling), unlike OpenPAI's NoUserError.
net::Response PaiToken(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return OpenPaiError(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"username", "password", "expiration"});
      !known.ok()) {
    return OpenPaiError(known);
  }
  auto username = GetString(*body, "username", "username", true);
  if (!username.ok()) return OpenPaiError(username.status());
  auto password = GetString(*body, "password", "password", false);
  if (!password.ok()) return OpenPaiError(password.status());
  if (password->size() > 1024) {
    return OpenPaiError(cairn::Status::InvalidArgument("password: longer than 1024 bytes"));
  }
  int64_t lifetime = 0;
  if (Present(*body, "expiration")) {
    const json& expiration = body->at("expiration");
    const int64_t most = call.services().facts.session_lifetime_micros / 1'000'000;
    if (!expiration.is_number_integer() || expiration.get<int64_t>() < 1 ||
        expiration.get<int64_t>() > most) {
      return OpenPaiError(cairn::Status::InvalidArgument(
          "expiration must be a number of seconds from 1 to " + std::to_string(most) +
          " (security.session_lifetime_hours)"));
    }
    lifetime = expiration.get<int64_t>() * 1'000'000;
  }
  auto logged_in = LogIn(call, *username, CliPasswordHash(*password), lifetime);
  if (!logged_in.ok()) {
    if (logged_in.status().code() == StatusCode::kResourceExhausted) {
      net::Response response = OpenPaiError(logged_in.status(), "TooManyRequestsError");
      response.status = 429;
      response.headers.emplace_back("Retry-After", "60");
      return response;
    }
    net::Response response = OpenPaiError(logged_in.status(), "IncorrectPassworkError");
    if (logged_in.status().code() == StatusCode::kUnauthenticated ||
        logged_in.status().code() == StatusCode::kPermissionDenied) {
      response.status = 400;
    }
    return response;
  }
  return Ok({{"token", logged_in->token},
             {"user", logged_in->user.username},
             {"admin", logged_in->user.admin}},
            logged_in->offset);
}

net::Response PaiListJobs(Call& call) {
  return ListJobsOf(call, call.request().QueryParam("username"));
}

net::Response PaiListUserJobs(Call& call) { return ListJobsOf(call, call.Param("username")); }

net::Response PaiSubmitJob(Call& call) {
  const std::string& username = call.Param("username");
  if (username != call.user().username) {
    return OpenPaiError(
        cairn::Status::PermissionDenied(call.user().username + " may submit jobs as " +
                                        call.user().username + " only, not as " + username));
  }
  commands::pai::JobContext context;
  context.username = username;
  context.default_fs_uri = call.services().facts.pai_default_fs_uri;
  auto job = commands::pai::ParseJob(call.request().body, context);
  if (!job.ok()) return OpenPaiError(job.status());
  job->set_job_id("pai-" + NewUuid());
  job->set_workspace_id(kUncategorizedWorkspace);
  auto outcome = call.ExecuteAndShow(commands::SubmitPaiJob{*job});
  if (!outcome.ok()) {
    switch (outcome.status().code()) {
      case StatusCode::kAlreadyExists:
        return OpenPaiError(outcome.status(), "ConflictJobError");
      case StatusCode::kNotFound:
        return OpenPaiError(cairn::Status::InvalidArgument(outcome.status().message()),
                            "NoVirtualClusterError");
      default:
        return OpenPaiError(outcome.status());
    }
  }
  net::Response response =
      Ok({{"message", "update job " + job->job_name() + " successfully"}}, outcome->offset);
  response.status = 202;
  return response;
}

net::Response PaiJobStatus(Call& call) {
  auto view = JobInPath(call);
  if (!view.ok()) return JobError(view.status());
  return Ok(StatusJson(*view));
}

net::Response PaiJobConfig(Call& call) {
  auto view = JobInPath(call);
  if (!view.ok()) return JobError(view.status());
  json config = json::parse(view->submitted().config_json(), nullptr, false);
  if (config.is_discarded()) {
    return OpenPaiError(cairn::Status::NotFound("the job's configuration is not stored"),
                        "NoJobConfigError");
  }
  return Ok(config);
}

net::Response PaiJobSsh(Call& call) {
  auto view = JobInPath(call);
  if (!view.ok()) return JobError(view.status());
  return OpenPaiError(
      cairn::Status::NotFound("Cairn runs no sshd in an OpenPAI job's tasks; read their logs at "
                              "/api/v1/tasks/{containerId}/logs, or run a shell (det shell start)"),
      "NoJobSshInfoError");
}

net::Response PaiExecutionType(Call& call) {
  auto view = JobInPath(call);
  if (!view.ok()) return JobError(view.status());
  auto body = call.Body();
  if (!body.ok()) return OpenPaiError(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"value"}); !known.ok()) return OpenPaiError(known);
  auto value = GetString(*body, "value", "value", true);
  if (!value.ok()) return OpenPaiError(value.status());
  const std::string& name = view->submitted().job_name();
  if (*value == "START") {
    if (view->state() == "WAITING" || view->state() == "RUNNING") {
      return Ok({{"message", "job " + name + " is already started"}});
    }
    return OpenPaiError(cairn::Status::InvalidArgument(
        "job " + name + " has ended (" + view->state() +
        "); Cairn does not start an ended job again: submit it under a new name"));
  }
  if (*value != "STOP") {
    return OpenPaiError(
        cairn::Status::InvalidArgument("value must be START or STOP, got '" + *value + "'"));
  }
  auto outcome = call.ExecuteAndShow(commands::StopPaiJob{view->submitted().job_id()});
  if (!outcome.ok()) return JobError(outcome.status());
  net::Response response =
      Ok({{"message", "execute job " + name + " successfully"}}, outcome->offset);
  response.status = 202;
  return response;
}

net::Response PaiVirtualClusters(Call& call) {
  auto pools = call.services().projections->ListPools();
  if (!pools.ok()) return OpenPaiError(pools.status());
  auto jobs = call.services().projections->ListPaiJobs();
  if (!jobs.ok()) return OpenPaiError(jobs.status());
  json clusters = json::object();
  for (const auto& pool : *pools) clusters[pool.config().pool_name()] = VirtualCluster(pool, *jobs);
  return Ok(clusters);
}

net::Response PaiVirtualCluster(Call& call) {
  const std::string& name = call.Param("vc");
  auto pools = call.services().projections->ListPools();
  if (!pools.ok()) return OpenPaiError(pools.status());
  auto jobs = call.services().projections->ListPaiJobs();
  if (!jobs.ok()) return OpenPaiError(jobs.status());
  for (const auto& pool : *pools) {
    const bool named =
        pool.config().pool_name() == name || (name == "default" && pool.default_compute());
    if (named) return Ok(VirtualCluster(pool, *jobs));
  }
  return OpenPaiError(cairn::Status::NotFound("virtual cluster " + name + " does not exist"),
                      "NoVirtualClusterError");
}

net::Response PaiChangeVirtualCluster(Call& call) {
  return OpenPaiError(cairn::Status::NotSupported(
      "virtual clusters are Cairn's resource pools, configured in master.yaml "
      "(resource_pools:); they cannot be changed over REST (asked: " +
      call.Param("vc") + ")"));
}

net::Response PaiChangeUser(Call& /*call*/) {
  return OpenPaiError(cairn::Status::NotSupported(
      "manage users with Determined's API (POST /api/v1/users, det user create) or the web UI"));
}

}  // namespace cairn::api
