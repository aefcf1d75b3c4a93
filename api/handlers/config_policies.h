// Config policies (`det config-policies describe|set|delete [-w WORKSPACE] experiment|tasks`):
// an invariant configuration merged over every submission of a kind and constraints checked
// against it (commands/policies/config_policies.h). Global ones: cluster admins set them, every
// user reads them; a workspace's: its admins set them, whoever may view it reads them. Each
// change is an event with its actor.
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET|PUT|DELETE /api/v1/config-policies/global/{workloadType} and
// /api/v1/config-policies/workspaces/{workspaceId}/{workloadType} (EXPERIMENT or NTSC). PUT takes
// {workloadType, configPolicies: YAML or JSON text}; GET and PUT answer {configPolicies: {
// invariant_config?, constraints?}} ({} when none are set); DELETE answers {}.
net::Response GetConfigPoliciesRoute(Call& call);
net::Response PutConfigPoliciesRoute(Call& call);
net::Response DeleteConfigPoliciesRoute(Call& call);

}  // namespace cairn::api
