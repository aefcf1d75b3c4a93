// Workspaces, projects, roles and pool bindings in the decision snapshot.
// The decision snapshot (commands/decision_snapshot.h) calls these for this room's records; every
// field is covered (the counts in tenancy_snapshot.cpp, tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include "commands/tenancy/tenancy.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

void EncodeTenancy(const TenancyState& tenancy, snapshot::Tenancy& out);

void DecodeTenancy(const snapshot::Tenancy& in, TenancyState& tenancy);

}  // namespace cairn::commands
