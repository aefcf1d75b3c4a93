#include "commands/webhooks/webhook_payload.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/task_secrets.h"

namespace cairn::commands {

using Json = nlohmann::ordered_json;

namespace {

// Go's encoding/json escapes these three for HTML; they appear only inside strings of a dump.
std::string GoJson(const Json& value) {
  const std::string text =
      value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Json ExperimentJson(const WebhookExperimentFacts& e) {
  return Json{{"id", e.id},
              {"state", e.state},
              {"name", e.name},
              {"duration", e.duration_seconds},
              {"resource_pool", e.resource_pool},
              {"slots_per_trial", e.slots_per_trial},
              {"workspace", e.workspace},
              {"project", e.project}};
}

Json Envelope(const std::string& event_id, const char* event_type, int64_t timestamp,
              const std::string& state) {
  Json condition = Json::object();
  if (!state.empty()) condition["state"] = state;
  return Json{{"event_id", event_id},
              {"event_type", event_type},
              {"timestamp", timestamp},
              {"condition", condition}};
}

Json PlainSection(const std::string& text) {
  return Json{{"type", "section"}, {"text", {{"type", "plain_text"}, {"text", text}}}};
}

Json Field(const std::string& text) { return Json{{"type", "mrkdwn"}, {"text", text}}; }

std::string Duration(int64_t seconds) {
  return std::to_string(seconds / 3600) + "h " + std::to_string(seconds % 3600 / 60) + "min";
}

std::string StringOr(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t IntOr(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

std::string WebhookEventId(std::string_view source_event_id, uint64_t source_offset,
                           int64_t trigger_id) {
  std::string data(source_event_id);
  data += '/' + std::to_string(source_offset) + '/' + std::to_string(trigger_id);
  std::string digest = HmacSha256("cairn-webhook-event", data);
  // A version-4-shaped UUID (RFC 4122 variant) from the digest's first 16 bytes.
  digest[6] = static_cast<char>((digest[6] & 0x0f) | 0x40);
  digest[8] = static_cast<char>((digest[8] & 0x3f) | 0x80);
  const std::string hex = HexLower(reinterpret_cast<const unsigned char*>(digest.data()), 16);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

std::string StateChangePayload(const std::string& event_id, int64_t timestamp,
                               const WebhookExperimentFacts& experiment) {
  Json body = Envelope(event_id, "EXPERIMENT_STATE_CHANGE", timestamp, experiment.state);
  body["event_data"] = Json::object();
  body["event_data"]["experiment"] = ExperimentJson(experiment);
  return GoJson(body);
}

std::string CustomPayload(const std::string& event_id, int64_t timestamp,
                          const WebhookExperimentFacts& experiment, const WebhookAlert& alert) {
  Json body = Envelope(event_id, "CUSTOM", timestamp, experiment.state);
  Json experiment_json = ExperimentJson(experiment);
  if (alert.trial_id != 0) experiment_json["trial_id"] = alert.trial_id;
  body["event_data"] = Json::object();
  body["event_data"]["experiment"] = experiment_json;
  body["event_data"]["custom_data"] = {
      {"title", alert.title}, {"description", alert.description}, {"level", alert.level}};
  return GoJson(body);
}

std::string TestPayload(const std::string& event_id, int64_t timestamp) {
  Json body = Envelope(event_id, "EXPERIMENT_STATE_CHANGE", timestamp, "COMPLETED");
  body["event_data"] = Json::object();
  body["event_data"]["data"] = "test";
  return GoJson(body);
}

std::string SlackTestPayload() {
  Json body = Json::object();
  body["blocks"] = Json::array({PlainSection("test")});
  return GoJson(body);
}

Result<std::string> SlackPayload(const std::string& default_payload, const std::string& base_url) {
  const Json body = Json::parse(default_payload, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("event_data") || !body["event_data"].is_object() ||
      !body["event_data"].contains("experiment")) {
    return Status::InvalidArgument("not a webhook payload about an experiment");
  }
  const Json& data = body["event_data"];
  const Json& experiment = data["experiment"];
  const std::string state = StringOr(experiment, "state");
  std::string status = "The status of your experiment is " + state;
  std::string color = "#009bde";
  std::string label = state;
  std::string prefix;
  if (state == "COMPLETED") {
    status = "Your experiment completed successfully \xF0\x9F\x8E\x89";  // party popper
    color = "#13B670";
    label = "Completed";
    prefix = "\xE2\x9C\x85 ";  // check mark
  } else if (state == "ERROR") {
    status = "Your experiment has stopped with errors";
    color = "#DD5040";
    label = "Errored";
    prefix = "\xE2\x9D\x8C ";  // cross mark
  }
  Json message = PlainSection(status);
  if (data.contains("custom_data")) {
    const Json& custom = data["custom_data"];
    message["fields"] = Json::array({Field("*Level*: " + StringOr(custom, "level")),
                                     Field("*Title*: " + StringOr(custom, "title")),
                                     Field("*Description*: " + StringOr(custom, "description"))});
  }
  const int64_t id = IntOr(experiment, "id");
  const std::string named = StringOr(experiment, "name") + " (#" + std::to_string(id) + ")";
  std::string title = prefix + named;
  if (!base_url.empty()) {
    std::string base = base_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    title = prefix + "<" + base + "/det/experiments/" + std::to_string(id) + "/overview | " +
            named + ">";
  }
  Json fields = Json::array({Field("*Status*: " + label),
                             Field("*Duration*: " + Duration(IntOr(experiment, "duration")))});
  if (const std::string workspace = StringOr(experiment, "workspace"); !workspace.empty()) {
    fields.push_back(Field("*Workspace*: " + workspace));
  }
  if (const std::string project = StringOr(experiment, "project"); !project.empty()) {
    fields.push_back(Field("*Project*: " + project));
  }
  if (const int64_t trial = IntOr(experiment, "trial_id"); trial > 0) {
    fields.push_back(Field("*Trial ID*: " + std::to_string(trial)));
  }
  Json details = {{"type", "section"}, {"text", {{"type", "mrkdwn"}, {"text", title}}}};
  details["fields"] = fields;
  Json attachment = Json::object();
  attachment["color"] = color;
  attachment["blocks"] = Json::array({details});
  Json slack = Json::object();
  slack["blocks"] = Json::array({message});
  slack["attachments"] = Json::array({attachment});
  return GoJson(slack);
}

std::string WebhookSignature(std::string_view signing_key, int64_t timestamp,
                             std::string_view body) {
  std::string message = std::to_string(timestamp);
  message += ',';
  message += body;
  const std::string mac = HmacSha256(signing_key, message);
  return HexLower(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
}

}  // namespace cairn::commands
