// Experiments', trials' and checkpoints' records in the decision snapshot.
// The decision snapshot (commands/decision_snapshot.h) calls these for this room's records; every
// field is covered (the counts in experiment_snapshot.cpp,
// tests/commands/snapshot_coverage_test.cpp).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "commands/experiments/experiment_records.h"
#include "decision_snapshot.pb.h"

namespace cairn::commands {

// Parsed configurations by their JSON: experiments made from the same configuration share one
// (they are immutable), and each distinct one is parsed once per decoding.
using ConfigCache =
    std::unordered_map<std::string, std::shared_ptr<const experiments::ExperimentConfig>>;

void EncodeExperiment(const ExperimentRecord& experiment, snapshot::Experiment& out);

Result<ExperimentRecord> DecodeExperiment(snapshot::Experiment& in, ConfigCache& configs);

void EncodeTrial(const TrialRecord& trial, snapshot::Trial& out);

TrialRecord DecodeTrial(snapshot::Trial& in);

void EncodeCheckpoint(const CheckpointRecord& checkpoint, snapshot::Checkpoint& stored);

CheckpointRecord DecodeCheckpoint(const snapshot::Checkpoint& stored);

}  // namespace cairn::commands
