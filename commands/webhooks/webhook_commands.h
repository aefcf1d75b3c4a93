// The webhooks' commands (commands/webhooks/webhook_records.h), decided by
// commands/webhooks/webhook_decider.h. The edge has read Determined's JSON into these; the
// decider checks them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events.pb.h"

namespace cairn::commands {

struct CreateWebhook {
  static constexpr const char* kName = "CreateWebhook";
  std::string name;
  std::string url;
  events::WebhookType type = events::WEBHOOK_TYPE_UNSPECIFIED;
  events::WebhookMode mode = events::WEBHOOK_MODE_UNSPECIFIED;  // unspecified: WORKSPACE
  int32_t workspace_id = 0;                                     // 0: global
  struct Trigger {
    events::WebhookTriggerType type = events::TRIGGER_TYPE_UNSPECIFIED;
    std::string condition_json = "{}";  // a JSON object's text
  };
  std::vector<Trigger> triggers;
};

struct UpdateWebhook {
  static constexpr const char* kName = "UpdateWebhook";
  int64_t webhook_id = 0;
  std::string url;
};

struct DeleteWebhook {
  static constexpr const char* kName = "DeleteWebhook";
  int64_t webhook_id = 0;
};

// A trial's core_context.alert(): recorded when some webhook's custom trigger takes it.
struct RaiseWebhookAlert {
  static constexpr const char* kName = "RaiseWebhookAlert";
  int64_t experiment_id = 0;
  int64_t trial_id = 0;
  std::string title;
  std::string description;
  std::string level = "INFO";
};

// The webhook shipper's (system:webhooks): these deliveries ended and are never sent again.
struct RecordWebhookDeliveries {
  static constexpr const char* kName = "RecordWebhookDeliveries";
  std::vector<events::WebhookDelivery> deliveries;
};

}  // namespace cairn::commands
