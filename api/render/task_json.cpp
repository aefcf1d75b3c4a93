#include "api/render/task_json.h"

#include <algorithm>

#include "api/auth.h"
#include "base/clock.h"
#include "commands/tenancy/tenancy.h"
#include "events/envelope_util.h"

namespace cairn::api {

using nlohmann::json;

// Determined's task state names, shared by commands, shells, notebooks and allocations.
namespace {

struct NtscStateName {
  views::TaskState state;
  const char* name;
};
constexpr NtscStateName kNtscStates[] = {
    {views::TASK_STATE_QUEUED, "STATE_QUEUED"},
    {views::TASK_STATE_ASSIGNED, "STATE_STARTING"},
    {views::TASK_STATE_RUNNING, "STATE_RUNNING"},
    {views::TASK_STATE_TERMINATING, "STATE_TERMINATING"},
    {views::TASK_STATE_TERMINATED, "STATE_TERMINATED"},
};

}  // namespace

std::string NtscState(const views::TaskView& task) {
  for (const NtscStateName& known : kNtscStates) {
    if (known.state == task.state()) return known.name;
  }
  return "STATE_UNSPECIFIED";
}

bool IsNtscStateName(const std::string& name) {
  return std::any_of(std::begin(kNtscStates), std::end(kNtscStates),
                     [&](const NtscStateName& known) { return name == known.name; });
}

json ConfigOf(const views::TaskView& task, Audience audience) {
  json config = json::parse(task.config_json(), nullptr, false);
  if (config.is_discarded() || !config.is_object()) config = json::object();
  RedactConfig(config, audience);
  // The effective resources are the recorded ones: the decider resolves the pool (compute or
  // aux) and the pool's default priority, and job queue updates change them later.
  json& resources = config["resources"];
  if (!resources.is_object()) resources = json::object();
  resources["slots"] = task.slots();
  resources["resource_pool"] = task.resource_pool();
  resources["priority"] = task.priority();
  return config;
}

namespace {

// The reason of the latest decision about the task, as the projection recorded it.
std::string LatestReason(const views::TaskView& task) {
  if (!task.latest_reason().empty()) return task.latest_reason();
  return task.state() == views::TASK_STATE_QUEUED ? "queued; no scheduling decision about it yet"
                                                  : "";
}

}  // namespace

// The v1Command shape, with Cairn's extra facts under "cairn".
json CommandJson(const views::TaskView& task, int user_id) {
  json command = {
      {"id", task.task_id()},       {"description", task.description()},
      {"state", NtscState(task)},   {"startTime", FormatRfc3339(task.submit_time_unix_micros())},
      {"username", task.user()},    {"userId", user_id},
      {"displayName", task.user()}, {"resourcePool", task.resource_pool()},
      {"jobId", task.job_id()},     {"workspaceId", WorkspaceOrUncategorized(task.workspace_id())}};
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
std::vector<std::pair<std::string, std::vector<int32_t>>> AllocationAgents(
    const views::TaskView& task) {
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

// A notebook, shell or TensorBoard is ready when its service answered (TaskReady); other tasks
// when they run.
static bool IsReady(const views::TaskView& task) {
  return task.state() == views::TASK_STATE_RUNNING &&
         (!IsInteractiveTask(task.task_type()) || task.ready());
}

// The v1Task shape used by `det shell/notebook start` polling and `det task`, with Cairn's
// account of why the task is where it is.
// Determined's GenericTaskState of a generic task, from its view.
std::string GenericTaskState(const views::TaskView& task) {
  if (task.state() == views::TASK_STATE_TERMINATED) {
    if (task.kill_requested()) {
      return "GENERIC_TASK_STATE_CANCELED";
    }
    const bool failed = task.has_signal() || (task.has_exit_code() && task.exit_code() != 0);
    return failed ? "GENERIC_TASK_STATE_ERROR" : "GENERIC_TASK_STATE_COMPLETED";
  }
  if (task.held()) {
    return task.state() == views::TASK_STATE_QUEUED ? "GENERIC_TASK_STATE_PAUSED"
                                                    : "GENERIC_TASK_STATE_STOPPING_PAUSED";
  }
  if (task.kill_requested()) return "GENERIC_TASK_STATE_STOPPING_CANCELED";
  return "GENERIC_TASK_STATE_ACTIVE";
}

json TaskJson(const views::TaskView& task) {
  json allocations = json::array();
  if (!task.allocation_id().empty()) {
    allocations.push_back({{"taskId", task.task_id()},
                           {"allocationId", task.allocation_id()},
                           {"state", NtscState(task)},
                           {"slots", task.slots()},
                           {"isReady", IsReady(task)},
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
  if (task.task_type() == events::TASK_TYPE_GENERIC) {
    out["taskState"] = GenericTaskState(task);
    if (!task.generic().parent_task_id().empty()) out["parentId"] = task.generic().parent_task_id();
    if (!task.generic().forked_from().empty()) out["forkedFrom"] = task.generic().forked_from();
    out["noPause"] = task.generic().no_pause();
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

}  // namespace cairn::api
