#include "api/rest_api.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "api/experiment_api.h"
#include "api/log_stream.h"
#include "api/rest_util.h"
#include "base/clock.h"
#include "base/ids.h"
#include "commands/scheduler/explain.h"
#include "events/envelope_util.h"

namespace cairn {

using nlohmann::json;

namespace {

// Determined's task state names, shared by commands, shells, notebooks and allocations.
std::string NtscState(const TaskView& task) {
  switch (task.state()) {
    case views::TASK_STATE_QUEUED:
      return "STATE_QUEUED";
    case views::TASK_STATE_ASSIGNED:
      return "STATE_STARTING";
    case views::TASK_STATE_RUNNING:
      return "STATE_RUNNING";
    case views::TASK_STATE_TERMINATING:
      return "STATE_TERMINATING";
    case views::TASK_STATE_TERMINATED:
      return "STATE_TERMINATED";
    default:
      return "STATE_UNSPECIFIED";
  }
}

json ConfigOf(const TaskView& task) {
  json config = json::parse(task.config_json(), nullptr, false);
  if (config.is_discarded() || !config.is_object()) config = json::object();
  // The effective resources are the recorded ones: the decider resolves the pool (compute or
  // aux) and the pool's default priority, and job queue updates change them later.
  json& resources = config["resources"];
  if (!resources.is_object()) resources = json::object();
  resources["slots"] = task.slots();
  resources["resource_pool"] = task.resource_pool();
  resources["priority"] = task.priority();
  return config;
}

// The reason of the latest decision about the task, as the projection recorded it.
std::string LatestReason(const TaskView& task) {
  if (!task.latest_reason().empty()) return task.latest_reason();
  return task.state() == views::TASK_STATE_QUEUED ? "queued; no scheduling decision about it yet"
                                                  : "";
}

// The v1Command shape, with Cairn's extra facts under "cairn".
json CommandJson(const TaskView& task) {
  auto user = Authenticator::FindUser(task.user());
  json command = {
      {"id", task.task_id()},       {"description", task.description()},
      {"state", NtscState(task)},   {"startTime", FormatRfc3339(task.submit_time_unix_micros())},
      {"username", task.user()},    {"userId", user.ok() ? user->id : 0},
      {"displayName", task.user()}, {"resourcePool", task.resource_pool()},
      {"jobId", task.job_id()},     {"workspaceId", 1}};
  if (task.state() == views::TASK_STATE_TERMINATED) command["exitStatus"] = task.exit_reason();
  json cairn = {{"slots", task.slots()},
                {"priority", task.priority()},
                {"agentId", task.agent_id()},
                {"allocationId", task.allocation_id()},
                {"placementReason", task.placement_reason()},
                {"latestReason", LatestReason(task)},
                {"killRequested", task.kill_requested()}};
  if (task.has_exit_code()) cairn["exitCode"] = task.exit_code();
  if (task.has_signal()) cairn["signal"] = task.signal();
  if (task.end_time_unix_micros() != 0) {
    cairn["endTime"] = FormatRfc3339(task.end_time_unix_micros());
  }
  command["cairn"] = cairn;
  return command;
}

// The agents and slots of the task's current allocation: one entry per agent (several for a
// gang), parts that already ended left out.
std::vector<std::pair<std::string, std::vector<int32_t>>> AllocationAgents(const TaskView& task) {
  std::vector<std::pair<std::string, std::vector<int32_t>>> agents;
  if (task.allocation_id().empty()) return agents;
  if (task.parts_size() == 0) {
    agents.emplace_back(task.agent_id(),
                        std::vector<int32_t>(task.slot_ids().begin(), task.slot_ids().end()));
    return agents;
  }
  for (const auto& part : task.parts()) {
    const auto& exited = task.parts_exited();
    if (std::find(exited.begin(), exited.end(), part.agent_id()) != exited.end()) continue;
    agents.emplace_back(part.agent_id(),
                        std::vector<int32_t>(part.slot_ids().begin(), part.slot_ids().end()));
  }
  return agents;
}

// The v1Task shape used by `det shell/notebook start` polling and `det task`, with Cairn's
// account of why the task is where it is.
json TaskJson(const TaskView& task) {
  json allocations = json::array();
  if (!task.allocation_id().empty()) {
    allocations.push_back({{"taskId", task.task_id()},
                           {"allocationId", task.allocation_id()},
                           {"state", NtscState(task)},
                           {"slots", task.slots()},
                           {"isReady", task.state() == views::TASK_STATE_RUNNING},
                           {"resourcePool", task.resource_pool()}});
  }
  json out = {{"taskId", task.task_id()},
              {"taskType", "TASK_TYPE_" + TaskTypeName(task.task_type())},
              {"startTime", FormatRfc3339(task.submit_time_unix_micros())},
              {"allocations", allocations},
              {"latestReason", LatestReason(task)}};
  if (task.end_time_unix_micros() != 0) {
    out["endTime"] = FormatRfc3339(task.end_time_unix_micros());
  }
  json parts = json::object();
  for (const auto& [agent_id, slots] : AllocationAgents(task)) parts[agent_id] = slots;
  json cairn = {
      {"state", views::TaskState_Name(task.state())},
      {"jobId", task.job_id()},
      {"resourcePool", task.resource_pool()},
      {"priority", task.priority()},
      {"slots", task.slots()},
      {"agentId", task.agent_id()},
      {"slotIds", json(std::vector<int32_t>(task.slot_ids().begin(), task.slot_ids().end()))},
      {"agentSlots", parts},
      {"backfilled", task.backfilled()},
      {"preemptionPending", task.preemption_pending()},
      {"releases", task.releases()},
      {"placementReason", task.placement_reason()},
      {"latestReason", LatestReason(task)},
      {"exitReason", task.exit_reason()},
      {"lastEventOffset", std::to_string(task.last_event_offset())}};
  if (task.preemption_pending()) {
    cairn["preemptionDeadline"] = FormatRfc3339(task.preemption_deadline_unix_micros());
  }
  if (task.has_exit_code()) cairn["exitCode"] = task.exit_code();
  if (task.has_signal()) cairn["signal"] = task.signal();
  out["cairn"] = cairn;
  return out;
}

std::string SlotType(const AgentView& agent) {
  for (const auto& device : agent.devices()) {
    if (device.type() == "cuda") return "TYPE_CUDA";
  }
  return "TYPE_CPU";
}

json AgentJson(const AgentView& agent) {
  std::map<int32_t, std::string> slot_owner;
  for (const auto& allocation : agent.allocations()) {
    for (int32_t slot : allocation.slot_ids()) slot_owner[slot] = allocation.allocation_id();
  }
  json slots = json::object();
  std::string type = SlotType(agent);
  std::string brand = agent.devices_size() > 0 ? agent.devices(0).brand() : "Artificial";
  for (int32_t i = 0; i < agent.slot_count(); ++i) {
    json device = {{"id", i}, {"brand", brand}, {"uuid", ""}, {"type", type}};
    if (i < agent.devices_size()) {
      device["brand"] = agent.devices(i).brand();
      device["uuid"] = agent.devices(i).uuid();
    }
    json slot = {{"id", std::to_string(i)},
                 {"enabled", agent.enabled()},
                 {"draining", agent.draining()},
                 {"device", device}};
    auto owner = slot_owner.find(i);
    if (owner != slot_owner.end()) {
      slot["container"] = {{"id", owner->second}, {"state", "STATE_RUNNING"}};
    }
    slots["/agents/" + agent.agent_id() + "/slots/" + std::to_string(i)] = slot;
  }
  int disabled = agent.enabled() ? 0 : agent.slot_count();
  int draining = agent.draining() ? agent.slot_count() : 0;
  json stats = {{"disabled", disabled}, {"draining", draining}, {"total", agent.slot_count()}};
  return {{"id", agent.agent_id()},
          {"registeredTime", FormatRfc3339(agent.registered_time_unix_micros())},
          {"slots", slots},
          {"resourcePools", json::array({agent.resource_pool()})},
          {"enabled", agent.enabled()},
          {"draining", agent.draining()},
          {"addresses", json::array({agent.hostname()})},
          {"version", agent.version()},
          {"slotStats", {{"typeStats", {{type, stats}}}, {"brandStats", {{brand, stats}}}}},
          {"cairn",
           {{"connected", agent.connected()},
            {"incarnation", agent.incarnation()},
            {"runningAllocations", agent.allocations_size()}}}};
}

// Determined's job types: a trial's job is its experiment.
std::string JobTypeName(events::TaskType type) {
  return type == events::TASK_TYPE_TRIAL ? "TYPE_EXPERIMENT" : "TYPE_" + TaskTypeName(type);
}

std::string JobStateName(views::JobState state) {
  switch (state) {
    case views::JOB_STATE_SCHEDULED:
      return "STATE_SCHEDULED";
    case views::JOB_STATE_SCHEDULED_BACKFILLED:
      return "STATE_SCHEDULED_BACKFILLED";
    default:
      return "STATE_QUEUED";
  }
}

// Determined's v1Job, with Cairn's queue facts under "cairn".
json JobJson(const JobView& job) {
  auto user = Authenticator::FindUser(job.user());
  json task_ids = json::array();
  for (const auto& task : job.tasks()) task_ids.push_back(task.task_id());
  return {{"jobId", job.job_id()},
          {"type", JobTypeName(job.task_type())},
          {"name", job.name()},
          {"entityId", job.task_id()},
          {"submissionTime", FormatRfc3339(job.submission_time_unix_micros())},
          {"username", job.user()},
          {"userId", user.ok() ? user->id : 0},
          {"resourcePool", job.resource_pool()},
          // Only experiments' trials give their slots back when asked (the seeds' rule).
          {"isPreemptible", job.task_type() == events::TASK_TYPE_TRIAL},
          {"priority", job.priority()},
          {"weight", job.weight()},
          {"requestedSlots", job.requested_slots()},
          {"allocatedSlots", job.allocated_slots()},
          {"workspaceId", 1},
          {"progress", 0},
          {"summary", {{"state", JobStateName(job.state())}, {"jobsAhead", job.jobs_ahead()}}},
          {"cairn",
           {{"queuePosition", std::to_string(job.queue_position())},
            {"maxSlots", job.max_slots()},
            {"taskIds", task_ids},
            {"lastQueueChange", job.queue_change_reason()}}}};
}

std::string SchedulerTypeEnum(events::SchedulerType type) {
  switch (type) {
    case events::SCHEDULER_TYPE_PRIORITY:
      return "SCHEDULER_TYPE_PRIORITY";
    case events::SCHEDULER_TYPE_ROUND_ROBIN:
      return "SCHEDULER_TYPE_ROUND_ROBIN";
    default:
      return "SCHEDULER_TYPE_FAIR_SHARE";  // a blank type means fair share
  }
}

std::string FittingPolicyEnum(events::FittingPolicy policy) {
  return policy == events::FITTING_POLICY_WORST ? "FITTING_POLICY_WORST" : "FITTING_POLICY_BEST";
}

}  // namespace

// Everything one request needs; the handlers below are its methods.
class RequestContext {
 public:
  RequestContext(const RestApiDeps& deps, const http::Request& request)
      : deps_(deps), request_(request) {}

