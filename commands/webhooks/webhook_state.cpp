#include "commands/webhooks/webhook_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands/webhooks/webhook_payload.h"

namespace cairn::commands {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;

// Determined's name of an experiment state: "COMPLETED", "STOPPING_CANCELED", ...
std::string StateName(events::ExperimentState state) {
  constexpr std::string_view kPrefix = "EXPERIMENT_STATE_";
  const std::string& name = events::ExperimentState_Name(state);
  return name.rfind(kPrefix, 0) == 0 ? name.substr(kPrefix.size()) : name;
}

// The state a trigger of TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE waits for ("" when none).
std::string ConditionState(const events::WebhookTrigger& trigger) {
  auto condition = nlohmann::json::parse(trigger.condition_json(), nullptr, false);
  if (!condition.is_object()) return "";
  auto state = condition.find("state");
  return state != condition.end() && state->is_string() ? state->get<std::string>() : "";
}

WebhookExperimentFacts FactsOf(const DecisionState& state, const ExperimentRecord& experiment,
                               int64_t now_unix_micros) {
  WebhookExperimentFacts facts;
  facts.id = experiment.experiment_id;
  facts.state = StateName(experiment.state);
  facts.name = experiment.name;
  if (experiment.terminal() && experiment.created_unix_micros > 0) {
    facts.duration_seconds =
        std::max<int64_t>(0, now_unix_micros - experiment.created_unix_micros) / kMicrosPerSecond;
  }
  if (const JobRecord* job = state.FindJob(experiment.job_id)) {
    facts.resource_pool = job->resource_pool;
  }
  facts.slots_per_trial = experiment.slots_per_trial;
  if (const auto* workspace = state.tenancy.FindWorkspace(experiment.workspace_id)) {
    facts.workspace = workspace->name;
  }
  if (const auto* project = state.tenancy.FindProject(experiment.project_id)) {
    facts.project = project->name;
  }
  return facts;
}

}  // namespace

const events::WebhookCreated* WebhookState::Find(int64_t webhook_id) const {
  auto it = webhooks.find(webhook_id);
  return it == webhooks.end() ? nullptr : &it->second;
}

const events::WebhookCreated* WebhookState::FindNamed(int32_t workspace_id,
                                                      const std::string& name) const {
  for (const auto& [id, webhook] : webhooks) {
    if (webhook.workspace_id() == workspace_id && webhook.name() == name) return &webhook;
  }
  return nullptr;
}

bool MatchesExperiment(const events::WebhookCreated& webhook, const ExperimentRecord& experiment) {
  static const experiments::WebhookIntegration kNone;
  const auto& integration = experiment.config ? experiment.config->webhooks : kNone;
  if (integration.exclude) return false;
  if (webhook.workspace_id() != 0 && webhook.workspace_id() != experiment.workspace_id) {
    return false;
  }
  if (webhook.mode() != events::WEBHOOK_MODE_SPECIFIC) return true;
  const auto& ids = integration.webhook_ids;
  const auto& names = integration.webhook_names;
  return std::find(ids.begin(), ids.end(), webhook.webhook_id()) != ids.end() ||
         std::find(names.begin(), names.end(), webhook.name()) != names.end();
}

std::map<WebhookDeliveryKey, PendingWebhookDelivery> DeliveriesOwed(
    const DecisionState& state, const events::WebhookCreated& webhook,
    const events::Envelope& event) {
  std::map<WebhookDeliveryKey, PendingWebhookDelivery> owed;
  const bool state_change = event.has_experiment_state_changed();
  if (!state_change && !event.has_webhook_alert_raised()) return owed;
  const int64_t experiment_id = state_change ? event.experiment_state_changed().experiment_id()
                                             : event.webhook_alert_raised().experiment_id();
  const ExperimentRecord* experiment = state.FindExperiment(experiment_id);
  if (experiment == nullptr || !MatchesExperiment(webhook, *experiment)) return owed;
  const int64_t timestamp = event.time_unix_micros() / kMicrosPerSecond;
  // What the payloads say of the experiment, made once and only when a trigger takes the event.
  std::optional<WebhookExperimentFacts> facts;
  const auto facts_of_experiment = [&]() -> const WebhookExperimentFacts& {
    if (!facts) facts = FactsOf(state, *experiment, event.time_unix_micros());
    return *facts;
  };
  const std::string new_state = StateName(experiment->state);
  for (const auto& trigger : webhook.triggers()) {
    const bool takes = state_change
                           ? trigger.type() == events::TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE &&
                                 ConditionState(trigger) == new_state
                           : trigger.type() == events::TRIGGER_TYPE_CUSTOM;
    if (!takes) continue;
    const std::string event_id =
        WebhookEventId(event.event_id(), event.offset(), trigger.trigger_id());
    std::string body;
    if (state_change) {
      body = StateChangePayload(event_id, timestamp, facts_of_experiment());
    } else {
      const auto& raised = event.webhook_alert_raised();
      body = CustomPayload(
          event_id, timestamp, facts_of_experiment(),
          WebhookAlert{raised.trial_id(), raised.title(), raised.description(), raised.level()});
    }
    owed[{event.offset(), trigger.trigger_id()}] =
        PendingWebhookDelivery{webhook.webhook_id(), std::move(body)};
  }
  return owed;
}

void ApplyWebhookEvent(DecisionState& state, const events::Envelope& event) {
  WebhookState& webhooks = state.webhooks;
  using E = events::Envelope;
  switch (event.payload_case()) {
    case E::kWebhookCreated: {
      const auto& created = event.webhook_created();
      webhooks.webhooks[created.webhook_id()] = created;
      webhooks.last_webhook_id = std::max(webhooks.last_webhook_id, created.webhook_id());
      for (const auto& trigger : created.triggers()) {
        webhooks.last_trigger_id = std::max(webhooks.last_trigger_id, trigger.trigger_id());
      }
      return;
    }
    case E::kWebhookUpdated: {
      auto it = webhooks.webhooks.find(event.webhook_updated().webhook_id());
      if (it != webhooks.webhooks.end()) it->second.set_url(event.webhook_updated().url());
      return;
    }
    case E::kWebhookDeleted: {
      const int64_t id = event.webhook_deleted().webhook_id();
      webhooks.webhooks.erase(id);
      std::erase_if(webhooks.pending,
                    [id](const auto& entry) { return entry.second.webhook_id == id; });
      return;
    }
    case E::kWebhookDeliveriesRecorded:
      for (const auto& delivery : event.webhook_deliveries_recorded().deliveries()) {
        webhooks.pending.erase({delivery.source_offset(), delivery.trigger_id()});
      }
      return;
    case E::kExperimentStateChanged:
    case E::kWebhookAlertRaised:
      for (const auto& [id, webhook] : webhooks.webhooks) {
        webhooks.pending.merge(DeliveriesOwed(state, webhook, event));
      }
      return;
    default:
      return;
  }
}

}  // namespace cairn::commands
