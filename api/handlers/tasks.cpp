#include "api/handlers/tasks.h"

#include "api/handlers/commands.h"
#include "api/log_stream.h"
#include "api/render/task_json.h"
#include "api/rest_util.h"
#include "base/clock.h"

namespace cairn::api {

using nlohmann::json;

net::Response ListTasks(Call& call) {
  auto tasks = call.services().projections->ListTasks();
  if (!tasks.ok()) return Error(tasks.status());
  json summaries = json::object();
  for (const auto& task : *tasks) {
    if (task.allocation_id().empty() || task.state() == views::TASK_STATE_TERMINATED) continue;
    if (!call.CanView(task.workspace_id())) continue;
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

net::Response GetTask(Call& call) {
  const std::string& id = call.Param("id");
  auto task = LoadTask(call, id);
  if (!task.ok()) return Error(task.status());
  json out = TaskJson(*task);
  // A live task is explained on request (?explain=true) by the scheduler as things are now: what
  // it waits for, where it runs and why, and the jobs ahead of it. Only on request: that reads
  // the writer's state, which waits while the writer decides a batch, and the plain read must
  // not (under load, explaining every read raised its p99; docs/benchmarks.md, "HTTP edge").
  const std::string explain = call.request().QueryParam("explain");
  if (explain != "true" && explain != "1") return Ok({{"task", out}});
  if (task->state() == views::TASK_STATE_TERMINATED) return Ok({{"task", out}});
  auto explanation = call.services().writer->Explain(id, NowUnixMicros());
  if (explanation.ok()) {
    json ahead = json::array();
    for (const auto& job : explanation->jobs_ahead) {
      ahead.push_back({{"jobId", job.job_id},
                       {"priority", job.priority},
                       {"slots", job.slots},
                       {"running", job.running}});
    }
    out["explanation"] = explanation->reason;
    out["jobsAhead"] = explanation->jobs_ahead_count;
    out["cairn"]["jobsAhead"] = ahead;
  }
  return Ok({{"task", out}});
}

namespace {

// One task's log: its lines, the master's lines about it, and whether it has ended.
std::function<LogSources()> OneTaskSources(Projections* projections, std::string id) {
  return [projections, id = std::move(id)] {
    LogSources sources;
    sources.task_ids = {id};
    auto current = projections->GetTask(id);
    sources.ended =
        !current.ok() || !*current || (*current)->state() == views::TASK_STATE_TERMINATED;
    if (current.ok() && *current) sources.master_lines[id] = TaskMasterLines(**current);
    return sources;
  };
}

}  // namespace

net::Response TaskLogs(Call& call) {
  const std::string& id = call.Param("id");
  auto task = LoadTask(call, id);
  if (!task.ok()) return Error(task.status());
  const bool follow = call.request().QueryParam("follow") == "true";
  Projections* projections = call.services().projections;
  auto window = ParseLogWindow(call.request());
  if (!window.ok()) return Error(window.status());
  return StreamTaskLogs(call.services(), follow, *window, OneTaskSources(projections, id));
}

net::Response TaskLogFields(Call& call) {
  const std::string& id = call.Param("id");
  auto task = LoadTask(call, id);
  if (!task.ok()) return Error(task.status());
  const bool follow = call.request().QueryParam("follow") == "true";
  Projections* projections = call.services().projections;
  return StreamTaskLogFields(call.services(), follow, id, OneTaskSources(projections, id));
}

net::Response KillTaskRoute(Call& call) {
  // det task kill sends {taskId, killFromRoot}: --root kills a generic task's whole tree.
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  auto from_root = OptionalBool(*body, "killFromRoot");
  if (!from_root.ok()) return Error(from_root.status());
  return KillTask(call, call.Param("id"), /*as_command=*/false, from_root->value_or(false));
}

}  // namespace cairn::api
