#include "api/handlers/agent_protocol.h"

#include <set>

#include "api/rest_util.h"
#include "base/clock.h"

namespace cairn::api {

using nlohmann::json;

http::Response RegisterAgent(Call& call) {
  const std::string& id = call.Param("id");
  auto body = call.Body();
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
  auto outcome = call.ExecuteAs(commands::RegisterAgent{registration}, "agent:" + id);
  if (!outcome.ok()) return Error(outcome.status());
  call.services().liveness->Record(id);
  // Its heartbeats are checked against the agents projection: let it show the registration.
  if (Status shown = call.WaitFor(outcome->offset); !shown.ok()) return Error(shown);
  // A new incarnation reads its orders from its own AgentRegistered on, also when this answer is
  // for a retried registration that changed nothing.
  const uint64_t resume_from = outcome->agent_orders_from.value_or(outcome->offset);
  const MasterFacts& facts = call.services().facts;
  json placements = {{"transport", facts.placement_transport}};
  if (facts.placement_transport == "kafka") {
    placements["brokers"] = facts.kafka_brokers;
    placements["topicPrefix"] = facts.kafka_topic_prefix;
  }
  return Ok({{"offset", std::to_string(outcome->offset)},
             {"resumeFrom", std::to_string(resume_from)},
             {"placements", placements}},
            outcome->offset);
}

http::Response AgentHeartbeat(Call& call) {
  const std::string& id = call.Param("id");
  auto body = call.Body(/*allow_empty=*/true);
  if (!body.ok()) return Error(body.status());
  auto incarnation = GetString(*body, "incarnation", "incarnation", true);
  if (!incarnation.ok()) return Error(incarnation.status());
  auto registered = [&]() -> Result<bool> {
    CAIRN_ASSIGN_OR_RETURN(auto agent, call.services().projections->GetAgent(id));
    return agent && agent->connected() && agent->incarnation() == *incarnation;
  };
  auto connected = registered();
  // The projection may not show the newest registration yet (a master that just restarted): look
  // again once it caught up with the log.
  if (connected.ok() && !*connected && call.CatchUp().ok()) connected = registered();
  if (!connected.ok()) return Error(connected.status());
  if (!*connected) {
    return Error(Status::FailedPrecondition(
        "agent " + id + " is not registered with this incarnation; register again"));
  }
  call.services().liveness->Record(id);
  return Ok(json::object());
}

namespace {

http::Response AllocationReport(Call& call, bool started) {
  const std::string& allocation_id = call.Param("id");
  auto body = call.Body();
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
  auto outcome = call.ExecuteAs(std::move(command), "agent:" + *agent_id);
  if (!outcome.ok()) return Error(outcome.status());
  return Ok({{"offset", std::to_string(outcome->offset)}}, outcome->offset);
}

}  // namespace

http::Response AllocationStarted(Call& call) { return AllocationReport(call, /*started=*/true); }
http::Response AllocationExited(Call& call) { return AllocationReport(call, /*started=*/false); }

http::Response PostTaskLogs(Call& call) {
  auto body = call.Body();
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
  std::set<std::string> task_ids;
  for (const auto& line : lines) task_ids.insert(line.task_id);
  auto all_known = [&]() -> Result<bool> {
    for (const auto& task_id : task_ids) {
      CAIRN_ASSIGN_OR_RETURN(auto task, call.services().projections->GetTask(task_id));
      if (!task) return false;
    }
    return true;
  };
  auto known = all_known();
  // A task the agent just received may not be in the projection yet: look again once it caught
  // up with the log.
  if (known.ok() && !*known && call.CatchUp().ok()) known = all_known();
  if (!known.ok()) return Error(known.status());
  if (!*known) return Error(Status::NotFound("logs for an unknown task"));
  if (Status stored = call.services().task_logs->Append(lines); !stored.ok()) return Error(stored);
  return Ok(json::object());
}

}  // namespace cairn::api
