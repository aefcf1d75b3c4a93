#include "commands/registry/registry_snapshot.h"

#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(ModelVersionRecord, 3);
CAIRN_SNAPSHOT_COVERS(ModelRecord, 7);
CAIRN_SNAPSHOT_COVERS(RegistryState, 5);

void EncodeRegistry(const RegistryState& registry, snapshot::Registry& out) {
  for (const auto& [id, model] : registry.models) {
    auto* stored = out.add_models();
    stored->set_model_id(model.model_id);
    stored->set_name(model.name);
    stored->set_workspace_id(model.workspace_id);
    stored->set_owner(model.owner);
    stored->set_archived(model.archived);
    stored->set_last_version(model.last_version);
    for (const auto& [number, version] : model.versions) {
      auto* stored_version = stored->add_versions();
      stored_version->set_version(version.version);
      stored_version->set_checkpoint_uuid(version.checkpoint_uuid);
      stored_version->set_owner(version.owner);
    }
  }
  out.set_last_model_id(registry.last_model_id);
  out.set_last_version_id(registry.last_version_id);
  for (const auto& [uuid, count] : registry.registered_checkpoints) {
    auto* stored = out.add_registered_checkpoints();
    stored->set_uuid(uuid);
    stored->set_count(count);
  }
}

void DecodeRegistry(const snapshot::Registry& in, RegistryState& registry) {
  for (const auto& stored : in.models()) {
    ModelRecord& model = registry.models[stored.model_id()];
    model.model_id = stored.model_id();
    model.name = stored.name();
    model.workspace_id = stored.workspace_id();
    model.owner = stored.owner();
    model.archived = stored.archived();
    model.last_version = stored.last_version();
    for (const auto& version : stored.versions()) {
      model.versions[version.version()] =
          ModelVersionRecord{version.version(), version.checkpoint_uuid(), version.owner()};
    }
    registry.model_ids[model.name] = model.model_id;
  }
  registry.last_model_id = in.last_model_id();
  registry.last_version_id = in.last_version_id();
  for (const auto& stored : in.registered_checkpoints()) {
    registry.registered_checkpoints[stored.uuid()] = stored.count();
  }
}

}  // namespace cairn::commands
