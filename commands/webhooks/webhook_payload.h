// What a webhook sends, as Determined 0.38 sends it: the default JSON payloads, Slack's blocks,
// and the signature headers. Pure functions.
//
// Bodies are compact JSON in Determined's key order, with '<', '>' and '&' escaped as Go's
// encoding/json escapes them, so that a receiver written for Determined reads them unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::commands {

// What a payload says about an experiment.
struct WebhookExperimentFacts {
  int64_t id = 0;
  std::string state;  // Determined's name: "COMPLETED", "STOPPING_CANCELED", ...
  std::string name;
  int64_t duration_seconds = 0;  // from creation to its end; 0 until it ended
  std::string resource_pool;
  int32_t slots_per_trial = 0;
  std::string workspace;  // names, "" when unknown
  std::string project;
};

// A custom trigger's alert (core_context.alert()).
struct WebhookAlert {
  int64_t trial_id = 0;  // 0: none
  std::string title;
  std::string description;
  std::string level;  // "INFO", "WARNING", ...
};

// The payload's event_id: a UUID derived from the event that fired the delivery and the trigger
// that took it, so that every attempt (and a resend after a master restart) carries the same id
// and a receiver can drop what it already has.
std::string WebhookEventId(std::string_view source_event_id, uint64_t source_offset,
                           int64_t trigger_id);

// Determined's default payloads. `timestamp` is Unix seconds.
std::string StateChangePayload(const std::string& event_id, int64_t timestamp,
                               const WebhookExperimentFacts& experiment);
std::string CustomPayload(const std::string& event_id, int64_t timestamp,
                          const WebhookExperimentFacts& experiment, const WebhookAlert& alert);
// POST /api/v1/webhooks/{id}/test's payload.
std::string TestPayload(const std::string& event_id, int64_t timestamp);
// The Slack test message.
std::string SlackTestPayload();

// Slack's blocks for a default payload of StateChangePayload or CustomPayload. `base_url` (the
// master's webhooks.base_url, "" = none) links the experiment's name to its page.
Result<std::string> SlackPayload(const std::string& default_payload, const std::string& base_url);

// The headers a delivery is signed with.
inline constexpr const char* kSignatureHeader = "X-Determined-AI-Signature";
inline constexpr const char* kSignatureTimestampHeader = "X-Determined-AI-Signature-Timestamp";
// Lowercase hex HMAC-SHA-256 under `signing_key` of "<timestamp>,<body>".
std::string WebhookSignature(std::string_view signing_key, int64_t timestamp,
                             std::string_view body);

}  // namespace cairn::commands
