// The webhooks projection: each webhook as it stands and how its deliveries went, keyed
// "webhook/<id, 20 digits>" -> views::WebhookView (a deletion removes it). What a webhook still
// owes is the writer's to know (commands/webhooks/webhook_records.h), not this view's.
#pragma once

#include <optional>
#include <vector>

#include "projections/projector.h"
#include "views.pb.h"

namespace cairn::projections {

inline const std::string kWebhooksProjector = "webhooks";

class WebhookProjector : public Projector {
 public:
  const std::string& name() const override { return kWebhooksProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

Result<std::optional<views::WebhookView>> ReadWebhook(ViewReader& reader, int64_t webhook_id);
// Every webhook, by id.
Result<std::vector<views::WebhookView>> ReadWebhooks(ViewReader& reader);

}  // namespace cairn::projections
