// The webhooks' decisions (commands/webhooks/webhook_commands.h) and who may run them. Pure,
// like the rest of the write side.
#pragma once

#include <string>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/webhooks/webhook_commands.h"

namespace cairn::commands {

// The entity of a webhook decision (Outcome::entity_id): "webhook/<id>"; an alert's is its
// experiment's id.
std::string WebhookEntity(int64_t webhook_id);

// A webhook has a name (1-255 bytes, unique in its workspace, or among the global ones), an
// http(s) URL with a host, a type and at least one trigger: a state change to one of the
// experiment states, or (mode SPECIFIC only) CUSTOM. TASK_LOG and METRIC_THRESHOLD_EXCEEDED
// triggers are refused as not supported. An alert no trigger takes records nothing.
Result<Decision> DecideCommand(const DecisionState& state, const CreateWebhook& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const UpdateWebhook& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DeleteWebhook& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const RaiseWebhookAlert& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const RecordWebhookDeliveries& command,
                               const CommandMeta& meta);

// Who may: create, change or delete a workspace's webhook, whoever holds
// PERMISSION_TYPE_EDIT_WEBHOOKS there (under basic authz: admins and the workspace's owner); a
// global webhook, cluster admins. Raise an alert: whoever may change the experiment (a trial's
// own token speaks for its allocation and is checked at the edge). Record deliveries: the master
// alone (system:webhooks), never a user.
Status MayRun(const DecisionState& state, const UserRecord& user, const CreateWebhook& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const UpdateWebhook& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteWebhook& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const RaiseWebhookAlert& command);
Status MayRun(const DecisionState& state, const UserRecord& user,
              const RecordWebhookDeliveries& command);

// Whether `user` may change webhooks of `workspace_id` (0: global ones), for the edge's reads
// (the list shows full URLs only to them).
bool MayEditWebhooks(const TenancyState& tenancy, const UserRecord& user, int32_t workspace_id);
// Whether `user` may see them: everyone sees the global ones; a workspace's, whoever holds
// PERMISSION_TYPE_VIEW_WEBHOOKS there (under basic authz, as in Determined, admins and the
// workspace's owner).
bool MayViewWebhooks(const TenancyState& tenancy, const UserRecord& user, int32_t workspace_id);

}  // namespace cairn::commands