  http::Response Dispatch();

 private:
  // Auth: a valid bearer token names the user; no token acts as "determined".
  Status Authenticate();
  commands::CommandMeta Meta(const std::string& actor) const {
    return {actor, correlation_id_, request_.Header("idempotency-key"), NowUnixMicros()};
  }
  std::string UserActor() const { return "user:" + user_.username; }
  Result<commands::Outcome> Execute(commands::Command command, const std::string& actor) {
    return deps_.loop->Execute(std::move(command), Meta(actor));
  }
  // Waits until the projections have applied `offset`.
  Status WaitFor(uint64_t offset);
  // Honors ?minOffset= / Cairn-Min-Offset on reads.
  Status WaitForRequestedOffset();
  Result<TaskView> LoadTask(const std::string& task_id);

  http::Response Info();
  http::Response MasterInfo();
  http::Response Login();
  http::Response Me();
  http::Response Workspaces();
  http::Response ResourcePools();
  http::Response LaunchCommand();
  http::Response ListCommands();
  http::Response GetCommand(const std::string& id);
  http::Response KillTask(const std::string& id, bool as_command);
  http::Response ListTasks();
  http::Response GetTask(const std::string& id);
  http::Response TaskLogs(const std::string& id);
  http::Response PostTaskLogs();
  http::Response ListAgents();
  http::Response GetAgent(const std::string& id);
  http::Response EnableAgent(const std::string& id, bool enable);
  http::Response RegisterAgent(const std::string& id);
  http::Response AgentHeartbeat(const std::string& id);
  http::Response AllocationReport(const std::string& allocation_id, bool started);
  http::Response JobQueue(bool wrapped);
  http::Response JobQueueStats();
  http::Response UpdateJobQueue();
  http::Response SetPriority(const std::string& kind, const std::string& id);
  http::Response EventTail();

