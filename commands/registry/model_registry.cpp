#include "commands/registry/model_registry.h"

#include <algorithm>

namespace cairn::commands {
namespace {

ModelRecord* MutableModel(RegistryState& state, int32_t model_id) {
  auto it = state.models.find(model_id);
  return it == state.models.end() ? nullptr : &it->second;
}

void Register(RegistryState& state, const std::string& uuid) {
  ++state.registered_checkpoints[uuid];
}

void Unregister(RegistryState& state, const std::string& uuid) {
  auto it = state.registered_checkpoints.find(uuid);
  if (it != state.registered_checkpoints.end() && --it->second <= 0) {
    state.registered_checkpoints.erase(it);
  }
}

}  // namespace

const ModelRecord* RegistryState::FindModel(int32_t model_id) const {
  auto it = models.find(model_id);
  return it == models.end() ? nullptr : &it->second;
}

const ModelRecord* RegistryState::FindModel(std::string_view name) const {
  auto it = model_ids.find(name);
  return it == model_ids.end() ? nullptr : FindModel(it->second);
}

bool RegistryState::IsCheckpointRegistered(std::string_view uuid) const {
  return registered_checkpoints.find(uuid) != registered_checkpoints.end();
}

bool ApplyRegistryEvent(RegistryState& state, const events::Envelope& event) {
  using E = events::Envelope;
  switch (event.payload_case()) {
    case E::kModelCreated: {
      const auto& created = event.model_created();
      ModelRecord& model = state.models[created.model_id()];
      model.model_id = created.model_id();
      model.name = created.name();
      model.workspace_id = created.workspace_id();
      model.owner = created.username();
      state.model_ids[model.name] = model.model_id;
      state.last_model_id = std::max(state.last_model_id, created.model_id());
      return true;
    }
    case E::kModelUpdated: {
      const auto& updated = event.model_updated();
      ModelRecord* model = MutableModel(state, updated.model_id());
      if (model == nullptr) return true;
      if (updated.has_name()) {
        state.model_ids.erase(model->name);
        model->name = updated.name();
        state.model_ids[model->name] = model->model_id;
      }
      if (updated.has_archived()) model->archived = updated.archived();
      model->workspace_id = updated.workspace_id();
      return true;
    }
    case E::kModelDeleted: {
      ModelRecord* model = MutableModel(state, event.model_deleted().model_id());
      if (model == nullptr) return true;
      for (const auto& [number, version] : model->versions) {
        Unregister(state, version.checkpoint_uuid);
      }
      state.model_ids.erase(model->name);
      state.models.erase(model->model_id);
      return true;
    }
    case E::kModelVersionRegistered: {
      const auto& registered = event.model_version_registered();
      state.last_version_id = std::max(state.last_version_id, registered.version_id());
      ModelRecord* model = MutableModel(state, registered.model_id());
      if (model == nullptr) return true;
      model->last_version = std::max(model->last_version, registered.version());
      model->versions[registered.version()] = ModelVersionRecord{
          registered.version(), registered.checkpoint_uuid(), registered.username()};
      Register(state, registered.checkpoint_uuid());
      return true;
    }
    case E::kModelVersionUpdated:
      return true;  // names and notes: nothing the decider checks
    case E::kModelVersionDeleted: {
      const auto& deleted = event.model_version_deleted();
      ModelRecord* model = MutableModel(state, deleted.model_id());
      if (model == nullptr) return true;
      auto version = model->versions.find(deleted.version());
      if (version == model->versions.end()) return true;
      Unregister(state, version->second.checkpoint_uuid);
      model->versions.erase(version);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace cairn::commands
