#include "api/handlers/webhooks.h"

#include "api/rest_util.h"
#include "commands/webhooks/webhook_decider.h"
#include "events/sealing.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// An enum given by name ("WEBHOOK_TYPE_SLACK") or number, as grpc-gateway takes it.
template <typename Enum>
Result<Enum> EnumField(const json* value, const std::string& path,
                       bool (*parse)(const std::string&, Enum*), bool (*valid)(int)) {
  if (value == nullptr) return static_cast<Enum>(0);
  Enum parsed{};
  if (value->is_string() && parse(value->get<std::string>(), &parsed)) return parsed;
  if (value->is_number_integer() && valid(value->get<int>())) {
    return static_cast<Enum>(value->get<int>());
  }
  return Status::InvalidArgument(path + ": unknown value " + value->dump());
}

json WebhookJson(const views::WebhookView& view, const Call& call) {
  const events::WebhookCreated& webhook = view.webhook();
  json triggers = json::array();
  for (const auto& trigger : webhook.triggers()) {
    json condition = json::parse(trigger.condition_json(), nullptr, false);
    triggers.push_back({{"id", trigger.trigger_id()},
                        {"triggerType", events::WebhookTriggerType_Name(trigger.type())},
                        {"condition", condition.is_object() ? condition : json::object()},
                        {"webhookId", webhook.webhook_id()}});
  }
  const bool editor =
      commands::MayEditWebhooks(call.tenancy(), call.user_record(), webhook.workspace_id());
  json last = nullptr;
  if (view.has_last_delivery()) {
    const auto& delivery = view.last_delivery();
    last = {{"outcome", events::WebhookDeliveryOutcome_Name(delivery.outcome())},
            {"httpStatus", delivery.http_status()},
            {"attempts", delivery.attempts()},
            {"detail", delivery.detail()},
            {"timeUnixMicros", view.last_delivery_time_unix_micros()}};
  }
  // The log keeps the URL sealed (events/sealing.h): its editors get it back whole.
  std::string url = RedactedWebhookUrl(webhook.url());
  if (editor) {
    auto opened = UnsealWebhookUrl(webhook.url(), call.services().sealer);
    if (opened.ok()) url = std::move(*opened);
  }
  return {{"id", webhook.webhook_id()},
          {"url", url},
          {"triggers", triggers},
          {"webhookType", events::WebhookType_Name(webhook.type())},
          {"name", webhook.name()},
          {"workspaceId", webhook.workspace_id()},
          {"mode", events::WebhookMode_Name(webhook.mode())},
          {"cairn",
           {{"createdBy", view.created_by()},
            {"delivered", view.delivered()},
            {"gaveUp", view.gave_up()},
            {"lastDelivery", last}}}};
}

bool MayView(const Call& call, int32_t workspace_id) {
  return commands::MayViewWebhooks(call.tenancy(), call.user_record(), workspace_id);
}

// The webhook the path names, when the caller may see it (else NotFound, as if absent).
Result<views::WebhookView> WebhookInPath(Call& call) {
  CAIRN_ASSIGN_OR_RETURN(int64_t id, ParseId(call.Param("id"), "webhook"));
  CAIRN_ASSIGN_OR_RETURN(auto view, call.services().projections->GetWebhook(id));
  if (!view || !MayView(call, view->webhook().workspace_id())) {
    return Status::NotFound("webhook " + std::to_string(id) + " not found");
  }
  return std::move(*view);
}

