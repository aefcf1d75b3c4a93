// Users, sessions and login failures in the decision snapshot.
// The decision snapshot (commands/decision_snapshot.h) calls these for this room's records; every
// field is covered (the counts in identity_snapshot.cpp,
// tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include "commands/identity/identity.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

void EncodeIdentity(const IdentityState& identity, snapshot::Identity& out);

void DecodeIdentity(const snapshot::Identity& in, IdentityState& identity);

}  // namespace cairn::commands
