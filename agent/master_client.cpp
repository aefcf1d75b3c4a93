#include "agent/master_client.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "events/envelope_util.h"
#include "net/http_types.h"

namespace cairn::agent {
namespace {

using nlohmann::json;

// Log lines are whatever a task printed: invalid UTF-8 must not make serialisation throw.
std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<uint64_t> OffsetField(const json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end()) return Status::InvalidArgument(std::string("missing '") + name + "'");
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    if (!text.empty() && text.size() <= 20 &&
        text.find_first_not_of("0123456789") == std::string::npos) {
      try {
        return static_cast<uint64_t>(std::stoull(text));
      } catch (const std::exception&) {
        // Falls through to the error below (out of range).
      }
    }
  }
  return Status::InvalidArgument(std::string("'") + name + "' is not an offset");
}

// A string field of the register answer's `placements`: absent or null gives the default, any
// other non-string type is an error. Never throws (nlohmann's value() does on a wrong type).
Result<std::string> StringField(const json& object, const char* name, const char* fallback) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::string(fallback);
  if (!it->is_string()) {
    return Status::InvalidArgument(std::string("'placements.") + name + "' is not a string");
  }
  return it->get<std::string>();
}

bool Retryable(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded || status.code() == StatusCode::kIOError;
}

std::string AllocationPath(const std::string& allocation_id, const char* action) {
  return "/api/v1/allocations/" + net::PercentEncode(allocation_id) + "/" + action;
}

}  // namespace

Result<Registration> ParseRegistration(const std::string& body) {
  json parsed = json::parse(body, nullptr, false);
  if (!parsed.is_object()) return Status::InvalidArgument("register answer is not a JSON object");
  Registration registration;
  CAIRN_ASSIGN_OR_RETURN(registration.offset, OffsetField(parsed, "offset"));
  CAIRN_ASSIGN_OR_RETURN(registration.resume_from, OffsetField(parsed, "resumeFrom"));
  registration.transport = "http";
  auto placements = parsed.find("placements");
  if (placements != parsed.end() && placements->is_object()) {
    CAIRN_ASSIGN_OR_RETURN(registration.transport, StringField(*placements, "transport", "http"));
    CAIRN_ASSIGN_OR_RETURN(registration.brokers, StringField(*placements, "brokers", ""));
    CAIRN_ASSIGN_OR_RETURN(registration.topic_prefix,
                           StringField(*placements, "topicPrefix", "cairn"));
  }
  return registration;
}

Result<std::unique_ptr<MasterClient>> MasterClient::Create(const std::string& master_url,
                                                           std::string agent_id, RetryPolicy policy,
                                                           std::string agent_token,
                                                           const std::string& master_cert_file) {
  CAIRN_ASSIGN_OR_RETURN(net::Client client, net::Client::FromUrl(master_url, master_cert_file));
  return std::make_unique<MasterClient>(std::move(client), std::move(agent_id), policy,
                                        std::move(agent_token));
}

MasterClient::MasterClient(net::Client client, std::string agent_id, RetryPolicy policy,
                           std::string agent_token)
    : client_(std::move(client)),
      agent_id_(std::move(agent_id)),
      policy_(policy),
      agent_token_(std::move(agent_token)) {
  if (!agent_token_.empty()) client_.SetDefaultHeader("Authorization", "Bearer " + agent_token_);
}

std::unique_ptr<MasterClient> MasterClient::Clone() const {
  return std::make_unique<MasterClient>(
      net::Client(client_.host(), client_.port(), client_.options()), agent_id_, policy_,
      agent_token_);
}

void MasterClient::Cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  cancel_signal_.notify_all();
  client_.Cancel();
}

Result<std::string> MasterClient::Attempt(const std::string& method, const std::string& target,
                                          const std::string& body,
                                          std::chrono::milliseconds timeout) {
  if (cancelled_) return Status::Unavailable("cancelled");
  CAIRN_ASSIGN_OR_RETURN(
      net::ClientResponse response,
      client_.Request(method, target, body, {{"content-type", "application/json"}}, timeout));
  CAIRN_RETURN_IF_ERROR(StatusFromHttp(response.status, response.body));
  return std::move(response.body);
}

Result<std::string> MasterClient::CallWithRetries(const std::string& what,
                                                  const std::string& method,
                                                  const std::string& target,
                                                  const std::string& body) {
  std::chrono::milliseconds backoff = policy_.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    Result<std::string> answer = Attempt(method, target, body, policy_.request_timeout);
    if (answer.ok() || !Retryable(answer.status()) || cancelled_) return answer;
    // The first failure and then every tenth, so a long outage does not flood the log.
    if (attempt == 1 || attempt % 10 == 0) {
      log::Warn("master_client", "{} failed (attempt {}), retrying: {}", what, attempt,
                answer.status());
    }
    std::unique_lock lock(mutex_);
    if (cancel_signal_.wait_for(lock, backoff, [&] { return cancelled_.load(); })) {
      return Status::Unavailable(what + " cancelled: " + answer.status().message());
    }
    backoff = std::min(backoff * 2, policy_.max_backoff);
  }
}

