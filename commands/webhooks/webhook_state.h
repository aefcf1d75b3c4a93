// Folds webhook events, and the events webhooks fire for, into the decision state. A trigger
// takes an event when its webhook exists as the event is folded:
//   - ExperimentStateChanged: a TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE trigger whose condition's
//     state is the new state;
//   - WebhookAlertRaised: a TRIGGER_TYPE_CUSTOM trigger;
// of a webhook that matches the experiment (MatchesExperiment). Each take owes one delivery,
// whose default payload is built here from the state as of the event. Pure.
#pragma once

#include "commands/decision_state.h"
#include "commands/webhooks/webhook_records.h"

namespace cairn::commands {

// Whether `webhook` fires for `experiment` (Determined's rule): never when the experiment's
// integrations.webhooks.exclude is set; only for its own workspace's experiments when it has one;
// in mode SPECIFIC only for experiments that list its id or name in integrations.webhooks.
bool MatchesExperiment(const events::WebhookCreated& webhook, const ExperimentRecord& experiment);

// The delivery `event` owes through `webhook`'s triggers, as WebhookState::pending would hold
// them. For the decider of an alert (is any trigger taking it?) and for Apply.
std::map<WebhookDeliveryKey, PendingWebhookDelivery> DeliveriesOwed(
    const DecisionState& state, const events::WebhookCreated& webhook,
    const events::Envelope& event);

// Folds webhook events, and the deliveries ExperimentStateChanged and WebhookAlertRaised owe
// (call it after the experiment's own fold). Other events are ignored.
void ApplyWebhookEvent(DecisionState& state, const events::Envelope& event);

}  // namespace cairn::commands
