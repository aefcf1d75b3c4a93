#include "replay/audit.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>

#include "base/clock.h"
#include "events/envelope_util.h"
#include "replay/event_filter.h"

namespace cairn::replay {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The event's payload message (the oneof's set field), or null for an empty envelope.
const Message* PayloadOf(const events::Envelope& event) {
  const auto* oneof = event.GetDescriptor()->FindOneofByName("payload");
  const FieldDescriptor* field = event.GetReflection()->GetOneofFieldDescriptor(event, oneof);
  if (field == nullptr) return nullptr;
  return &event.GetReflection()->GetMessage(event, field);
}

std::string IntegerField(const Message& message, const FieldDescriptor& field) {
  const auto* reflection = message.GetReflection();
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(reflection->GetInt32(message, &field));
    case FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(reflection->GetInt64(message, &field));
    default:
      return "";
  }
}

// What a refused request was about, from its path: /api/v1/experiments/7/kill -> experiment/7.
std::string SubjectOfPath(const std::string& path) {
  static const std::map<std::string, std::string> kinds = {{"experiments", "experiment"},
                                                           {"trials", "trial"},
                                                           {"commands", "task"},
                                                           {"tasks", "task"},
                                                           {"users", "user"},
                                                           {"workspaces", "workspace"},
                                                           {"projects", "project"},
                                                           {"agents", "agent"},
                                                           {"templates", "template"},
                                                           {"models", "model"},
                                                           {"notebooks", "task"},
                                                           {"shells", "task"},
                                                           {"tensorboards", "task"}};
  std::vector<std::string> segments;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  if (segments.size() < 4 || segments[0] != "api" || segments[1] != "v1") return "";
  auto kind = kinds.find(segments[2]);
  return kind == kinds.end() || segments[3].empty() ? "" : kind->second + "/" + segments[3];
}

}  // namespace

std::vector<std::string> AuditTrail::SubjectsOf(const events::Envelope& event) {
  std::vector<std::string> subjects;
  if (event.has_access_denied()) {
    std::string subject = SubjectOfPath(event.access_denied().path());
    if (!subject.empty()) subjects.push_back(std::move(subject));
    return subjects;
  }
  const Message* payload = PayloadOf(event);
  if (payload == nullptr) return subjects;
  const auto* reflection = payload->GetReflection();
  const auto* descriptor = payload->GetDescriptor();
  const bool is_template = event.has_template_saved() || event.has_template_deleted();
  std::string user_id;
  std::string username;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor& field = *descriptor->field(i);
    // A checkpoint is named by "uuid" (CheckpointSaved) or in a list (CheckpointsDeleted).
    if (field.name() == "uuids" && field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      for (int j = 0; j < reflection->FieldSize(*payload, &field); ++j) {
        subjects.push_back("checkpoint/" + reflection->GetRepeatedString(*payload, &field, j));
      }
      continue;
    }
    // Unset, or a scalar at its default (0, ""): not about anything.
    if (field.is_repeated() || !reflection->HasField(*payload, &field)) continue;
    const std::string& name = field.name();
    if (name == "experiment_id" || name == "trial_id" || name == "user_id" ||
        name == "workspace_id" || name == "project_id" || name == "model_id") {
      const std::string value = IntegerField(*payload, field);
      if (value.empty()) continue;
      const std::string kind = name.substr(0, name.size() - 3);  // "experiment", "user", ...
      subjects.push_back(kind + "/" + value);
      if (kind == "user") user_id = value;
      continue;
    }
    if (field.cpp_type() != FieldDescriptor::CPPTYPE_STRING) continue;
    const char* kind = name == "task_id"                                ? "task"
                       : name == "agent_id"                             ? "agent"
                       : name == "username"                             ? "user"
                       : name == "checkpoint_uuid"                      ? "checkpoint"
                       : name == "uuid" && event.has_checkpoint_saved() ? "checkpoint"
                       : is_template && name == "name"                  ? "template"
                                                                        : nullptr;
    if (kind == nullptr) continue;
    const std::string value = reflection->GetString(*payload, &field);
    subjects.push_back(std::string(kind) + "/" + value);
    if (name == "username") username = value;
  }
  // Users by name as well as by id: the name they had when the event happened (a rename names
  // the old and the new one), so a rename leaves earlier events findable under the old name.
  if (!user_id.empty()) {
    const int64_t id = std::stoll(user_id);
    auto known = usernames_.find(id);
    if (known != usernames_.end() && known->second != username) {
      subjects.push_back("user/" + known->second);
    }
    if (!username.empty()) usernames_[id] = username;
  }
  return subjects;
}

void AuditTrail::AddParents(std::vector<std::string>& subjects) {
  auto first = [&](std::string_view kind) -> std::string {
    for (const auto& subject : subjects) {
      if (subject.rfind(kind, 0) == 0) return subject;
    }
    return "";
  };
  const std::string task = first("task/");
  std::string trial = first("trial/");
  const std::string experiment = first("experiment/");
  if (!task.empty() && !trial.empty()) trial_of_task_[task] = trial;
  if (!trial.empty() && !experiment.empty()) experiment_of_trial_[trial] = experiment;
  if (trial.empty() && !task.empty()) {
    auto known = trial_of_task_.find(task);
    if (known != trial_of_task_.end()) subjects.push_back(trial = known->second);
  }
  if (experiment.empty() && !trial.empty()) {
    auto known = experiment_of_trial_.find(trial);
    if (known != experiment_of_trial_.end()) subjects.push_back(known->second);
  }
}

bool AuditTrail::ActorMatches(const std::string& actor) const {
  if (query_.actor.empty()) return true;
  if (query_.actor.find(':') != std::string::npos) return actor == query_.actor;
  return actor == "user:" + query_.actor;
}

std::optional<AuditRecord> AuditTrail::Add(const events::Envelope& event) {
  // Subjects first, whatever the query: the user-name map must follow every event.
  std::vector<std::string> subjects = SubjectsOf(event);
  AddParents(subjects);
  if (!query_.include_system && event.actor().rfind("system:", 0) == 0 &&
      query_.actor.rfind("system:", 0) != 0) {
    return std::nullopt;
  }
  if (!ActorMatches(event.actor())) return std::nullopt;
  if (query_.since_micros && event.time_unix_micros() < *query_.since_micros) return std::nullopt;
  if (query_.until_micros && event.time_unix_micros() > *query_.until_micros) return std::nullopt;
  if (!query_.entity.empty()) {
    const bool named = std::find(subjects.begin(), subjects.end(), query_.entity) != subjects.end();
    if (!named && !EventMentions(event, query_.entity)) return std::nullopt;
  }
  return AuditRecord{event.offset(), event.time_unix_micros(), event.actor(),
                     PayloadTypeName(event), std::move(subjects)};
}

std::string AuditLine(const AuditRecord& record) {
  std::string line = FormatRfc3339(record.time_unix_micros) + "  #" +
                     std::to_string(record.offset) + "  " +
                     (record.actor.empty() ? "-" : record.actor) + "  " + record.action;
  for (size_t i = 0; i < record.subjects.size(); ++i) {
    line += (i == 0 ? "  " : " ") + record.subjects[i];
  }
  return line;
}

nlohmann::json AuditRecordJson(const AuditRecord& record, const events::Envelope& event,
                               Audience audience) {
  return {{"offset", std::to_string(record.offset)},
          {"time", FormatRfc3339(record.time_unix_micros)},
          {"actor", record.actor},
          {"action", record.action},
          {"subjects", record.subjects},
          {"event", nlohmann::json::parse(EnvelopeToJson(event, audience), nullptr, false)}};
}

}  // namespace cairn::replay
