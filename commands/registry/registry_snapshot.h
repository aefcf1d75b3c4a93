// The model registry in the decision snapshot.
// The decision snapshot (commands/decision_snapshot.h) calls these for this room's records; every
// field is covered (the counts in registry_snapshot.cpp,
// tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include "commands/registry/model_registry.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

void EncodeRegistry(const RegistryState& registry, snapshot::Registry& out);

void DecodeRegistry(const snapshot::Registry& in, RegistryState& registry);

}  // namespace cairn::commands