  const RestApiDeps& deps_;
  const http::Request& request_;
  User user_{2, "determined", false};
  std::string correlation_id_ = NewUuid();
};

http::Response RestApi::Handle(const http::Request& request) {
  RequestContext context(deps_, request);
  return context.Dispatch();
}

Status RequestContext::Authenticate() {
  std::string header = request_.Header("authorization");
  if (header.empty()) return Status::Ok();
  const std::string bearer = "Bearer ";
  if (header.rfind(bearer, 0) != 0) {
    return Status::Unauthenticated("Authorization must be 'Bearer <token>'");
  }
  CAIRN_ASSIGN_OR_RETURN(user_, deps_.auth->Verify(header.substr(bearer.size())));
  return Status::Ok();
}

Status RequestContext::WaitFor(uint64_t offset) {
  return deps_.projections->WaitForOffset(offset, std::chrono::seconds(10));
}

Status RequestContext::WaitForRequestedOffset() {
  std::string text = request_.QueryParam("minOffset");
  if (text.empty()) text = request_.Header("cairn-min-offset");
  if (text.empty()) return Status::Ok();
  if (text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("minOffset must be a non-negative integer");
  }
  return WaitFor(std::stoull(text));
}

Result<TaskView> RequestContext::LoadTask(const std::string& task_id) {
  CAIRN_ASSIGN_OR_RETURN(auto task, deps_.projections->GetTask(task_id));
  if (!task) return Status::NotFound("task " + task_id + " not found");
  return *task;
}

http::Response RequestContext::Dispatch() {
  const auto parts = Segments(request_.target);
  const std::string& method = request_.method;
  auto is = [&](std::initializer_list<const char*> route) { return MatchesRoute(parts, route); };
  auto method_not_allowed = [&] { return MethodNotAllowed(request_); };

  if (is({"info"})) return method == "GET" ? Info() : method_not_allowed();
  if (is({"api", "v1", "auth", "login"})) return method == "POST" ? Login() : method_not_allowed();

  // Agents speak the protocol of agent/PROTOCOL.md; they carry no user token.
  if (is({"api", "v1", "agents", "*", "register"})) {
    return method == "POST" ? RegisterAgent(parts[3]) : method_not_allowed();
  }
  if (is({"api", "v1", "agents", "*", "heartbeat"})) {
    return method == "POST" ? AgentHeartbeat(parts[3]) : method_not_allowed();
  }
  if (is({"api", "v1", "allocations", "*", "started"}) ||
      is({"api", "v1", "allocations", "*", "exited"})) {
    return method == "POST" ? AllocationReport(parts[3], parts[4] == "started")
                            : method_not_allowed();
  }
  if (is({"api", "v1", "task", "logs"}))
    return method == "POST" ? PostTaskLogs() : method_not_allowed();
  if (auto harness = HandleHarnessRequest(deps_, request_, parts)) return std::move(*harness);

  if (Status auth = Authenticate(); !auth.ok()) return Error(auth);
  if (method == "GET") {
    if (Status waited = WaitForRequestedOffset(); !waited.ok()) return Error(waited);
  }

  if (is({"api", "v1", "auth", "logout"})) return Ok(json::object());
  if (is({"api", "v1", "me"})) return method == "GET" ? Me() : method_not_allowed();
  if (is({"api", "v1", "master"})) return method == "GET" ? MasterInfo() : method_not_allowed();
  if (is({"api", "v1", "workspaces"})) return method == "GET" ? Workspaces() : method_not_allowed();
  if (is({"api", "v1", "resource-pools"})) {
    return method == "GET" ? ResourcePools() : method_not_allowed();
  }
  if (is({"api", "v1", "commands"})) {
    if (method == "POST") return LaunchCommand();
    if (method == "GET") return ListCommands();
    return method_not_allowed();
  }
  if (is({"api", "v1", "commands", "*"})) {
    return method == "GET" ? GetCommand(parts[3]) : method_not_allowed();
  }
  if (is({"api", "v1", "commands", "*", "kill"}) || is({"api", "v1", "tasks", "*", "kill"})) {
    return method == "POST" ? KillTask(parts[3], parts[2] == "commands") : method_not_allowed();
  }
  if (is({"api", "v1", "tasks"})) return method == "GET" ? ListTasks() : method_not_allowed();
  if (is({"api", "v1", "tasks", "*"}))
    return method == "GET" ? GetTask(parts[3]) : method_not_allowed();
  if (is({"api", "v1", "tasks", "*", "logs"})) {
    return method == "GET" ? TaskLogs(parts[3]) : method_not_allowed();
  }
  if (is({"api", "v1", "agents"})) return method == "GET" ? ListAgents() : method_not_allowed();
  if (is({"api", "v1", "agents", "*"})) {
    return method == "GET" ? GetAgent(parts[3]) : method_not_allowed();
  }
  if (is({"api", "v1", "agents", "*", "enable"}) || is({"api", "v1", "agents", "*", "disable"})) {
    return method == "POST" ? EnableAgent(parts[3], parts[4] == "enable") : method_not_allowed();
  }
  if (is({"api", "v1", "job-queues-v2"})) {
    return method == "GET" ? JobQueue(/*wrapped=*/true) : method_not_allowed();
  }
  if (is({"api", "v1", "job-queues"})) {
    if (method == "POST") return UpdateJobQueue();
    if (method == "GET") return JobQueue(/*wrapped=*/false);
    return method_not_allowed();
  }
  if (is({"api", "v1", "job-queues", "stats"})) {
    return method == "GET" ? JobQueueStats() : method_not_allowed();
  }
  if (is({"api", "v1", "*", "*", "set_priority"}) &&
      (parts[2] == "commands" || parts[2] == "notebooks" || parts[2] == "shells" ||
       parts[2] == "tensorboards")) {
    return method == "POST" ? SetPriority(parts[2], parts[3]) : method_not_allowed();
  }
  if (is({"api", "v1", "events"})) return method == "GET" ? EventTail() : method_not_allowed();
  if (auto handled =
          HandleExperimentRequest(deps_, request_, parts, user_.username, Meta(UserActor()))) {
    return std::move(*handled);
  }

  // Determined endpoints whose features arrive with later work answer clearly, not with a 404.
  if (parts.size() >= 3 && parts[0] == "api" && parts[1] == "v1") {
    static const std::map<std::string, std::string> kLater = {
        {"models", "the model registry"},
        {"shells", "shells"},
        {"notebooks", "notebooks"},
        {"tensorboards", "TensorBoards"},
        {"checkpoints", "checkpoints outside their experiment"}};
    auto later = kLater.find(parts[2]);
    if (later != kLater.end()) {
      return Error(
          Status::NotSupported(later->second + " are not supported by this Cairn master yet"));
    }
  }
  return Error(Status::NotFound("no route for " + method + " " + request_.path));
}

http::Response RequestContext::Info() {
  return Ok({{"version", kDeterminedApiVersion},
             {"master_id", deps_.master_id},
             {"cluster_id", deps_.config->cluster_name},
             {"cluster_name", deps_.config->cluster_name},
             {"telemetry", {{"enabled", false}}},
             {"sso_providers", json::array()},
             {"rbac_enabled", false},
             {"cairn_version", kCairnVersion}});
}

http::Response RequestContext::MasterInfo() {
  return Ok({{"version", kDeterminedApiVersion},
             {"masterId", deps_.master_id},
             {"clusterId", deps_.config->cluster_name},
             {"clusterName", deps_.config->cluster_name},
             {"strictJobQueueControl", false},
             {"hasCustomLogo", false},
             {"telemetryEnabled", false},
             {"rbacEnabled", false},
             {"product", "Cairn"},
             {"cairn",
              {{"version", kCairnVersion},
               {"log", deps_.log->Describe()},
               {"writerEpoch", deps_.loop->writer_epoch()},
               {"appliedOffset", std::to_string(deps_.projections->AppliedOffset())}}}});
}

http::Response RequestContext::Login() {
  auto body = ParseBody(request_);
  if (!body.ok()) return Error(body.status());
  auto username = GetString(*body, "username", "username", true);
  if (!username.ok()) return Error(username.status());
  auto password = GetString(*body, "password", "password", false);
  if (!password.ok()) return Error(password.status());
  bool is_hashed = Present(*body, "isHashed") && body->at("isHashed").is_boolean() &&
                   body->at("isHashed").get<bool>();
  auto token = deps_.auth->Login(*username, *password, is_hashed);
  if (!token.ok()) return Error(token.status());
  auto user = Authenticator::FindUser(*username);
  return Ok({{"token", *token},
             {"user",
              {{"id", user->id},
               {"username", user->username},
               {"admin", user->admin},
               {"active", true},
               {"displayName", user->username}}}});
}

http::Response RequestContext::Me() {
  return Ok({{"user",
              {{"id", user_.id},
               {"username", user_.username},
               {"admin", user_.admin},
               {"active", true},
               {"displayName", user_.username}}}});
}

http::Response RequestContext::Workspaces() {
  json workspace = {{"id", 1},
                    {"name", "Uncategorized"},
                    {"archived", false},
                    {"errorMessage", ""},
                    {"immutable", true},
                    {"numExperiments", 0},
                    {"numProjects", 1},
                    {"pinned", false},
                    {"state", "WORKSPACE_STATE_UNSPECIFIED"},
                    {"userId", 1},
                    {"username", "admin"}};
  return Ok(
      {{"workspaces", json::array({workspace})}, {"pagination", {{"endIndex", 1}, {"total", 1}}}});
}

http::Response RequestContext::ResourcePools() {
  // The pools are the recorded configuration (ResourcePoolsConfigured), counted over the
  // decision state's agents, so the answer is what the scheduler works with right now.
  struct PoolEntry {
    events::ResourcePoolConfig config;
    bool default_compute = false, default_aux = false;
    int agents = 0, slots = 0, used = 0, aux_running = 0;
  };
  std::vector<PoolEntry> pools;
  deps_.loop->Read([&](const commands::DecisionState& state) {
    for (const auto& config : state.pools_config.pools()) {
      PoolEntry entry;
      entry.config = config;
      entry.default_compute = config.pool_name() == state.pools_config.default_compute_pool();
      entry.default_aux = config.pool_name() == state.pools_config.default_aux_pool();
      for (const auto& [agent_id, agent] : state.agents) {
        if (agent.resource_pool != config.pool_name() || !agent.connected) continue;
        entry.agents++;
        entry.slots += agent.slot_count;
        entry.used += static_cast<int>(agent.used_slots.size());
        entry.aux_running += agent.zero_slot_containers;
      }
      pools.push_back(std::move(entry));
    }
  });
  // Slot types come from the devices agents reported, which only the agents projection keeps.
  std::set<std::string> cuda_pools;
  if (auto agents = deps_.projections->ListAgents(); agents.ok()) {
    for (const auto& agent : *agents) {
      if (SlotType(agent) == "TYPE_CUDA") cuda_pools.insert(agent.resource_pool());
    }
  }
  json list = json::array();
  for (const auto& pool : pools) {
    const auto& scheduler = pool.config.scheduler();
    const bool priority = scheduler.type() == events::SCHEDULER_TYPE_PRIORITY;
    json details = json::object();
    if (priority) {
      details["priorityScheduler"] = {{"preemption", scheduler.preemption()},
                                      {"defaultPriority", scheduler.default_priority()}};
    }
    const int per_agent = pool.config.max_aux_containers_per_agent();
    list.push_back(
        {{"name", pool.config.pool_name()},
         {"description", pool.config.description()},
         {"type", "RESOURCE_POOL_TYPE_STATIC"},
         {"defaultComputePool", pool.default_compute},
         {"defaultAuxPool", pool.default_aux},
         // Determined calls a pool preemptible when its scheduler may preempt.
         {"preemptible", priority && scheduler.preemption()},
         {"numAgents", pool.agents},
         {"slotsAvailable", pool.slots},
         {"slotsUsed", pool.used},
         {"auxContainerCapacity", pool.agents * per_agent},
         {"auxContainersRunning", pool.aux_running},
         {"auxContainerCapacityPerAgent", per_agent},
         {"minAgents", 0},
         {"maxAgents", 0},
         {"slotType", cuda_pools.count(pool.config.pool_name()) ? "TYPE_CUDA" : "TYPE_CPU"},
         {"schedulerType", SchedulerTypeEnum(scheduler.type())},
         {"schedulerFittingPolicy", FittingPolicyEnum(scheduler.fitting_policy())},
         {"location", "on-prem"},
         {"imageId", ""},
         {"instanceType", ""},
         {"masterUrl", ""},
         {"masterCertName", ""},
         {"startupScript", ""},
         {"containerStartupScript", ""},
         {"agentDockerNetwork", ""},
         {"agentDockerRuntime", ""},
         {"agentDockerImage", ""},
         {"agentFluentImage", ""},
         {"maxIdleAgentPeriod", 0},
         {"maxAgentStartingPeriod", 0},
         {"details", details},
         {"resourceManagerMetadata", json::object()},
         {"clusterName", deps_.config->cluster_name}});
  }
  return Ok({{"resourcePools", list},
             {"pagination", {{"endIndex", list.size()}, {"total", list.size()}}}});
}

http::Response RequestContext::LaunchCommand() {
  auto body = ParseBody(request_);
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
  submit.spec.set_user(user_.username);
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

  auto outcome = Execute(std::move(submit), UserActor());
  if (!outcome.ok()) {
    // "Can never fit this pool" is a property of the request, as Determined's "slots requested
    // exceeds cluster capacity" is: a 400 with the decider's words.
    if (outcome.status().code() == StatusCode::kFailedPrecondition) {
      return Error(Status::InvalidArgument(outcome.status().message()));
    }
    return Error(outcome.status());
  }
  if (Status waited = WaitFor(outcome->offset); !waited.ok()) return Error(waited);
  auto task = LoadTask(outcome->entity_id);
  if (!task.ok()) return Error(task.status());
  return Ok(
      {{"command", CommandJson(*task)}, {"config", ConfigOf(*task)}, {"warnings", json::array()}},
      outcome->offset);
}

http::Response RequestContext::ListCommands() {
  auto tasks = deps_.projections->ListTasks();
  if (!tasks.ok()) return Error(tasks.status());
  auto users = request_.QueryParams("users");
  json list = json::array();
  for (const auto& task : *tasks) {
    if (task.task_type() != events::TASK_TYPE_COMMAND) continue;
    if (!users.empty() && std::find(users.begin(), users.end(), task.user()) == users.end())
      continue;
    list.push_back(CommandJson(task));
  }
  return Ok({{"commands", list}});
}

http::Response RequestContext::GetCommand(const std::string& id) {
  auto task = LoadTask(id);
  if (!task.ok()) return Error(task.status());
  if (task->task_type() != events::TASK_TYPE_COMMAND) {
    return Error(Status::NotFound("command " + id + " not found"));
  }
  return Ok({{"command", CommandJson(*task)}, {"config", ConfigOf(*task)}});
}

http::Response RequestContext::KillTask(const std::string& id, bool as_command) {
  auto outcome = Execute(commands::KillTask{id, "killed by " + user_.username}, UserActor());
  if (!outcome.ok()) return Error(outcome.status());
  // The kill is durable: answer 200 even when the projections are slow to show it.
  if (!as_command || !WaitFor(outcome->offset).ok()) return Ok(json::object(), outcome->offset);
  auto task = LoadTask(id);
  if (!task.ok()) return Ok(json::object(), outcome->offset);
  return Ok({{"command", CommandJson(*task)}}, outcome->offset);
}

http::Response RequestContext::ListTasks() {
  auto tasks = deps_.projections->ListTasks();
  if (!tasks.ok()) return Error(tasks.status());
  json summaries = json::object();
  for (const auto& task : *tasks) {
    if (task.allocation_id().empty() || task.state() == views::TASK_STATE_TERMINATED) continue;
    json agent_devices = json::object();
    for (const auto& [agent_id, slots] : AllocationAgents(task)) {
      json devices = json::array();
      for (int32_t slot : slots) devices.push_back({{"id", slot}, {"type", "TYPE_CPU"}});
      agent_devices[agent_id] = devices;
    }
    summaries[task.allocation_id()] = {
        {"taskId", task.task_id()},
        {"allocationId", task.allocation_id()},
        {"name", task.description()},
        {"slotsNeeded", task.slots()},
        {"registeredTime", FormatRfc3339(task.submit_time_unix_micros())},
        {"resourcePool", task.resource_pool()},
        {"priority", task.priority()},
        {"resources",
         json::array({{{"containerId", task.allocation_id()}, {"agentDevices", agent_devices}}})}};
  }
  return Ok({{"allocationIdToSummary", summaries}});
}

http::Response RequestContext::GetTask(const std::string& id) {
  auto task = LoadTask(id);
  if (!task.ok()) return Error(task.status());
  json out = TaskJson(*task);
  if (task->state() == views::TASK_STATE_TERMINATED) return Ok({{"task", out}});
  // A live task is explained from the decision state as it is now: what it waits for, where
  // it runs and why, and the jobs ahead of it.
  Result<commands::TaskExplanation> explanation = Status::NotFound("task " + id + " not found");
  deps_.loop->Read([&](const commands::DecisionState& state) {
    explanation = commands::ExplainTask(state, id, NowUnixMicros());
  });
  if (explanation.ok()) {
    json ahead = json::array();
    for (const auto& job : explanation->jobs_ahead) {
      ahead.push_back({{"jobId", job.job_id},
                       {"priority", job.priority},
                       {"slots", job.slots},
                       {"running", job.running}});
    }
    out["explanation"] = explanation->reason;
    out["jobsAhead"] = explanation->jobs_ahead.size();
    out["cairn"]["jobsAhead"] = ahead;
  }
  return Ok({{"task", out}});
}

http::Response RequestContext::TaskLogs(const std::string& id) {
  auto task = LoadTask(id);
  if (!task.ok()) return Error(task.status());
  const bool follow = request_.QueryParam("follow") == "true";
  Projections* projections = deps_.projections;
  return StreamTaskLogs(deps_, follow, [projections, id, follow] {
    LogSources sources{{id}, true};
    if (follow) {
      auto current = projections->GetTask(id);
      sources.ended =
          !current.ok() || !*current || (*current)->state() == views::TASK_STATE_TERMINATED;
    }
    return sources;
  });
}

http::Response RequestContext::PostTaskLogs() {
  auto body = ParseBody(request_);
  if (!body.ok()) return Error(body.status());
  if (!Present(*body, "logs") || !body->at("logs").is_array()) {
    return Error(Status::InvalidArgument("logs must be a list"));
  }
  std::vector<TaskLogLine> lines;
  for (const auto& entry : body->at("logs")) {
    if (!entry.is_object())
      return Error(Status::InvalidArgument("each log entry must be an object"));
    TaskLogLine line;
    auto task_id = GetString(entry, "taskId", "logs[].taskId", true);
    auto allocation_id = GetString(entry, "allocationId", "logs[].allocationId", true);
    auto agent_id = GetString(entry, "agentId", "logs[].agentId", false);
    auto stdtype = GetString(entry, "stdtype", "logs[].stdtype", false);
    auto text = GetString(entry, "log", "logs[].log", true);
    auto timestamp = GetString(entry, "timestamp", "logs[].timestamp", false);
    auto seq = GetInt(entry, "seq", "logs[].seq");
    for (const Status* s :
         {&task_id.status(), &allocation_id.status(), &agent_id.status(), &stdtype.status(),
          &text.status(), &timestamp.status(), &seq.status()}) {
      if (!s->ok()) return Error(*s);
    }
    if (!*seq || **seq < 0)
      return Error(Status::InvalidArgument("logs[].seq must be a non-negative integer"));
    line.task_id = *task_id;
    line.allocation_id = *allocation_id;
    line.agent_id = *agent_id;
    line.stdtype = stdtype->empty() ? "stdout" : *stdtype;
    line.text = *text;
    line.seq = **seq;
    line.timestamp_unix_micros = NowUnixMicros();
    if (!timestamp->empty()) {
      auto parsed = ParseTimeToUnixMicros(*timestamp);
      if (!parsed.ok()) return Error(parsed.status());
      line.timestamp_unix_micros = *parsed;
    }
    lines.push_back(std::move(line));
  }
  bool known = true;
  deps_.loop->Read([&](const commands::DecisionState& state) {
    for (const auto& line : lines) {
      if (!state.FindTask(line.task_id)) known = false;
    }
  });
  if (!known) return Error(Status::NotFound("logs for an unknown task"));
  if (Status stored = deps_.task_logs->Append(lines); !stored.ok()) return Error(stored);
  return Ok(json::object());
}

http::Response RequestContext::ListAgents() {
  auto agents = deps_.projections->ListAgents();
  if (!agents.ok()) return Error(agents.status());
  json list = json::array();
  for (const auto& agent : *agents) list.push_back(AgentJson(agent));
  return Ok(
      {{"agents", list}, {"pagination", {{"endIndex", list.size()}, {"total", list.size()}}}});
}

http::Response RequestContext::GetAgent(const std::string& id) {
  auto agents = deps_.projections->ListAgents();
  if (!agents.ok()) return Error(agents.status());
  for (const auto& agent : *agents) {
    if (agent.agent_id() == id) return Ok({{"agent", AgentJson(agent)}});
  }
  return Error(Status::NotFound("agent " + id + " not found"));
}

http::Response RequestContext::EnableAgent(const std::string& id, bool enable) {
  bool drain = false;
  if (!enable && !request_.body.empty()) {
    auto body = ParseBody(request_);
    if (!body.ok()) return Error(body.status());
    if (Present(*body, "drain")) {
      if (!body->at("drain").is_boolean())
        return Error(Status::InvalidArgument("drain must be a boolean"));
      drain = body->at("drain").get<bool>();
    }
  }
  commands::Command command = enable ? commands::Command(commands::EnableAgent{id})
                                     : commands::Command(commands::DisableAgent{id, drain});
  auto outcome = Execute(std::move(command), UserActor());
  if (!outcome.ok()) return Error(outcome.status());
  if (!WaitFor(outcome->offset).ok()) return Ok(json::object(), outcome->offset);
  return GetAgent(id);
}

http::Response RequestContext::RegisterAgent(const std::string& id) {
  auto body = ParseBody(request_);
  if (!body.ok()) return Error(body.status());
  events::AgentRegistered registration;
  registration.set_agent_id(id);
  auto incarnation = GetString(*body, "incarnation", "incarnation", true);
  auto pool = GetString(*body, "resourcePool", "resourcePool", false);
  auto hostname = GetString(*body, "hostname", "hostname", false);
  auto version = GetString(*body, "version", "version", false);
  auto slots = GetInt32(*body, "slots", "slots");
  for (const Status* s : {&incarnation.status(), &pool.status(), &hostname.status(),
                          &version.status(), &slots.status()}) {
    if (!s->ok()) return Error(*s);
  }
  if (!*slots) return Error(Status::InvalidArgument("slots is required"));
  registration.set_incarnation(*incarnation);
  registration.set_resource_pool(*pool);
  registration.set_hostname(*hostname);
  registration.set_version(*version);
  registration.set_slot_count(static_cast<int32_t>(**slots));
  if (Present(*body, "devices")) {
    if (!body->at("devices").is_array())
      return Error(Status::InvalidArgument("devices must be a list"));
    for (const auto& entry : body->at("devices")) {
      if (!entry.is_object())
        return Error(Status::InvalidArgument("each device must be an object"));
      auto* device = registration.add_devices();
      auto device_id = GetInt32(entry, "id", "devices[].id");
      auto brand = GetString(entry, "brand", "devices[].brand", false);
      auto uuid = GetString(entry, "uuid", "devices[].uuid", false);
      auto type = GetString(entry, "type", "devices[].type", false);
      for (const Status* s :
           {&device_id.status(), &brand.status(), &uuid.status(), &type.status()}) {
        if (!s->ok()) return Error(*s);
      }
      device->set_id(static_cast<int32_t>(device_id->value_or(0)));
      device->set_brand(*brand);
      device->set_uuid(*uuid);
      device->set_type(type->empty() ? "cpu" : *type);
    }
  }
  auto outcome = Execute(commands::RegisterAgent{registration}, "agent:" + id);
  if (!outcome.ok()) return Error(outcome.status());
  deps_.heartbeats->Record(id);
  // A new incarnation reads its orders from its own AgentRegistered on, also when this answer is
  // for a retried registration that changed nothing.
  uint64_t resume_from = outcome->offset;
  deps_.loop->Read([&](const commands::DecisionState& state) {
    const auto* agent = state.FindAgent(id);
    if (agent && agent->incarnation == registration.incarnation()) {
      resume_from = agent->registered_offset;
    }
  });
  json placements = {{"transport", "http"}};
  if (deps_.config->log.backend == "kafka") {
    placements = {{"transport", "kafka"},
                  {"brokers", deps_.config->log.brokers},
                  {"topicPrefix", deps_.config->log.topic_prefix}};
  }
  return Ok({{"offset", std::to_string(outcome->offset)},
             {"resumeFrom", std::to_string(resume_from)},
             {"placements", placements}},
            outcome->offset);
}

http::Response RequestContext::AgentHeartbeat(const std::string& id) {
  auto body = ParseBody(request_, /*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  auto incarnation = GetString(*body, "incarnation", "incarnation", true);
  if (!incarnation.ok()) return Error(incarnation.status());
  bool connected = false;
  deps_.loop->Read([&](const commands::DecisionState& state) {
    const auto* agent = state.FindAgent(id);
    connected = agent && agent->connected && agent->incarnation == *incarnation;
  });
  if (!connected) {
    return Error(Status::FailedPrecondition(
        "agent " + id + " is not registered with this incarnation; register again"));
  }
  deps_.heartbeats->Record(id);
  return Ok(json::object());
}

http::Response RequestContext::AllocationReport(const std::string& allocation_id, bool started) {
  auto body = ParseBody(request_);
  if (!body.ok()) return Error(body.status());
  auto task_id = GetString(*body, "taskId", "taskId", false);
  auto agent_id = GetString(*body, "agentId", "agentId", false);
  if (!task_id.ok()) return Error(task_id.status());
  if (!agent_id.ok()) return Error(agent_id.status());
  commands::Command command;
  if (started) {
    auto pid = GetInt32(*body, "pid", "pid");
    if (!pid.ok()) return Error(pid.status());
    command = commands::ReportTaskStarted{allocation_id, *task_id, *agent_id,
                                          static_cast<int32_t>(pid->value_or(0))};
  } else {
    auto exit_code = GetInt32(*body, "exitCode", "exitCode");
    auto signal = GetInt32(*body, "signal", "signal");
    auto reason = GetString(*body, "reason", "reason", false);
    for (const Status* s : {&exit_code.status(), &signal.status(), &reason.status()}) {
      if (!s->ok()) return Error(*s);
    }
    commands::ReportTaskExited exited{allocation_id, *task_id,     *agent_id,
                                      std::nullopt,  std::nullopt, *reason};
    if (*exit_code) exited.exit_code = static_cast<int32_t>(**exit_code);
    if (*signal) exited.signal = static_cast<int32_t>(**signal);
    if (!exited.exit_code && !exited.signal) {
      return Error(Status::InvalidArgument("an exit report needs exitCode or signal"));
    }
    command = exited;
  }
  auto outcome = Execute(std::move(command), "agent:" + *agent_id);
  if (!outcome.ok()) return Error(outcome.status());
  return Ok({{"offset", std::to_string(outcome->offset)}}, outcome->offset);
}

http::Response RequestContext::JobQueue(bool wrapped) {
  auto paging = ReadPaging(request_);
  if (!paging.ok()) return Error(paging.status());
  auto jobs = deps_.projections->JobQueue(request_.QueryParam("resourcePool"));
  if (!jobs.ok()) return Error(jobs.status());
  std::set<std::string> states;
  for (const auto& state : request_.QueryParams("states")) states.insert(state);
  if (!states.empty()) {
    std::erase_if(*jobs,
                  [&](const JobView& job) { return !states.count(JobStateName(job.state())); });
  }
  if (request_.QueryParam("orderBy") == "ORDER_BY_DESC") std::reverse(jobs->begin(), jobs->end());
  auto [page, pagination] = Page(std::move(*jobs), *paging);
  json list = json::array();
  for (const auto& job : page) {
    list.push_back(wrapped ? json{{"full", JobJson(job)}} : JobJson(job));
  }
  return Ok({{"jobs", list}, {"pagination", pagination}});
}

http::Response RequestContext::JobQueueStats() {
  std::vector<std::string> pool_names;
  deps_.loop->Read([&](const commands::DecisionState& state) {
    for (const auto& pool : state.pools_config.pools()) pool_names.push_back(pool.pool_name());
  });
  auto jobs = deps_.projections->JobQueue("");
  if (!jobs.ok()) return Error(jobs.status());
  std::map<std::string, std::pair<int, int>> counts;  // pool -> (queued, scheduled)
  for (const auto& job : *jobs) {
    auto& [queued, scheduled] = counts[job.resource_pool()];
    (job.state() == views::JOB_STATE_QUEUED ? queued : scheduled)++;
  }
  for (const auto& [pool, unused] : counts) {
    if (std::find(pool_names.begin(), pool_names.end(), pool) == pool_names.end()) {
      pool_names.push_back(pool);  // a pool the configuration no longer has, still with jobs
    }
  }
  auto wanted = request_.QueryParams("resourcePools");
  json results = json::array();
  for (const auto& pool : pool_names) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), pool) == wanted.end()) continue;
    auto [queued, scheduled] = counts[pool];
    results.push_back({{"resourcePool", pool},
                       {"stats", {{"queuedCount", queued}, {"scheduledCount", scheduled}}},
                       {"aggregates", json::array()}});
  }
  return Ok({{"results", results}});
}

namespace {

// Reads one entry of a job queue update; type errors are the caller's.
Result<commands::UpdateJob> ParseJobUpdate(const json& entry, const std::string& path) {
  if (!entry.is_object()) return Status::InvalidArgument(path + " must be an object");
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(
      entry, path,
      {"jobId", "priority", "weight", "resourcePool", "aheadOf", "behindOf", "maxSlots"}));
  commands::UpdateJob update;
  CAIRN_ASSIGN_OR_RETURN(update.job_id, GetString(entry, "jobId", path + ".jobId", true));
  if (update.job_id.empty()) return Status::InvalidArgument(path + ".jobId must not be empty");
  CAIRN_ASSIGN_OR_RETURN(update.priority, GetInt32(entry, "priority", path + ".priority"));
  CAIRN_ASSIGN_OR_RETURN(update.max_slots, GetInt32(entry, "maxSlots", path + ".maxSlots"));
  if (Present(entry, "weight")) {
    if (!entry.at("weight").is_number()) {
      return Status::InvalidArgument(path + ".weight must be a number");
    }
    update.weight = entry.at("weight").get<double>();
  }
  CAIRN_ASSIGN_OR_RETURN(std::string pool,
                         GetString(entry, "resourcePool", path + ".resourcePool", false));
  if (!pool.empty()) update.resource_pool = pool;
  CAIRN_ASSIGN_OR_RETURN(update.ahead_of, GetString(entry, "aheadOf", path + ".aheadOf", false));
  CAIRN_ASSIGN_OR_RETURN(update.behind_of, GetString(entry, "behindOf", path + ".behindOf", false));
  return update;
}

// Determined's way of reporting several failed updates at once; all NotFound stays a 404, any
// other mix is the request's fault (400).
Status JobUpdateErrors(const std::vector<Status>& errors) {
  std::string message = "encountered the following errors: ";
  bool all_not_found = true;
  for (size_t i = 0; i < errors.size(); ++i) {
    message += (i ? "; " : "") + errors[i].message();
    all_not_found &= errors[i].code() == StatusCode::kNotFound;
  }
  return all_not_found ? Status::NotFound(message) : Status::InvalidArgument(message);
}

}  // namespace

http::Response RequestContext::UpdateJobQueue() {
  auto body = ParseBody(request_);
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"updates"}); !known.ok()) return Error(known);
  if (!Present(*body, "updates") || !body->at("updates").is_array()) {
    return Error(Status::InvalidArgument("updates must be a list"));
  }
  // All or nothing: every update is read and decided against the current state before any is
  // executed, so a body with one bad update changes nothing.
  std::vector<commands::UpdateJob> updates;
  std::vector<Status> errors;
  const json& entries = body->at("updates");
  for (size_t i = 0; i < entries.size(); ++i) {
    auto update = ParseJobUpdate(entries[i], "updates[" + std::to_string(i) + "]");
    if (update.ok()) {
      updates.push_back(std::move(*update));
    } else {
      errors.push_back(update.status());
    }
  }
  if (!errors.empty()) return Error(JobUpdateErrors(errors));
  // One command per update; an idempotency key is made per update so that the updates of one
  // request are not taken for retries of each other.
  auto meta_for = [&](size_t i) {
    commands::CommandMeta meta = Meta(UserActor());
    if (!meta.idempotency_key.empty()) meta.idempotency_key += "#" + std::to_string(i);
    return meta;
  };
  deps_.loop->Read([&](const commands::DecisionState& state) {
    for (size_t i = 0; i < updates.size(); ++i) {
      auto decision = commands::Decide(state, updates[i], meta_for(i));
      if (!decision.ok()) errors.push_back(decision.status());
    }
  });
  if (!errors.empty()) return Error(JobUpdateErrors(errors));
  std::optional<uint64_t> offset;
  for (size_t i = 0; i < updates.size(); ++i) {
    auto outcome = deps_.loop->Execute(updates[i], meta_for(i));
    if (!outcome.ok()) {
      // The state moved between the check and this update (another writer, or an earlier
      // update of this request); say how far the request got.
      Status failed = outcome.status();
      return Error(Status(failed.code(), "update " + std::to_string(i) + " of " +
                                             std::to_string(updates.size()) + " failed after " +
                                             std::to_string(i) + " applied: " + failed.message()));
    }
    offset = std::max(offset.value_or(0), outcome->offset);
  }
  // Answer once the queue shows the change, so the caller's next read sees it. The updates are
  // durable either way: a slow projection only delays what reads show.
  if (offset) static_cast<void>(WaitFor(*offset));
  return Ok(json::object(), offset);
}

http::Response RequestContext::SetPriority(const std::string& kind, const std::string& id) {
  static const std::map<std::string, std::pair<std::string, events::TaskType>> kKinds = {
      {"commands", {"command", events::TASK_TYPE_COMMAND}},
      {"notebooks", {"notebook", events::TASK_TYPE_NOTEBOOK}},
      {"shells", {"shell", events::TASK_TYPE_SHELL}},
      {"tensorboards", {"tensorboard", events::TASK_TYPE_TENSORBOARD}}};
  const auto& [singular, type] = kKinds.at(kind);
  auto body = ParseBody(request_);
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
  auto task = LoadTask(id);
  if (!task.ok() || task->task_type() != type) {
    return Error(Status::NotFound(singular + " " + id + " not found"));
  }
  commands::UpdateJob update;
  update.job_id = task->job_id();
  update.priority = **priority;
  auto outcome = Execute(std::move(update), UserActor());
  if (!outcome.ok()) return Error(outcome.status());
  if (!WaitFor(outcome->offset).ok()) return Ok(json::object(), outcome->offset);
  auto updated = LoadTask(id);
  if (!updated.ok()) return Ok(json::object(), outcome->offset);
  return Ok({{singular, CommandJson(*updated)}}, outcome->offset);
}

http::Response RequestContext::EventTail() {
  uint64_t from = 0;
  std::string from_text = request_.QueryParam("from");
  if (!from_text.empty()) {
    if (from_text.size() > 19 || from_text.find_first_not_of("0123456789") != std::string::npos) {
      return Error(Status::InvalidArgument("from must be a non-negative integer offset"));
    }
    from = std::stoull(from_text);
  }
  bool follow = request_.QueryParam("follow") == "true";
  std::string agent = request_.QueryParam("agent");
  std::set<std::string> types;
  for (const auto& list : request_.QueryParams("type")) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      if (comma > start) types.insert(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  auto end = deps_.log->EndOffset();
  if (!end.ok()) return Error(end.status());
  if (from > *end) {
    return Error(Status::InvalidArgument("from " + std::to_string(from) +
                                         " is past the end of the log (" + std::to_string(*end) +
                                         ")"));
  }
  auto reader = deps_.log->OpenReader(from);
  if (!reader.ok()) return Error(reader.status());
  http::Response response;
  response.content_type = "application/x-ndjson";
  auto shared_reader = std::shared_ptr<LogReader>(std::move(*reader));
  const RestApiDeps deps = deps_;
  uint64_t stop_at = *end;
  // Placement orders from a master that a newer one fenced off are not orders: seed the fence
  // with the newest epoch claimed before `from`, and follow later claims in the stream.
  uint64_t fence = 0;
  if (!agent.empty()) {
    deps_.loop->Read([&](const commands::DecisionState& state) {
      for (const auto& [claim_offset, epoch] : state.epoch_claims) {
        if (claim_offset < from) fence = std::max(fence, epoch);
      }
    });
  }
  response.stream = [deps, shared_reader, follow, agent, types, stop_at,
                     fence](const http::ChunkWriter& write) mutable {
    auto last_write = std::chrono::steady_clock::now();
    while (!deps.stopping->load()) {
      if (!follow && shared_reader->position() >= stop_at) return;
      auto events = shared_reader->Next(1000, std::chrono::milliseconds(250));
      if (!events.ok()) {
        write(json{{"error", {{"message", events.status().message()}}}}.dump() + "\n");
        return;
      }
      std::string chunk;
      for (const auto& event : *events) {
        if (event.has_writer_epoch_claimed()) {
          fence = std::max(fence, event.writer_epoch_claimed().epoch());
        }
        if (!agent.empty() && (!IsPlacementFor(event, agent) || event.writer_epoch() < fence)) {
          continue;
        }
        if (!types.empty() && !types.count(PayloadTypeName(event))) continue;
        chunk += EnvelopeToJson(event) + "\n";
      }
      auto now = std::chrono::steady_clock::now();
      // An idle follow stream gets a blank keep-alive line every 15 s, so that readers can
      // tell a quiet log from a dead connection.
      if (chunk.empty() && follow && now - last_write > std::chrono::seconds(15)) chunk = "\n";
      if (!chunk.empty()) last_write = now;
      if (!write(chunk)) return;
    }
  };
  return response;
}

}  // namespace cairn
