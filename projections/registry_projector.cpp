#include "projections/registry_projector.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>

#include "projections/view_reads.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kModelPrefix = "model/";
constexpr std::string_view kModelNamePrefix = "model-name/";
constexpr std::string_view kVersionPrefix = "version/";

// Zero-padded, so a scan returns models by id and a model's versions by number.
std::string Padded(int32_t number) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%010d", number);
  return digits;
}

std::string ModelKey(int32_t model_id) { return std::string(kModelPrefix) + Padded(model_id); }

std::string ModelNameKey(const std::string& name) { return std::string(kModelNamePrefix) + name; }

std::string VersionsPrefix(int32_t model_id) {
  return std::string(kVersionPrefix) + Padded(model_id) + "/";
}

std::string VersionKey(int32_t model_id, int32_t version) {
  return VersionsPrefix(model_id) + Padded(version);
}

// Reads the model, lets `change` edit it, and writes it back stamped with the event's time. A
// model the projection does not know is left alone (the decider never names one).
Status UpdateModel(ViewStore& store, int32_t model_id, const Envelope& event,
                   const std::function<void(views::ModelView&)>& change) {
  views::ModelView model;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(ModelKey(model_id), &model));
  if (!found) return Status::Ok();
  change(model);
  model.set_last_updated_time_unix_micros(event.time_unix_micros());
  return store.PutMessage(ModelKey(model_id), model);
}

// The same for a version; its model's last update moves with it.
Status UpdateVersion(ViewStore& store, int32_t model_id, int32_t number, const Envelope& event,
                     const std::function<void(views::ModelVersionView&)>& change) {
  views::ModelVersionView version;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(VersionKey(model_id, number), &version));
  if (!found) return Status::Ok();
  change(version);
  version.set_last_updated_time_unix_micros(event.time_unix_micros());
  CAIRN_RETURN_IF_ERROR(store.PutMessage(VersionKey(model_id, number), version));
  return UpdateModel(store, model_id, event, [](views::ModelView&) {});
}

template <typename Labels>
void ReplaceLabels(google::protobuf::RepeatedPtrField<std::string>* out, const Labels& labels) {
  out->Clear();
  for (const auto& label : labels) *out->Add() = label;
}

Status ApplyModelCreated(const Envelope& event, ViewStore& store) {
  const auto& created = event.model_created();
  views::ModelView model;
  model.set_id(created.model_id());
  model.set_name(created.name());
  model.set_description(created.description());
  ReplaceLabels(model.mutable_labels(), created.labels());
  model.set_metadata_json(created.metadata_json());
  model.set_notes(created.notes());
  model.set_workspace_id(created.workspace_id());
  model.set_user_id(created.user_id());
  model.set_username(created.username());
  model.set_creation_time_unix_micros(event.time_unix_micros());
  model.set_last_updated_time_unix_micros(event.time_unix_micros());
  CAIRN_RETURN_IF_ERROR(store.PutMessage(ModelKey(created.model_id()), model));
  return store.Put(ModelNameKey(created.name()), std::to_string(created.model_id()));
}

Status ApplyModelUpdated(const Envelope& event, ViewStore& store) {
  const auto& updated = event.model_updated();
  std::string old_name;
  CAIRN_RETURN_IF_ERROR(UpdateModel(store, updated.model_id(), event, [&](views::ModelView& model) {
    old_name = model.name();
    if (updated.has_name()) model.set_name(updated.name());
    if (updated.has_description()) model.set_description(updated.description());
    if (updated.has_labels()) ReplaceLabels(model.mutable_labels(), updated.labels().labels());
    if (updated.has_metadata_json()) model.set_metadata_json(updated.metadata_json());
    if (updated.has_notes()) model.set_notes(updated.notes());
    if (updated.has_archived()) model.set_archived(updated.archived());
    model.set_workspace_id(updated.workspace_id());
  }));
  if (!updated.has_name() || old_name.empty()) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(store.Delete(ModelNameKey(old_name)));
  return store.Put(ModelNameKey(updated.name()), std::to_string(updated.model_id()));
}

Status ApplyModelDeleted(const Envelope& event, ViewStore& store) {
  const int32_t model_id = event.model_deleted().model_id();
  views::ModelView model;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(ModelKey(model_id), &model));
  if (!found) return Status::Ok();
  for (int32_t version : model.versions()) {
    CAIRN_RETURN_IF_ERROR(store.Delete(VersionKey(model_id, version)));
  }
  CAIRN_RETURN_IF_ERROR(store.Delete(ModelNameKey(model.name())));
  return store.Delete(ModelKey(model_id));
}

