#include "commands/webhooks/webhook_snapshot.h"

#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(PendingWebhookDelivery, 2);
CAIRN_SNAPSHOT_COVERS(WebhookState, 4);

void EncodeWebhooks(const WebhookState& webhooks, snapshot::Webhooks& out) {
  for (const auto& [id, webhook] : webhooks.webhooks) *out.add_webhooks() = webhook;
  out.set_last_webhook_id(webhooks.last_webhook_id);
  out.set_last_trigger_id(webhooks.last_trigger_id);
  for (const auto& [key, delivery] : webhooks.pending) {
    auto* stored = out.add_pending();
    stored->set_source_offset(key.first);
    stored->set_trigger_id(key.second);
    stored->set_webhook_id(delivery.webhook_id);
    stored->set_body_json(delivery.body_json);
  }
}

void DecodeWebhooks(const snapshot::Webhooks& in, WebhookState& webhooks) {
  for (const auto& webhook : in.webhooks()) webhooks.webhooks[webhook.webhook_id()] = webhook;
  webhooks.last_webhook_id = in.last_webhook_id();
  webhooks.last_trigger_id = in.last_trigger_id();
  for (const auto& stored : in.pending()) {
    webhooks.pending[{stored.source_offset(), stored.trigger_id()}] =
        PendingWebhookDelivery{stored.webhook_id(), stored.body_json()};
  }
}

}  // namespace cairn::commands
