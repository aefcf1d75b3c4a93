// An OpenPAI job's record in the decision snapshot.
// The decision snapshot (commands/decision_snapshot.h) calls these for this room's records; every
// field is covered (the counts in pai_snapshot.cpp, tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include "commands/pai/pai_records.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

void EncodePaiJob(const PaiJobRecord& job, snapshot::PaiJob& out);

PaiJobRecord DecodePaiJob(const snapshot::PaiJob& in);

}  // namespace cairn::commands
