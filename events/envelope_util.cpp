#include "events/envelope_util.h"

#include <google/protobuf/util/json_util.h>
#include <openssl/rand.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace cairn {

std::string PayloadTypeName(const events::Envelope& event) {
  // The payload's message name, from the schema itself, so a new event needs no case here.
  static const auto* const payload = events::Envelope::descriptor()->FindOneofByName("payload");
  const auto* field = event.GetReflection()->GetOneofFieldDescriptor(event, payload);
  return field == nullptr ? "Unknown" : field->message_type()->name();
}

std::string TaskTypeName(events::TaskType type) {
  std::string name = events::TaskType_Name(type);
  const std::string prefix = "TASK_TYPE_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return name.empty() ? "UNSPECIFIED" : name;
}

std::string TaskIdOf(const events::Envelope& event) {
  using E = events::Envelope;
  switch (event.payload_case()) {
    case E::kTaskSubmitted:
      return event.task_submitted().task_id();
    case E::kAllocationAssigned:
      return event.allocation_assigned().task_id();
    case E::kTaskStarted:
      return event.task_started().task_id();
    case E::kTaskExited:
      return event.task_exited().task_id();
    case E::kKillRequested:
      return event.kill_requested().task_id();
    case E::kPreemptionRequested:
      return event.preemption_requested().task_id();
    case E::kAllocationReleased:
      return event.allocation_released().task_id();
    case E::kAllocationPartExited:
      return event.allocation_part_exited().task_id();
    default:
      return "";
  }
}

std::string EntityIdOf(const events::Envelope& event) {
  using E = events::Envelope;
  switch (event.payload_case()) {
    case E::kAgentRegistered:
      return event.agent_registered().agent_id();
    case E::kAgentDisconnected:
      return event.agent_disconnected().agent_id();
    case E::kAgentEnabled:
      return event.agent_enabled().agent_id();
    case E::kAgentDisabled:
      return event.agent_disabled().agent_id();
    case E::kJobQueueChanged:
      return event.job_queue_changed().job_id();
    case E::kExperimentCreated:
      return std::to_string(event.experiment_created().experiment_id());
    case E::kExperimentStateChanged:
      return std::to_string(event.experiment_state_changed().experiment_id());
    case E::kTrialCreated:
      return std::to_string(event.trial_created().experiment_id());
    case E::kTrialWorkloadReported:
      return std::to_string(event.trial_workload_reported().trial_id());
    case E::kCheckpointSaved:
      return std::to_string(event.checkpoint_saved().trial_id());
    case E::kTemplateSaved:
      return event.template_saved().name();
    case E::kTemplateDeleted:
      return event.template_deleted().name();
    default:
      return TaskIdOf(event);
  }
}

std::vector<events::AllocationPart> AllocationPartsOf(const events::AllocationAssigned& assigned) {
  if (assigned.parts_size() > 0) return {assigned.parts().begin(), assigned.parts().end()};
  events::AllocationPart part;
  part.set_agent_id(assigned.agent_id());
  part.set_agent_incarnation(assigned.agent_incarnation());
  *part.mutable_slot_ids() = assigned.slot_ids();
  return {part};
}

namespace {

template <typename Order>
std::vector<events::AllocationPart> PartsOf(const Order& order) {
  if (order.parts_size() > 0) return {order.parts().begin(), order.parts().end()};
  if (order.agent_id().empty()) return {};
  events::AllocationPart part;
  part.set_agent_id(order.agent_id());
  part.set_agent_incarnation(order.agent_incarnation());
  return {part};
}

}  // namespace

std::vector<events::AllocationPart> OrderPartsOf(const events::Envelope& event) {
  if (event.has_allocation_assigned()) return AllocationPartsOf(event.allocation_assigned());
  if (event.has_preemption_requested()) return PartsOf(event.preemption_requested());
  if (event.has_kill_requested()) return PartsOf(event.kill_requested());
  return {};
}

std::vector<std::string> PlacementAgentsOf(const events::Envelope& event) {
  std::vector<std::string> agents;
  for (const auto& part : OrderPartsOf(event)) agents.push_back(part.agent_id());
  return agents;
}

bool IsPlacementFor(const events::Envelope& event, const std::string& agent_id) {
  for (const auto& agent : PlacementAgentsOf(event)) {
    if (agent == agent_id) return true;
  }
  return false;
}

std::string EnvelopeToJson(const events::Envelope& event) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = false;
  auto status = google::protobuf::util::MessageToJsonString(event, &out, options);
  if (!status.ok()) return "{}";
  // proto3 JSON omits zero values; offset 0 is a real offset, so readers always get one.
  if (event.offset() == 0 && out.size() > 1)
    out.insert(1, out.size() > 2 ? "\"offset\":\"0\"," : "\"offset\":\"0\"");
  return out;
}

Result<events::Envelope> EnvelopeFromJson(const std::string& json) {
  events::Envelope event;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(json, &event, options);
  if (!status.ok()) return Status::InvalidArgument("bad event JSON: " + status.ToString());
  return event;
}

bool IsCanonicalUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

std::string FormatNumber(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string FormatRfc3339(int64_t unix_micros) {
  time_t seconds = static_cast<time_t>(unix_micros / 1000000);
  int64_t micros = unix_micros % 1000000;
  if (micros < 0) {
    micros += 1000000;
    seconds -= 1;
  }
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(micros));
  return buffer;
}

Result<int64_t> ParseTimeToUnixMicros(const std::string& text) {
  if (text.empty()) return Status::InvalidArgument("empty time");
  bool all_digits = text.find_first_not_of("0123456789") == std::string::npos;
  if (all_digits) {
    if (text.size() > 12) return Status::InvalidArgument("time out of range: " + text);
    int64_t seconds = 0;
    for (char c : text) seconds = seconds * 10 + (c - '0');
    return seconds * 1000000;
  }
  std::tm tm{};
  int year, month, day, hour, minute, second;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6) {
    return Status::InvalidArgument("time is not RFC 3339 (2025-03-20T12:00:00Z): " + text);
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  int64_t micros = 0;
  size_t pos = static_cast<size_t>(consumed);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t scale = 100000;
    while (pos < text.size() && isdigit(static_cast<unsigned char>(text[pos]))) {
      micros += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  int64_t offset_seconds = 0;
  std::string zone = text.substr(pos);
  if (zone == "Z" || zone == "z" || zone.empty()) {
  } else if ((zone[0] == '+' || zone[0] == '-') && zone.size() == 6 && zone[3] == ':' &&
             isdigit(static_cast<unsigned char>(zone[1])) &&
             isdigit(static_cast<unsigned char>(zone[2])) &&
             isdigit(static_cast<unsigned char>(zone[4])) &&
             isdigit(static_cast<unsigned char>(zone[5]))) {
    int zh = (zone[1] - '0') * 10 + (zone[2] - '0'), zm = (zone[4] - '0') * 10 + (zone[5] - '0');
    offset_seconds = (zh * 3600 + zm * 60) * (zone[0] == '+' ? 1 : -1);
  } else {
    return Status::InvalidArgument("bad time zone in: " + text);
  }
  time_t seconds = timegm(&tm);
  return (static_cast<int64_t>(seconds) - offset_seconds) * 1000000 + micros;
}

int64_t NowUnixMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string NewUuid() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    // OpenSSL's CSPRNG failing is an environment fault we cannot recover from sensibly.
    std::abort();
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", bytes[0],
                bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
  return out;
}

}  // namespace cairn
