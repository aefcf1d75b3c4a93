#include "projections/webhook_projector.h"

#include <cstdio>

#include "projections/view_reads.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kWebhookPrefix = "webhook/";

std::string WebhookKey(int64_t webhook_id) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%020lld", static_cast<long long>(webhook_id));
  return std::string(kWebhookPrefix) + digits;
}

}  // namespace

Status WebhookProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kWebhookCreated: {
      views::WebhookView view;
      *view.mutable_webhook() = event.webhook_created();
      view.set_created_by(event.actor());
      view.set_creation_time_unix_micros(event.time_unix_micros());
      return store.PutMessage(WebhookKey(event.webhook_created().webhook_id()), view);
    }
    case Envelope::kWebhookUpdated: {
      const std::string key = WebhookKey(event.webhook_updated().webhook_id());
      views::WebhookView view;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &view));
      if (!found) return Status::Ok();
      view.mutable_webhook()->set_url(event.webhook_updated().url());
      return store.PutMessage(key, view);
    }
    case Envelope::kWebhookDeleted:
      return store.Delete(WebhookKey(event.webhook_deleted().webhook_id()));
    case Envelope::kWebhookDeliveriesRecorded:
      for (const auto& delivery : event.webhook_deliveries_recorded().deliveries()) {
        const std::string key = WebhookKey(delivery.webhook_id());
        views::WebhookView view;
        CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &view));
        if (!found) continue;
        if (delivery.outcome() == events::WEBHOOK_DELIVERY_OUTCOME_DELIVERED) {
          view.set_delivered(view.delivered() + 1);
        } else {
          view.set_gave_up(view.gave_up() + 1);
        }
        *view.mutable_last_delivery() = delivery;
        view.set_last_delivery_time_unix_micros(event.time_unix_micros());
        CAIRN_RETURN_IF_ERROR(store.PutMessage(key, view));
      }
      return Status::Ok();
    default:
      return Status::Ok();
  }
}

Result<std::optional<views::WebhookView>> ReadWebhook(ViewReader& reader, int64_t webhook_id) {
  return ReadView<views::WebhookView>(reader, WebhookKey(webhook_id));
}

Result<std::vector<views::WebhookView>> ReadWebhooks(ViewReader& reader) {
  return ScanViews<views::WebhookView>(reader, kWebhookPrefix);
}

}  // namespace cairn::projections
