// Webhooks on the write side: the webhooks their events fold into, and the deliveries their
// triggers owe. Which events a webhook fires for is a pure function of the log: a trigger takes
// the events folded after its webhook's creation and before its deletion (webhook_state.h), so a
// replay owes exactly the deliveries the live master owed. A delivery stays owed until the
// shipper records its end (WebhookDeliveriesRecorded); then it is never sent again.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "events.pb.h"

namespace cairn::commands {

// A delivery: the event that fired it (its offset) and the trigger that took it.
using WebhookDeliveryKey = std::pair<uint64_t, int64_t>;

struct PendingWebhookDelivery {
  int64_t webhook_id = 0;
  // Determined's default (JSON) payload, built when the event was folded; a Slack webhook's
  // blocks are rendered from it when sent (webhook_payload.h).
  std::string body_json;
};

struct WebhookState {
  std::map<int64_t, events::WebhookCreated> webhooks;  // as they stand (URL as last updated)
  int64_t last_webhook_id = 0;
  int64_t last_trigger_id = 0;
  // Owed deliveries in log order (then trigger order): the order each webhook's are sent in.
  std::map<WebhookDeliveryKey, PendingWebhookDelivery> pending;

  const events::WebhookCreated* Find(int64_t webhook_id) const;
  // A webhook of `workspace_id` (0: global) named `name`, or nullptr.
  const events::WebhookCreated* FindNamed(int32_t workspace_id, const std::string& name) const;
};

}  // namespace cairn::commands
