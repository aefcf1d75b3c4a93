#include "commands/webhooks/webhook_decider.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/http_url.h"
#include "commands/tenancy/tenancy_decider.h"
#include "commands/webhooks/webhook_payload.h"
#include "commands/webhooks/webhook_state.h"

namespace cairn::commands {

namespace {

// Bounds on what a webhook carries: generous for people, small for the log.
constexpr size_t kMaxWebhookNameBytes = 255;
constexpr size_t kMaxTriggers = 32;
constexpr size_t kMaxConditionBytes = 4096;
constexpr size_t kMaxWebhooks = 10'000;
constexpr size_t kMaxAlertTitleBytes = 1024;
constexpr size_t kMaxAlertDescriptionBytes = 16 * 1024;

std::string NameOfWorkspace(const DecisionState& state, int32_t workspace_id) {
  if (workspace_id == 0) return "the global webhooks";
  const auto* workspace = state.tenancy.FindWorkspace(workspace_id);
  return "workspace " + (workspace != nullptr ? workspace->name : std::to_string(workspace_id));
}

// Determined's experiment states a state-change trigger may wait for.
bool IsExperimentStateName(const std::string& name) {
  events::ExperimentState state;
  return events::ExperimentState_Parse("EXPERIMENT_STATE_" + name, &state) &&
         state != events::EXPERIMENT_STATE_UNSPECIFIED;
}

Status CheckTrigger(const CreateWebhook::Trigger& trigger, events::WebhookMode mode, size_t index) {
  const std::string where = "triggers[" + std::to_string(index) + "]";
  if (trigger.condition_json.size() > kMaxConditionBytes) {
    return Status::InvalidArgument(where + ".condition: at most 4096 bytes");
  }
  auto condition = nlohmann::json::parse(trigger.condition_json, nullptr, false);
  if (!condition.is_object()) {
    return Status::InvalidArgument(where + ".condition must be a JSON object");
  }
  switch (trigger.type) {
    case events::TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE: {
      auto state = condition.find("state");
      if (condition.size() != 1 || state == condition.end() || !state->is_string() ||
          !IsExperimentStateName(state->get<std::string>())) {
        return Status::InvalidArgument(
            where +
            ".condition must be {\"state\": STATE}, STATE an experiment state such as COMPLETED, "
            "ERROR, CANCELED, PAUSED, ACTIVE or STOPPING_COMPLETED");
      }
      return Status::Ok();
    }
    case events::TRIGGER_TYPE_CUSTOM:
      if (mode != events::WEBHOOK_MODE_SPECIFIC) {
        return Status::InvalidArgument(
            where + ": a custom trigger only works on a webhook with mode WEBHOOK_MODE_SPECIFIC");
      }
      return Status::Ok();
    case events::TRIGGER_TYPE_TASK_LOG:
    case events::TRIGGER_TYPE_METRIC_THRESHOLD_EXCEEDED:
      return Status::NotSupported(where + ": " + events::WebhookTriggerType_Name(trigger.type) +
                                  " triggers are not supported by Cairn; use "
                                  "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE or TRIGGER_TYPE_CUSTOM");
    default:
      return Status::InvalidArgument(
          where +
          ".triggerType must be TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE or TRIGGER_TYPE_CUSTOM");
  }
}

Result<const events::WebhookCreated*> FindWebhook(const DecisionState& state, int64_t webhook_id) {
  const events::WebhookCreated* webhook = state.webhooks.Find(webhook_id);
  if (webhook == nullptr) {
    return Status::NotFound("webhook " + std::to_string(webhook_id) + " not found");
  }
  return webhook;
}

Decision One(events::Envelope event, std::string entity) {
  Decision decision{{}, std::move(entity)};
  decision.events.push_back(std::move(event));
  return decision;
}

Status MayEdit(const DecisionState& state, const UserRecord& user, int32_t workspace_id) {
  if (MayEditWebhooks(state.tenancy, user, workspace_id)) return Status::Ok();
  if (workspace_id == 0) {
    return Status::PermissionDenied("user " + user.username +
                                    " may not change global webhooks: it needs "
                                    "PERMISSION_TYPE_EDIT_WEBHOOKS cluster-wide (an admin)");
  }
  return Authorize(state.tenancy, user, Permission::kEditWebhooks, workspace_id,
                   "change the webhooks of " + NameOfWorkspace(state, workspace_id));
}

}  // namespace

std::string WebhookEntity(int64_t webhook_id) { return "webhook/" + std::to_string(webhook_id); }

namespace {

// Under basic authz a workspace's owner has the rights admins have over its webhooks.
bool OwnsWorkspaceUnderBasic(const TenancyState& tenancy, const UserRecord& user,
                             int32_t workspace_id) {
  if (tenancy.RolesApply() || workspace_id == 0) return false;
  const WorkspaceRecord* workspace = tenancy.FindWorkspace(workspace_id);
  return workspace != nullptr && workspace->owner_user_id == user.id;
}

}  // namespace

bool MayEditWebhooks(const TenancyState& tenancy, const UserRecord& user, int32_t workspace_id) {
  return tenancy.Allows(user, Permission::kEditWebhooks, workspace_id) ||
         OwnsWorkspaceUnderBasic(tenancy, user, workspace_id);
}

bool MayViewWebhooks(const TenancyState& tenancy, const UserRecord& user, int32_t workspace_id) {
  return workspace_id == 0 || tenancy.Allows(user, Permission::kViewWebhooks, workspace_id) ||
         OwnsWorkspaceUnderBasic(tenancy, user, workspace_id);
}

Result<Decision> DecideCommand(const DecisionState& state, const CreateWebhook& command,
                               const CommandMeta&) {
  if (command.name.empty() || command.name.size() > kMaxWebhookNameBytes ||
      HasControlCharacter(command.name)) {
    return Status::InvalidArgument("name must have 1 to 255 bytes and no control characters");
  }
  CAIRN_RETURN_IF_ERROR(ParseHttpUrl(command.url).status());
  if (command.type != events::WEBHOOK_TYPE_DEFAULT && command.type != events::WEBHOOK_TYPE_SLACK) {
    return Status::InvalidArgument(
        "webhookType must be WEBHOOK_TYPE_DEFAULT or WEBHOOK_TYPE_SLACK");
  }
  const events::WebhookMode mode = command.mode == events::WEBHOOK_MODE_UNSPECIFIED
                                       ? events::WEBHOOK_MODE_WORKSPACE
                                       : command.mode;
  if (command.triggers.empty()) {
    return Status::InvalidArgument("at least one trigger required");
  }
  if (command.triggers.size() > kMaxTriggers) {
    return Status::InvalidArgument("at most 32 triggers per webhook");
  }
  for (size_t i = 0; i < command.triggers.size(); ++i) {
    CAIRN_RETURN_IF_ERROR(CheckTrigger(command.triggers[i], mode, i));
  }
  if (command.workspace_id != 0 && state.tenancy.FindWorkspace(command.workspace_id) == nullptr) {
    return Status::NotFound("workspace " + std::to_string(command.workspace_id) + " not found");
  }
  if (state.webhooks.FindNamed(command.workspace_id, command.name) != nullptr) {
    return Status::AlreadyExists("a webhook named '" + command.name + "' exists in " +
                                 NameOfWorkspace(state, command.workspace_id));
  }
  if (state.webhooks.webhooks.size() >= kMaxWebhooks) {
    return Status::ResourceExhausted("the cluster has 10000 webhooks; delete some first");
  }
  events::Envelope event;
  auto* created = event.mutable_webhook_created();
  created->set_webhook_id(state.webhooks.last_webhook_id + 1);
  created->set_name(command.name);
  created->set_url(command.url);
  created->set_type(command.type);
  created->set_mode(mode);
  created->set_workspace_id(command.workspace_id);
  int64_t trigger_id = state.webhooks.last_trigger_id;
  for (const auto& trigger : command.triggers) {
    auto* stored = created->add_triggers();
    stored->set_trigger_id(++trigger_id);
    stored->set_type(trigger.type);
    stored->set_condition_json(nlohmann::json::parse(trigger.condition_json).dump());
  }
  return One(std::move(event), WebhookEntity(created->webhook_id()));
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateWebhook& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const events::WebhookCreated* webhook,
                         FindWebhook(state, command.webhook_id));
  CAIRN_RETURN_IF_ERROR(ParseHttpUrl(command.url).status());
  if (webhook->url() == command.url) return NoChange(WebhookEntity(command.webhook_id));
  events::Envelope event;
  auto* updated = event.mutable_webhook_updated();
  updated->set_webhook_id(command.webhook_id);
  updated->set_workspace_id(webhook->workspace_id());
  updated->set_url(command.url);
  return One(std::move(event), WebhookEntity(command.webhook_id));
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteWebhook& command,
                               const CommandMeta&) {
  CAIRN_ASSIGN_OR_RETURN(const events::WebhookCreated* webhook,
                         FindWebhook(state, command.webhook_id));
  events::Envelope event;
  event.mutable_webhook_deleted()->set_webhook_id(command.webhook_id);
  event.mutable_webhook_deleted()->set_workspace_id(webhook->workspace_id());
  return One(std::move(event), WebhookEntity(command.webhook_id));
}

