#include "api/handlers/agent_protocol.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>

#include "api/rest_util.h"
#include "base/clock.h"
#include "base/log.h"
#include "commands/experiments/log_policies.h"
#include "events/context_store.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// PermissionDenied unless `agent_id` holds or held `allocation_id` for `task_id` ("" = any task),
// so that one agent cannot end, start or write the logs of another's work.
Result<commands::AllocationHolding> RequireHolder(Call& call, const std::string& agent_id,
                                                  const std::string& allocation_id,
                                                  const std::string& task_id) {
  CAIRN_RETURN_IF_ERROR(call.RequireAgent(agent_id));
  CAIRN_ASSIGN_OR_RETURN(commands::AllocationHolding holding,
                         call.services().writer->DescribeAllocation(allocation_id));
  if (!task_id.empty() && holding.task_id != task_id) {
    return Status::InvalidArgument("allocation " + allocation_id + " belongs to task " +
                                   holding.task_id + ", not " + task_id);
  }
  for (const auto& holder : holding.agent_ids) {
    if (holder == agent_id) return holding;
  }
  return Status::PermissionDenied("agent " + agent_id + " does not hold allocation " +
                                  allocation_id);
}

// Compiled policies by their patterns, so that a trial's lines are not matched by recompiling
// its experiment's patterns for every batch. Bounded: cleared when full.
std::shared_ptr<const experiments::CompiledLogPolicies> CompiledPolicies(
    const std::vector<experiments::LogPolicy>& policies) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const experiments::CompiledLogPolicies>> cache;
  constexpr size_t kMaxCached = 256;
  const std::string key = experiments::LogPoliciesJson(policies).dump();
  std::lock_guard lock(mutex);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  if (cache.size() >= kMaxCached) cache.clear();
  auto compiled = std::make_shared<const experiments::CompiledLogPolicies>(policies);
  cache.emplace(key, compiled);
  return compiled;
}

// A trial run's lines against its experiment's log_policies (those not yet matched in the run:
// DecisionLoop::DescribeAllocation leaves those out): each policy's first matching line is
// recorded before the batch is answered, so that the run's exit, which the agent sends only
// after, is decided knowing it. A writer that cannot take it now fails the batch for the agent
// to send again (its lines are kept once, by seq); a refusal is logged, not the agent's business.
Status RecordLogPolicyMatches(
    Call& call, const std::vector<TaskLogLine>& lines,
    const std::map<std::tuple<std::string, std::string, std::string>,
                   std::vector<experiments::LogPolicy>>& policies_by_run) {
  std::map<const std::vector<experiments::LogPolicy>*,
           std::shared_ptr<const experiments::CompiledLogPolicies>>
      compiled_by_run;
  std::set<std::string> asked;  // task id and LogPolicyKey: each asked once per batch
  for (const auto& line : lines) {
    const auto& policies =
        policies_by_run.at(std::make_tuple(line.agent_id, line.allocation_id, line.task_id));
    if (policies.empty()) continue;
    auto& compiled = compiled_by_run[&policies];
    if (!compiled) compiled = CompiledPolicies(policies);
    for (size_t index : compiled->Matches(line.text)) {
      if (!asked.insert(line.task_id + "\n" + experiments::LogPolicyKey(policies[index])).second) {
        continue;
      }
      commands::RecordLogPolicyMatch match{line.task_id, line.agent_id, policies[index], line.text};
      auto outcome = call.ExecuteAs(std::move(match), "system:log-policies");
      if (outcome.ok()) continue;
      // Only a writer that cannot take it now is worth the agent's retry; any refusal would
      // refuse again, and must not stall the allocation's lines.
      const StatusCode code = outcome.status().code();
      if (code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded) {
        return outcome.status();
      }
      log::Warn("api", "log policy match of task {} refused: {}", line.task_id,
                outcome.status().ToString());
    }
  }
  return Status::Ok();
}

}  // namespace

net::Response AllocationFiles(Call& call) {
  const std::string& agent_id = call.Param("id");
  const std::string& allocation_id = call.Param("allocationId");
  auto holding = RequireHolder(call, agent_id, allocation_id, "");
  if (!holding.ok()) return Error(holding.status());
  // The placement came from the log, so the tasks projection has the task once it caught up.
  auto task = call.services().projections->GetTask(holding->task_id);
  if (task.ok() && !*task && call.CatchUp().ok()) {
    task = call.services().projections->GetTask(holding->task_id);
  }
  if (!task.ok()) return Error(task.status());
  if (!*task || (*task)->context_digest().empty()) {
    return Error(Status::NotFound("allocation " + allocation_id + " has no files"));
  }
  auto files = call.services().contexts->GetHarnessJson((*task)->context_digest());
  if (!files.ok()) return Error(files.status());
  net::Response response;
  response.body = std::move(*files);
  return response;
}