Result<commands::CreateWebhook> ReadWebhook(const json& body) {
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(body, "",
                                       {"id", "name", "url", "webhookType", "webhook_type", "mode",
                                        "workspaceId", "workspace_id", "triggers"}));
  commands::CreateWebhook command;
  CAIRN_ASSIGN_OR_RETURN(command.name, GetString(body, "name", "name", true));
  CAIRN_ASSIGN_OR_RETURN(command.url, GetString(body, "url", "url", true));
  CAIRN_ASSIGN_OR_RETURN(command.type,
                         EnumField<events::WebhookType>(
                             GatewayField(body, "webhookType", "webhook_type"), "webhookType",
                             events::WebhookType_Parse, events::WebhookType_IsValid));
  CAIRN_ASSIGN_OR_RETURN(command.mode, EnumField<events::WebhookMode>(
                                           GatewayField(body, "mode", "mode"), "mode",
                                           events::WebhookMode_Parse, events::WebhookMode_IsValid));
  const char* workspace_key = Present(body, "workspaceId") ? "workspaceId" : "workspace_id";
  CAIRN_ASSIGN_OR_RETURN(auto workspace, GetInt32(body, workspace_key, "workspaceId"));
  command.workspace_id = workspace.value_or(0);
  if (command.workspace_id < 0) return Status::InvalidArgument("workspaceId must not be negative");
  const json* triggers = GatewayField(body, "triggers", "triggers");
  if (triggers != nullptr && !triggers->is_array()) {
    return Status::InvalidArgument("triggers must be a list");
  }
  if (triggers != nullptr) {
    for (size_t i = 0; i < triggers->size(); ++i) {
      const json& trigger = (*triggers)[i];
      const std::string path = "triggers[" + std::to_string(i) + "]";
      if (!trigger.is_object()) return Status::InvalidArgument(path + " must be an object");
      CAIRN_RETURN_IF_ERROR(CheckKnownKeys(
          trigger, path + ".",
          {"id", "triggerType", "trigger_type", "condition", "webhookId", "webhook_id"}));
      commands::CreateWebhook::Trigger read;
      CAIRN_ASSIGN_OR_RETURN(read.type, EnumField<events::WebhookTriggerType>(
                                            GatewayField(trigger, "triggerType", "trigger_type"),
                                            path + ".triggerType", events::WebhookTriggerType_Parse,
                                            events::WebhookTriggerType_IsValid));
      const json* condition = GatewayField(trigger, "condition", "condition");
      if (condition != nullptr && !condition->is_object()) {
        return Status::InvalidArgument(path + ".condition must be an object");
      }
      read.condition_json = condition != nullptr ? condition->dump() : "{}";
      command.triggers.push_back(std::move(read));
    }
  }
  return command;
}

// Determined's log levels (v1LogLevel) as a payload names them.
Result<std::string> AlertLevel(const json* level) {
  if (level == nullptr) return std::string("INFO");
  constexpr std::string_view kPrefix = "LOG_LEVEL_";
  static const std::vector<std::string> kLevels = {"UNSPECIFIED", "TRACE", "DEBUG",   "INFO",
                                                   "WARNING",     "ERROR", "CRITICAL"};
  if (level->is_number_integer()) {
    const int index = level->get<int>();
    if (index >= 0 && index < static_cast<int>(kLevels.size())) return kLevels[index];
  }
  if (level->is_string()) {
    std::string name = level->get<std::string>();
    if (name.rfind(kPrefix, 0) == 0) name = name.substr(kPrefix.size());
    for (const auto& known : kLevels) {
      if (name == known) return name;
    }
  }
  return Status::InvalidArgument(
      "data.level must be one of LOG_LEVEL_TRACE, LOG_LEVEL_DEBUG, "
      "LOG_LEVEL_INFO, LOG_LEVEL_WARNING, LOG_LEVEL_ERROR, "
      "LOG_LEVEL_CRITICAL; got " +
      level->dump());
}

}  // namespace

net::Response ListWebhooks(Call& call) {
  auto webhooks = call.services().projections->ListWebhooks();
  if (!webhooks.ok()) return Error(webhooks.status());
  json shown = json::array();
  for (const auto& view : *webhooks) {
    if (MayView(call, view.webhook().workspace_id())) shown.push_back(WebhookJson(view, call));
  }
  return Ok({{"webhooks", shown}});
}

net::Response CreateWebhookRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto command = ReadWebhook(*body);
  if (!command.ok()) return Error(command.status());
  auto outcome = call.ExecuteAndShow(std::move(*command));
  if (!outcome.ok()) return Error(outcome.status());
  const int64_t id = std::stoll(outcome->entity_id.substr(std::string("webhook/").size()));
  auto view = call.services().projections->GetWebhook(id);
  if (!view.ok()) return Error(view.status());
  if (!*view) return Error(Status::Internal("webhook " + std::to_string(id) + " is not shown"));
  return Ok({{"webhook", WebhookJson(**view, call)}}, outcome->offset);
}

