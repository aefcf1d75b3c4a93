// The model registry on the write side: the models and versions their events fold into, what
// the decider checks names and references against, and which checkpoints registered versions
// keep from garbage collection. Pure, like the rest of the decision state.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "events.pb.h"

namespace cairn::commands {

struct ModelVersionRecord {
  int32_t version = 0;
  std::string checkpoint_uuid;
  std::string owner;  // the username who registered it
};

struct ModelRecord {
  int32_t model_id = 0;
  std::string name;
  int32_t workspace_id = 0;
  std::string owner;  // username
  bool archived = false;
  int32_t last_version = 0;  // version numbers are never reused
  std::map<int32_t, ModelVersionRecord> versions;
};

struct RegistryState {
  std::map<int32_t, ModelRecord> models;
  std::map<std::string, int32_t, std::less<>> model_ids;  // by name
  int32_t last_model_id = 0;
  int32_t last_version_id = 0;
  // How many versions (of any model) point at each checkpoint; no entry for none.
  std::map<std::string, int32_t, std::less<>> registered_checkpoints;

  const ModelRecord* FindModel(int32_t model_id) const;
  const ModelRecord* FindModel(std::string_view name) const;
  // Whether a version of a model points at the checkpoint: garbage collection keeps it, and so
  // does deleting its experiment.
  bool IsCheckpointRegistered(std::string_view uuid) const;
};

// Folds a registry event into the state. Returns false for other payloads.
bool ApplyRegistryEvent(RegistryState& state, const events::Envelope& event);

}  // namespace cairn::commands