Result<Registration> MasterClient::Register(const RegisterRequest& request) {
  json devices = json::array();
  for (const auto& device : request.devices) {
    devices.push_back(
        {{"id", device.id}, {"brand", device.brand}, {"uuid", device.uuid}, {"type", device.type}});
  }
  json body;
  body["incarnation"] = request.incarnation;
  body["resourcePool"] = request.resource_pool;
  body["slots"] = request.devices.size();
  body["devices"] = std::move(devices);
  body["hostname"] = request.hostname;
  body["address"] = request.address;
  body["version"] = request.version;
  body["runtime"] = request.runs_containers ? "container" : "process";
  CAIRN_ASSIGN_OR_RETURN(
      std::string answer,
      CallWithRetries("register", "POST", "/api/v1/agents/" + agent_id_ + "/register", Dump(body)));
  return ParseRegistration(answer);
}

Status MasterClient::Heartbeat(const std::string& incarnation) {
  json body = {{"incarnation", incarnation}};
  Result<std::string> answer = Attempt("POST", "/api/v1/agents/" + agent_id_ + "/heartbeat",
                                       Dump(body), policy_.heartbeat_timeout);
  return answer.status();
}

Status MasterClient::ReportStarted(const StartedReport& report) {
  json body = {{"taskId", report.task_id}, {"agentId", agent_id_}, {"pid", report.pid}};
  return CallWithRetries("started report of " + report.allocation_id, "POST",
                         AllocationPath(report.allocation_id, "started"), Dump(body))
      .status();
}

Status MasterClient::ReportReady(const ReadyReport& report) {
  json body = {{"taskId", report.task_id},
               {"agentId", agent_id_},
               {"serviceHost", report.service_host},
               {"servicePort", report.service_port},
               {"serviceUser", report.service_user}};
  return CallWithRetries("ready report of " + report.allocation_id, "POST",
                         AllocationPath(report.allocation_id, "ready"), Dump(body))
      .status();
}

Status MasterClient::ReportExited(const ExitedReport& report) {
  json body = {{"taskId", report.task_id}, {"agentId", agent_id_}};
  if (report.exit_code) body["exitCode"] = *report.exit_code;
  if (report.signal) body["signal"] = *report.signal;
  if (!report.reason.empty()) body["reason"] = report.reason;
  return CallWithRetries("exited report of " + report.allocation_id, "POST",
                         AllocationPath(report.allocation_id, "exited"), Dump(body))
      .status();
}

// {"logs": [{taskId, allocationId, agentId, seq, timestamp, stdtype, log}, ...]}, written as text
// rather than built as a document: a batch holds thousands of lines, and a document of them cost
// the agent more than the master's storing them. Each string is escaped as Dump escapes it
// (invalid UTF-8 replaced); a batch's lines share their task and allocation, escaped once.
Status MasterClient::ShipLogs(const LogBatch& batch) {
  auto quoted = [](const std::string& text) { return Dump(json(text)); };
  const std::string agent = quoted(agent_id_);
  std::string body = "{\"logs\":[";
  std::string last_task, last_allocation, task_prefix;
  for (const auto& line : batch) {
    if (task_prefix.empty() || line.task_id != last_task || line.allocation_id != last_allocation) {
      last_task = line.task_id;
      last_allocation = line.allocation_id;
      task_prefix = "{\"taskId\":" + quoted(line.task_id) +
                    ",\"allocationId\":" + quoted(line.allocation_id) + ",\"agentId\":" + agent;
    }
    if (body.back() != '[') body.push_back(',');
    body += task_prefix;
    body += ",\"seq\":" + std::to_string(line.seq);
    body += ",\"timestamp\":\"" + FormatRfc3339(line.unix_micros) + "\"";
    body += ",\"stdtype\":" + quoted(line.stdtype);
    body += ",\"log\":" + quoted(line.text) + "}";
  }
  body += "]}";
  return CallWithRetries(std::to_string(batch.size()) + " log lines", "POST", "/api/v1/task/logs",
                         body)
      .status();
}

Result<std::string> MasterClient::FetchTaskFiles(const std::string& allocation_id) {
  return CallWithRetries("the files of allocation " + allocation_id, "GET",
                         "/api/v1/agents/" + net::PercentEncode(agent_id_) + "/allocations/" +
                             net::PercentEncode(allocation_id) + "/files",
                         "");
}

}  // namespace cairn::agent
