// An agent's record in the decision snapshot.
// The decision snapshot (commands/decision_snapshot.h) calls these for this room's records; every
// field is covered (the counts in agent_snapshot.cpp, tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include "commands/agents/agent_records.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

void EncodeAgent(const AgentRecord& agent, snapshot::Agent& out);

AgentRecord DecodeAgent(const snapshot::Agent& in);

}  // namespace cairn::commands
