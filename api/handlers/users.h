// Users, as Determined's `det user` and SDK manage them. Anyone logged in may list and read
// users; only an admin creates users or changes another user; a user may change their own
// display name and password.
#pragma once

#include <nlohmann/json.hpp>

#include "api/call.h"
#include "commands/identity/identity.h"

namespace cairn::api {

// Body key `key`, a v1AgentUserGroup {agentUid, agentGid, agentUser, agentGroup}: the fields
// given (a user's link needs all four; a workspace's any).
Result<commands::PartialAgentUser> ReadAgentUserGroup(const nlohmann::json& body, const char* key);

net::Response ListUsers(Call& call);        // GET /api/v1/users
net::Response CreateUser(Call& call);       // POST /api/v1/users
net::Response GetUser(Call& call);          // GET /api/v1/users/{userId}
net::Response GetUserByName(Call& call);    // GET /api/v1/users/{username}/by-username
net::Response PatchUser(Call& call);        // PATCH /api/v1/users/{userId}
net::Response SetUserPassword(Call& call);  // POST /api/v1/users/{userId}/password

}  // namespace cairn::api