net::Response RegisterAgent(Call& call) {
  const std::string& id = call.Param("id");
  if (Status own = call.RequireAgent(id); !own.ok()) return Error(own);
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  events::AgentRegistered registration;
  registration.set_agent_id(id);
  auto incarnation = GetString(*body, "incarnation", "incarnation", true);
  auto pool = GetString(*body, "resourcePool", "resourcePool", false);
  auto hostname = GetString(*body, "hostname", "hostname", false);
  auto version = GetString(*body, "version", "version", false);
  auto address = GetString(*body, "address", "address", false);
  auto slots = GetInt32(*body, "slots", "slots");
  auto runtime = GetString(*body, "runtime", "runtime", false);
  for (const Status* s :
       {&incarnation.status(), &pool.status(), &hostname.status(), &version.status(),
        &address.status(), &slots.status(), &runtime.status()}) {
    if (!s->ok()) return Error(*s);
  }
  if (!runtime->empty() && *runtime != "process" && *runtime != "container") {
    return Error(Status::InvalidArgument("runtime must be process or container"));
  }
  registration.set_runs_containers(*runtime == "container");
  if (!*slots) return Error(Status::InvalidArgument("slots is required"));
  registration.set_incarnation(*incarnation);
  registration.set_resource_pool(*pool);
  registration.set_hostname(*hostname);
  registration.set_version(*version);
  registration.set_address(*address);
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

net::Response AgentHeartbeat(Call& call) {
  const std::string& id = call.Param("id");
  if (Status own = call.RequireAgent(id); !own.ok()) return Error(own);
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

enum class AllocationEvent { kStarted, kReady, kExited };

net::Response AllocationReport(Call& call, AllocationEvent what) {
  const std::string& allocation_id = call.Param("id");
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto task_id = GetString(*body, "taskId", "taskId", false);
  auto agent_id = GetString(*body, "agentId", "agentId", true);
  if (!task_id.ok()) return Error(task_id.status());
  if (!agent_id.ok()) return Error(agent_id.status());
  commands::Command command;
  if (what == AllocationEvent::kStarted) {
    auto pid = GetInt32(*body, "pid", "pid");
    if (!pid.ok()) return Error(pid.status());
    command = commands::ReportTaskStarted{allocation_id, *task_id, *agent_id,
                                          static_cast<int32_t>(pid->value_or(0))};
  } else if (what == AllocationEvent::kReady) {
    auto host = GetString(*body, "serviceHost", "serviceHost", true);
    auto port = GetInt32(*body, "servicePort", "servicePort");
    auto user = GetString(*body, "serviceUser", "serviceUser", false);
    for (const Status* s : {&host.status(), &port.status(), &user.status()}) {
      if (!s->ok()) return Error(*s);
    }
    command = commands::ReportTaskReady{
        allocation_id, *task_id, *agent_id, *host, static_cast<int32_t>(port->value_or(0)), *user};
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
  if (Status held = RequireHolder(call, *agent_id, allocation_id, *task_id).status(); !held.ok()) {
    return Error(held);
  }
  auto outcome = call.ExecuteAs(std::move(command), "agent:" + *agent_id);
  if (!outcome.ok()) return Error(outcome.status());
  return Ok({{"offset", std::to_string(outcome->offset)}}, outcome->offset);
}

}  // namespace

net::Response AllocationStarted(Call& call) {
  return AllocationReport(call, AllocationEvent::kStarted);
}
net::Response AllocationReady(Call& call) {
  return AllocationReport(call, AllocationEvent::kReady);
}
net::Response AllocationExited(Call& call) {
  return AllocationReport(call, AllocationEvent::kExited);
}

net::Response PostTaskLogs(Call& call) {
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
    auto agent_id = GetString(entry, "agentId", "logs[].agentId", true);
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
  // Every line comes from an agent that holds (or held) its allocation for its task.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<experiments::LogPolicy>>
      checked;
  for (const auto& line : lines) {
    auto key = std::make_tuple(line.agent_id, line.allocation_id, line.task_id);
    if (checked.count(key)) continue;
    auto held = RequireHolder(call, line.agent_id, line.allocation_id, line.task_id);
    if (held.status().code() == StatusCode::kNotFound) {
      return Error(Status::NotFound("logs for an unknown allocation " + line.allocation_id));
    }
    if (!held.ok()) return Error(held.status());
    checked[key] = std::move(held->log_policies);
  }
  if (Status stored = call.services().task_logs->Append(lines); !stored.ok()) return Error(stored);
  if (Status matched = RecordLogPolicyMatches(call, lines, checked); !matched.ok()) {
    return Error(matched);
  }
  return Ok(json::object());
}

}  // namespace cairn::api