Result<Decision> DecideCommand(const DecisionState& state, const RaiseWebhookAlert& command,
                               const CommandMeta& meta) {
  const std::string entity = std::to_string(command.experiment_id);
  const ExperimentRecord* experiment = state.FindExperiment(command.experiment_id);
  if (experiment == nullptr || experiment->deleted) {
    return Status::NotFound("experiment " + std::to_string(command.experiment_id) + " not found");
  }
  if (command.trial_id != 0) {
    const TrialRecord* trial = state.FindTrial(command.trial_id);
    if (trial == nullptr || trial->experiment_id != command.experiment_id) {
      return Status::InvalidArgument("trial " + std::to_string(command.trial_id) +
                                     " is not a trial of experiment " +
                                     std::to_string(command.experiment_id));
    }
  }
  if (command.title.size() > kMaxAlertTitleBytes ||
      command.description.size() > kMaxAlertDescriptionBytes) {
    return Status::InvalidArgument(
        "an alert's title has at most 1024 bytes, its description 16 KiB");
  }
  events::Envelope event;
  auto* raised = event.mutable_webhook_alert_raised();
  raised->set_experiment_id(command.experiment_id);
  raised->set_trial_id(command.trial_id);
  raised->set_title(command.title);
  raised->set_description(command.description);
  raised->set_level(command.level);
  event.set_time_unix_micros(meta.time_unix_micros);
  for (const auto& [id, webhook] : state.webhooks.webhooks) {
    if (!DeliveriesOwed(state, webhook, event).empty()) return One(std::move(event), entity);
  }
  return NoChange(entity);  // no custom trigger takes it: nothing to send, nothing to record
}