Status ApplyVersionRegistered(const Envelope& event, ViewStore& store) {
  const auto& registered = event.model_version_registered();
  bool model_found = false;
  CAIRN_RETURN_IF_ERROR(
      UpdateModel(store, registered.model_id(), event, [&](views::ModelView& model) {
        model_found = true;
        model.add_versions(registered.version());
      }));
  if (!model_found) return Status::Ok();
  views::ModelVersionView version;
  version.set_id(registered.version_id());
  version.set_model_id(registered.model_id());
  version.set_version(registered.version());
  version.set_checkpoint_uuid(registered.checkpoint_uuid());
  version.set_name(registered.name());
  version.set_comment(registered.comment());
  version.set_notes(registered.notes());
  version.set_metadata_json(registered.metadata_json());
  ReplaceLabels(version.mutable_labels(), registered.labels());
  version.set_user_id(registered.user_id());
  version.set_username(registered.username());
  version.set_creation_time_unix_micros(event.time_unix_micros());
  version.set_last_updated_time_unix_micros(event.time_unix_micros());
  return store.PutMessage(VersionKey(registered.model_id(), registered.version()), version);
}

Status ApplyVersionUpdated(const Envelope& event, ViewStore& store) {
  const auto& updated = event.model_version_updated();
  return UpdateVersion(store, updated.model_id(), updated.version(), event,
                       [&](views::ModelVersionView& version) {
                         if (updated.has_name()) version.set_name(updated.name());
                         if (updated.has_comment()) version.set_comment(updated.comment());
                         if (updated.has_notes()) version.set_notes(updated.notes());
                         if (updated.has_metadata_json()) {
                           version.set_metadata_json(updated.metadata_json());
                         }
                         if (updated.has_labels()) {
                           ReplaceLabels(version.mutable_labels(), updated.labels().labels());
                         }
                       });
}

Status ApplyVersionDeleted(const Envelope& event, ViewStore& store) {
  const auto& deleted = event.model_version_deleted();
  CAIRN_RETURN_IF_ERROR(store.Delete(VersionKey(deleted.model_id(), deleted.version())));
  return UpdateModel(store, deleted.model_id(), event, [&](views::ModelView& model) {
    auto* versions = model.mutable_versions();
    versions->erase(std::remove(versions->begin(), versions->end(), deleted.version()),
                    versions->end());
  });
}

}  // namespace

Status RegistryProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kModelCreated:
      return ApplyModelCreated(event, store);
    case Envelope::kModelUpdated:
      return ApplyModelUpdated(event, store);
    case Envelope::kModelDeleted:
      return ApplyModelDeleted(event, store);
    case Envelope::kModelVersionRegistered:
      return ApplyVersionRegistered(event, store);
    case Envelope::kModelVersionUpdated:
      return ApplyVersionUpdated(event, store);
    case Envelope::kModelVersionDeleted:
      return ApplyVersionDeleted(event, store);
    default:
      return Status::Ok();
  }
}

Result<std::optional<views::ModelView>> ReadModel(ViewReader& reader, int32_t model_id) {
  return ReadView<views::ModelView>(reader, ModelKey(model_id));
}

Result<std::optional<views::ModelView>> ReadModelByName(ViewReader& reader,
                                                        const std::string& name) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<std::string> id, reader.Get(ModelNameKey(name)));
  if (!id) return std::optional<views::ModelView>();
  int32_t model_id = 0;
  auto [end, error] = std::from_chars(id->data(), id->data() + id->size(), model_id);
  if (error != std::errc() || end != id->data() + id->size()) {
    return Status::Corruption("registry: the id of model " + name + " is '" + *id + "'");
  }
  return ReadModel(reader, model_id);
}

Result<std::vector<views::ModelView>> ReadModels(ViewReader& reader) {
  return ScanViews<views::ModelView>(reader, kModelPrefix);
}

Result<std::vector<views::ModelVersionView>> ReadModelVersions(ViewReader& reader,
                                                               int32_t model_id) {
  return ScanViews<views::ModelVersionView>(reader, VersionsPrefix(model_id));
}

Result<std::optional<views::ModelVersionView>> ReadModelVersion(ViewReader& reader,
                                                                int32_t model_id, int32_t version) {
  return ReadView<views::ModelVersionView>(reader, VersionKey(model_id, version));
}

}  // namespace cairn::projections