net::Response PatchWebhook(Call& call) {
  auto webhook = WebhookInPath(call);
  if (!webhook.ok()) return Error(webhook.status());
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"url"}); !known.ok()) return Error(known);
  auto url = GetString(*body, "url", "url", true);
  if (!url.ok()) return Error(url.status());
  auto outcome =
      call.ExecuteAndShow(commands::UpdateWebhook{webhook->webhook().webhook_id(), *url});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response DeleteWebhookRoute(Call& call) {
  auto webhook = WebhookInPath(call);
  if (!webhook.ok()) return Error(webhook.status());
  auto outcome = call.ExecuteAndShow(commands::DeleteWebhook{webhook->webhook().webhook_id()});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

net::Response TestWebhook(Call& call) {
  auto webhook = WebhookInPath(call);
  if (!webhook.ok()) return Error(webhook.status());
  const int32_t workspace_id = webhook->webhook().workspace_id();
  if (!commands::MayEditWebhooks(call.tenancy(), call.user_record(), workspace_id)) {
    return Error(Status::PermissionDenied("user " + call.user().username +
                                          " may not test webhook " +
                                          std::to_string(webhook->webhook().webhook_id()) +
                                          ": it needs PERMISSION_TYPE_EDIT_WEBHOOKS in its "
                                          "workspace (cluster-wide for a global one)"));
  }
  if (!call.services().test_webhook) {
    return Error(Status::NotSupported("this master sends no webhooks"));
  }
  Status sent = call.services().test_webhook(webhook->webhook());
  if (!sent.ok()) return Error(sent);
  return Ok({{"completed", true}});
}

net::Response PostWebhookAlert(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(
          *body, "", {"data", "experimentId", "experiment_id", "trialId", "trial_id"});
      !known.ok()) {
    return Error(known);
  }
  commands::RaiseWebhookAlert alert;
  const char* experiment_key = Present(*body, "experimentId") ? "experimentId" : "experiment_id";
  auto experiment = GetInt(*body, experiment_key, "experimentId");
  if (!experiment.ok()) return Error(experiment.status());
  if (!*experiment || **experiment <= 0) {
    return Error(Status::InvalidArgument("experimentId is required"));
  }
  alert.experiment_id = **experiment;
  const char* trial_key = Present(*body, "trialId") ? "trialId" : "trial_id";
  auto trial = GetInt(*body, trial_key, "trialId");
  if (!trial.ok()) return Error(trial.status());
  alert.trial_id = trial->value_or(0);
  const json* data = GatewayField(*body, "data", "data");
  if (data == nullptr || !data->is_object()) {
    return Error(Status::InvalidArgument("data is required: {title, description, level}"));
  }
  if (Status known = CheckKnownKeys(*data, "data.", {"title", "description", "level"});
      !known.ok()) {
    return Error(known);
  }
  auto title = GetString(*data, "title", "data.title", false);
  auto description = GetString(*data, "description", "data.description", false);
  auto level = AlertLevel(GatewayField(*data, "level", "level"));
  for (const Status& status : {title.status(), description.status(), level.status()}) {
    if (!status.ok()) return Error(status);
  }
  alert.title = *title;
  alert.description = *description;
  alert.level = *level;
  Result<commands::Outcome> outcome = Status::Internal("unset");
  if (!call.task_allocation().empty()) {
    // A trial speaks for its own experiment (and trial) only.
    auto run = call.services().writer->DescribeTrialRun(call.task_allocation());
    if (!run.ok() || run->experiment_id != alert.experiment_id ||
        (alert.trial_id != 0 && alert.trial_id != run->trial_id)) {
      return Error(Status::PermissionDenied(
          "this task's token may raise alerts only for its own trial's experiment"));
    }
    outcome = call.ExecuteAs(std::move(alert), call.AllocationActor());
  } else {
    outcome = call.Execute(std::move(alert));
  }
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

}  // namespace cairn::api
