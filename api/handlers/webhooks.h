// Determined's webhooks (/api/v1/webhooks, as 0.38 defines them; no `det` command uses them:
// Determined's web UI and Python bindings do, and core_context.alert() posts custom triggers).
// Reads come from the webhooks projection; changes are commands (commands/webhooks/). Who may:
//   list: everyone sees the global webhooks and those of workspaces where they hold
//     PERMISSION_TYPE_VIEW_WEBHOOKS; the whole URL only where they may edit (else its scheme
//     and host);
//   create, change, delete, test: PERMISSION_TYPE_EDIT_WEBHOOKS in the webhook's workspace
//     (global ones: cluster-wide, i.e. admins; under basic authz also the workspace's owner);
//   custom: a trial's own task token for its experiment, or a user who may change the
//     experiment.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ListWebhooks(Call& call);        // GET /api/v1/webhooks
net::Response CreateWebhookRoute(Call& call);  // POST /api/v1/webhooks
net::Response PatchWebhook(Call& call);        // PATCH /api/v1/webhooks/{id}
net::Response DeleteWebhookRoute(Call& call);  // DELETE /api/v1/webhooks/{id}
net::Response TestWebhook(Call& call);         // POST /api/v1/webhooks/{id}/test
net::Response PostWebhookAlert(Call& call);    // POST /api/v1/webhooks/custom

}  // namespace cairn::api