Result<Decision> DecideCommand(const DecisionState& state, const RecordWebhookDeliveries& command,
                               const CommandMeta&) {
  events::Envelope event;
  auto* recorded = event.mutable_webhook_deliveries_recorded();
  for (const auto& delivery : command.deliveries) {
    // One recorded already (a retried command) or whose webhook went is left out.
    if (state.webhooks.pending.count({delivery.source_offset(), delivery.trigger_id()}) == 0) {
      continue;
    }
    auto* stored = recorded->add_deliveries();
    *stored = delivery;
    const events::WebhookCreated* webhook = state.webhooks.Find(delivery.webhook_id());
    stored->set_workspace_id(webhook != nullptr ? webhook->workspace_id() : 0);
  }
  if (recorded->deliveries().empty()) return NoChange("webhooks");
  return One(std::move(event), "webhooks");
}

Status MayRun(const DecisionState& state, const UserRecord& user, const CreateWebhook& command) {
  return MayEdit(state, user, command.workspace_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateWebhook& command) {
  const events::WebhookCreated* webhook = state.webhooks.Find(command.webhook_id);
  return webhook == nullptr ? Status::Ok() : MayEdit(state, user, webhook->workspace_id());
}

Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteWebhook& command) {
  const events::WebhookCreated* webhook = state.webhooks.Find(command.webhook_id);
  return webhook == nullptr ? Status::Ok() : MayEdit(state, user, webhook->workspace_id());
}

Status MayRun(const DecisionState& state, const UserRecord& user,
              const RaiseWebhookAlert& command) {
  return AuthorizeExperimentChange(state, user, command.experiment_id);
}

Status MayRun(const DecisionState&, const UserRecord& user, const RecordWebhookDeliveries&) {
  return Status::PermissionDenied("user " + user.username +
                                  " may not record webhook deliveries: only the master does");
}

}  // namespace cairn::commands
