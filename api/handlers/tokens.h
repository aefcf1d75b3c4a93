// Long-lived access tokens (`det token create|list|describe|edit|revoke|login`), for CI jobs and
// scripts. A token authenticates as its user wherever a session does, until it expires or is
// revoked; it is shown once, at creation, and kept only as its SHA-256 (the write side's identity
// state and the log), never in a view or a log line. Who may: a user for their own tokens, an
// admin for anyone's; every change is an event with its actor.
#pragma once

#include "api/call.h"

namespace cairn::api {

// POST /api/v1/tokens {userId, lifespan?: Go duration | "-1" (the longest allowed),
// description?} -> {token, tokenId}
net::Response CreateAccessTokenRoute(Call& call);
// GET /api/v1/tokens?showInactive&username&tokenIds=N...&orderBy -> {tokenInfo: [...],
// pagination}: the active tokens (revoked and expired too with showInactive), by id.
net::Response ListAccessTokensRoute(Call& call);
// PATCH /api/v1/tokens/{tokenId} {description?, setRevoked?} -> {tokenInfo}
net::Response PatchAccessTokenRoute(Call& call);

}  // namespace cairn::api
