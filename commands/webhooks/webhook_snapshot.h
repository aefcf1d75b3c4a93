// The webhooks in the decision snapshot (commands/decision_snapshot.h); every field is covered
// (the counts in webhook_snapshot.cpp, tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include "commands/webhooks/webhook_records.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

void EncodeWebhooks(const WebhookState& webhooks, snapshot::Webhooks& out);

void DecodeWebhooks(const snapshot::Webhooks& in, WebhookState& webhooks);

}  // namespace cairn::commands
