#include "commands/registry/registry_decider.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "commands/tenancy/tenancy_decider.h"

namespace cairn::commands {
namespace {

// Bounds on what a model or version carries: generous for people, small for the log.
constexpr size_t kMaxNameBytes = 255;
constexpr size_t kMaxTextBytes = 8 * 1024;     // a description, a comment
constexpr size_t kMaxNotesBytes = 256 * 1024;  // notes and metadata: a README's worth
constexpr size_t kMaxLabels = 100;

// A model name addresses the model in paths (/api/v1/models/{name}), where a number is its id.
Status CheckModelName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameBytes) {
    return Status::InvalidArgument("a model name must have 1 to " + std::to_string(kMaxNameBytes) +
                                   " bytes");
  }
  if (name.find_first_not_of(' ') == std::string::npos) {
    return Status::InvalidArgument("a model name must not be only spaces");
  }
  if (HasControlCharacter(name) || name.find('/') != std::string::npos) {
    return Status::InvalidArgument("model name '" + name +
                                   "' must not contain '/' or control characters");
  }
  if (name.find_first_not_of("0123456789") == std::string::npos) {
    return Status::InvalidArgument("model name '" + name +
                                   "' must not be a number: a number in a path is a model's id");
  }
  return Status::Ok();
}

Status CheckText(const std::string& field, const std::string& text, size_t limit) {
  if (text.size() > limit) {
    return Status::InvalidArgument(field + " must have at most " + std::to_string(limit) +
                                   " bytes");
  }
  return Status::Ok();
}

Status CheckVersionName(const std::string& name) {
  CAIRN_RETURN_IF_ERROR(CheckText("name", name, kMaxNameBytes));
  if (HasControlCharacter(name)) {
    return Status::InvalidArgument("name must not contain control characters");
  }
  return Status::Ok();
}

Status CheckLabels(const std::vector<std::string>& labels) {
  if (labels.size() > kMaxLabels) {
    return Status::InvalidArgument("labels: at most " + std::to_string(kMaxLabels) + " labels");
  }
  for (const auto& label : labels) {
    if (label.empty() || label.size() > kMaxNameBytes || HasControlCharacter(label)) {
      return Status::InvalidArgument("labels: '" + label + "' must have 1 to " +
                                     std::to_string(kMaxNameBytes) +
                                     " bytes and no control characters");
    }
  }
  return Status::Ok();
}

Status CheckMetadata(const std::string& metadata_json) {
  CAIRN_RETURN_IF_ERROR(CheckText("metadata", metadata_json, kMaxNotesBytes));
  auto parsed = nlohmann::json::parse(metadata_json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return Status::InvalidArgument("metadata must be a JSON object");
  return Status::Ok();
}

template <typename Field, typename Check>
Status CheckIfSet(const std::optional<Field>& value, const Check& check) {
  return value ? check(*value) : Status::Ok();
}

void SetLabels(events::ModelLabels* out, const std::vector<std::string>& labels) {
  for (const auto& label : labels) out->add_labels(label);
}

// The texts an update of a model or a version may set alike (notes, labels, metadata): checked,
// and copied into the event. Returns whether any is set.
template <typename Update, typename Event>
Result<bool> SetSharedTexts(const Update& command, Event* out) {
  CAIRN_RETURN_IF_ERROR(CheckIfSet(command.notes, [](const std::string& text) {
    return CheckText("notes", text, kMaxNotesBytes);
  }));
  CAIRN_RETURN_IF_ERROR(CheckIfSet(command.labels, CheckLabels));
  CAIRN_RETURN_IF_ERROR(CheckIfSet(command.metadata_json, CheckMetadata));
  if (command.notes) out->set_notes(*command.notes);
  if (command.labels) SetLabels(out->mutable_labels(), *command.labels);
  if (command.metadata_json) out->set_metadata_json(*command.metadata_json);
  return command.notes || command.labels || command.metadata_json;
}

Result<const ModelRecord*> FindModel(const DecisionState& state, int32_t model_id) {
  const ModelRecord* model = state.registry.FindModel(model_id);
  if (model == nullptr) return Status::NotFound("model " + std::to_string(model_id) + " not found");
  return model;
}

Result<const ModelVersionRecord*> FindVersion(const ModelRecord& model, int32_t version) {
  auto it = model.versions.find(version);
  if (it == model.versions.end()) {
    return Status::NotFound("model " + model.name + " has no version " + std::to_string(version));
  }
  return &it->second;
}

Decision One(events::Envelope event, int32_t model_id, int32_t version = 0) {
  Decision decision{{}, ModelEntity(model_id, version)};
  decision.events.push_back(std::move(event));
  return decision;
}

Result<Decision> DecideOne(const DecisionState& state, const CreateModel& command,
                           const UserRecord* actor) {
  CAIRN_RETURN_IF_ERROR(CheckModelName(command.name));
  if (state.registry.FindModel(command.name) != nullptr) {
    return Status::AlreadyExists("a model named " + command.name + " already exists");
  }
  CAIRN_RETURN_IF_ERROR(CheckText("description", command.description, kMaxTextBytes));
  CAIRN_RETURN_IF_ERROR(CheckText("notes", command.notes, kMaxNotesBytes));
  CAIRN_RETURN_IF_ERROR(CheckLabels(command.labels));
  CAIRN_RETURN_IF_ERROR(CheckMetadata(command.metadata_json));
  CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, command.workspace_id));
  const int32_t model_id = state.registry.last_model_id + 1;
  events::Envelope event;
  auto* created = event.mutable_model_created();
  created->set_model_id(model_id);
  created->set_name(command.name);
  created->set_description(command.description);
  for (const auto& label : command.labels) created->add_labels(label);
  created->set_metadata_json(command.metadata_json);
  created->set_notes(command.notes);
  created->set_workspace_id(command.workspace_id);
  if (actor != nullptr) {
    created->set_user_id(actor->id);
    created->set_username(actor->username);
  }
  return One(std::move(event), model_id);
}

Result<Decision> DecideOne(const DecisionState& state, const UpdateModel& command,
                           const UserRecord*) {
  CAIRN_ASSIGN_OR_RETURN(const ModelRecord* model, FindModel(state, command.model_id));
  events::Envelope event;
  auto* updated = event.mutable_model_updated();
  updated->set_model_id(model->model_id);
  updated->set_workspace_id(model->workspace_id);
  bool changed = false;
  if (command.name && *command.name != model->name) {
    CAIRN_RETURN_IF_ERROR(CheckModelName(*command.name));
    if (state.registry.FindModel(*command.name) != nullptr) {
      return Status::AlreadyExists("a model named " + *command.name + " already exists");
    }
    updated->set_name(*command.name);
    changed = true;
  }
  if (command.workspace_id && *command.workspace_id != model->workspace_id) {
    CAIRN_RETURN_IF_ERROR(CheckWorkspaceTakesWork(state, *command.workspace_id));
    updated->set_workspace_id(*command.workspace_id);
    updated->set_from_workspace_id(model->workspace_id);
    changed = true;
  }
  if (command.archived && *command.archived != model->archived) {
    updated->set_archived(*command.archived);
    changed = true;
  }
  CAIRN_RETURN_IF_ERROR(CheckIfSet(command.description, [](const std::string& text) {
    return CheckText("description", text, kMaxTextBytes);
  }));
  // Texts are not kept on the write side: a set one is recorded even when it is the same.
  if (command.description) updated->set_description(*command.description);
  CAIRN_ASSIGN_OR_RETURN(bool texts, SetSharedTexts(command, updated));
  if (!changed && !texts && !command.description) return NoChange(ModelEntity(model->model_id));
  return One(std::move(event), model->model_id);
}

Result<Decision> DecideOne(const DecisionState& state, const DeleteModel& command,
                           const UserRecord*) {
  CAIRN_ASSIGN_OR_RETURN(const ModelRecord* model, FindModel(state, command.model_id));
  events::Envelope event;
  auto* deleted = event.mutable_model_deleted();
  deleted->set_model_id(model->model_id);
  deleted->set_workspace_id(model->workspace_id);
  deleted->set_name(model->name);
  return One(std::move(event), model->model_id);
}

Result<Decision> DecideOne(const DecisionState& state, const RegisterModelVersion& command,
                           const UserRecord* actor) {
  CAIRN_ASSIGN_OR_RETURN(const ModelRecord* model, FindModel(state, command.model_id));
  if (model->archived) {
    return Status::FailedPrecondition("model " + model->name +
                                      " is archived; unarchive it to register versions");
  }
  auto checkpoint = state.checkpoints.find(command.checkpoint_uuid);
  if (checkpoint == state.checkpoints.end()) {
    return Status::NotFound("checkpoint " + command.checkpoint_uuid + " not found");
  }
  if (checkpoint->second.deleted) {
    return Status::FailedPrecondition("checkpoint " + command.checkpoint_uuid +
                                      " was deleted and cannot be registered");
  }
  CAIRN_RETURN_IF_ERROR(CheckVersionName(command.name));
  CAIRN_RETURN_IF_ERROR(CheckText("comment", command.comment, kMaxTextBytes));
  CAIRN_RETURN_IF_ERROR(CheckText("notes", command.notes, kMaxNotesBytes));
  CAIRN_RETURN_IF_ERROR(CheckLabels(command.labels));
  CAIRN_RETURN_IF_ERROR(CheckMetadata(command.metadata_json));
  events::Envelope event;
  auto* registered = event.mutable_model_version_registered();
  registered->set_model_id(model->model_id);
  registered->set_workspace_id(model->workspace_id);
  registered->set_version(model->last_version + 1);
  registered->set_version_id(state.registry.last_version_id + 1);
  registered->set_checkpoint_uuid(command.checkpoint_uuid);
  registered->set_name(command.name);
  registered->set_comment(command.comment);
  registered->set_notes(command.notes);
  registered->set_metadata_json(command.metadata_json);
  for (const auto& label : command.labels) registered->add_labels(label);
  if (actor != nullptr) {
    registered->set_user_id(actor->id);
    registered->set_username(actor->username);
  }
  const int32_t version = registered->version();
  return One(std::move(event), model->model_id, version);
}

Result<Decision> DecideOne(const DecisionState& state, const UpdateModelVersion& command,
                           const UserRecord*) {
  CAIRN_ASSIGN_OR_RETURN(const ModelRecord* model, FindModel(state, command.model_id));
  CAIRN_RETURN_IF_ERROR(FindVersion(*model, command.version).status());
  CAIRN_RETURN_IF_ERROR(CheckIfSet(command.name, CheckVersionName));
  CAIRN_RETURN_IF_ERROR(CheckIfSet(command.comment, [](const std::string& text) {
    return CheckText("comment", text, kMaxTextBytes);
  }));
  events::Envelope event;
  auto* updated = event.mutable_model_version_updated();
  updated->set_model_id(model->model_id);
  updated->set_workspace_id(model->workspace_id);
  updated->set_version(command.version);
  if (command.name) updated->set_name(*command.name);
  if (command.comment) updated->set_comment(*command.comment);
  CAIRN_ASSIGN_OR_RETURN(bool texts, SetSharedTexts(command, updated));
  if (!texts && !command.name && !command.comment) {
    return NoChange(ModelEntity(model->model_id, command.version));
  }
  return One(std::move(event), model->model_id, command.version);
}

Result<Decision> DecideOne(const DecisionState& state, const DeleteModelVersion& command,
                           const UserRecord*) {
  CAIRN_ASSIGN_OR_RETURN(const ModelRecord* model, FindModel(state, command.model_id));
  CAIRN_ASSIGN_OR_RETURN(const ModelVersionRecord* version, FindVersion(*model, command.version));
  events::Envelope event;
  auto* deleted = event.mutable_model_version_deleted();
  deleted->set_model_id(model->model_id);
  deleted->set_workspace_id(model->workspace_id);
  deleted->set_version(version->version);
  deleted->set_checkpoint_uuid(version->checkpoint_uuid);
  return One(std::move(event), model->model_id, version->version);
}

// Changing or deleting a model or one of its versions: `owns` is whether the user made it.
Status AuthorizeModelChange(const DecisionState& state, const UserRecord& user,
                            const ModelRecord& model, bool owns, const std::string& what) {
  return AuthorizeChange(state.tenancy, user, Permission::kUpdateModels, model.workspace_id, owns,
                         what);
}

Status AuthorizeOne(const DecisionState& state, const UserRecord& user,
                    const CreateModel& command) {
  return Authorize(state.tenancy, user, Permission::kCreateModels, command.workspace_id,
                   "create a model");
}

Status AuthorizeOne(const DecisionState& state, const UserRecord& user,
                    const UpdateModel& command) {
  const ModelRecord* model = state.registry.FindModel(command.model_id);
  if (model == nullptr) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(AuthorizeModelChange(state, user, *model, model->owner == user.username,
                                             "change model " + model->name));
  if (!command.workspace_id || *command.workspace_id == model->workspace_id) return Status::Ok();
  return Authorize(
      state.tenancy, user, Permission::kCreateModels, *command.workspace_id,
      "move model " + model->name + " into workspace " + std::to_string(*command.workspace_id));
}

Status AuthorizeOne(const DecisionState& state, const UserRecord& user,
                    const DeleteModel& command) {
  const ModelRecord* model = state.registry.FindModel(command.model_id);
  if (model == nullptr) return Status::Ok();
  return AuthorizeModelChange(state, user, *model, model->owner == user.username,
                              "delete model " + model->name);
}

Status AuthorizeOne(const DecisionState& state, const UserRecord& user,
                    const RegisterModelVersion& command) {
  const ModelRecord* model = state.registry.FindModel(command.model_id);
  if (model == nullptr) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(Authorize(state.tenancy, user, Permission::kCreateModels,
                                  model->workspace_id,
                                  "register a version of model " + model->name));
  auto checkpoint = state.checkpoints.find(command.checkpoint_uuid);
  if (checkpoint == state.checkpoints.end()) return Status::Ok();
  const ExperimentRecord* experiment = state.FindExperiment(checkpoint->second.experiment_id);
  if (experiment == nullptr) return Status::Ok();
  return Authorize(state.tenancy, user, Permission::kViewWorkspace, experiment->workspace_id,
                   "register checkpoint " + command.checkpoint_uuid);
}

template <typename VersionCommand>
Status AuthorizeVersionChange(const DecisionState& state, const UserRecord& user,
                              const VersionCommand& command, const char* verb) {
  const ModelRecord* model = state.registry.FindModel(command.model_id);
  if (model == nullptr) return Status::Ok();
  auto version = model->versions.find(command.version);
  const bool owns = model->owner == user.username ||
                    (version != model->versions.end() && version->second.owner == user.username);
  return AuthorizeModelChange(state, user, *model, owns,
                              std::string(verb) + " version " + std::to_string(command.version) +
                                  " of model " + model->name);
}

Status AuthorizeOne(const DecisionState& state, const UserRecord& user,
                    const UpdateModelVersion& command) {
  return AuthorizeVersionChange(state, user, command, "change");
}

Status AuthorizeOne(const DecisionState& state, const UserRecord& user,
                    const DeleteModelVersion& command) {
  return AuthorizeVersionChange(state, user, command, "delete");
}

}  // namespace

std::string ModelEntity(int32_t model_id, int32_t version) {
  std::string entity = "model/" + std::to_string(model_id);
  if (version > 0) entity += "/version/" + std::to_string(version);
  return entity;
}

template <RegistryCommand T>
Result<Decision> DecideCommand(const DecisionState& state, const T& command,
                               const CommandMeta& meta) {
  return DecideOne(state, command, ActingUser(state, meta));
}

template <RegistryCommand T>
Status MayRun(const DecisionState& state, const UserRecord& user, const T& command) {
  return AuthorizeOne(state, user, command);
}

// The registry's commands, each decided and authorised by the templates above.
#define CAIRN_REGISTRY_COMMAND(T)                                                              \
  template Result<Decision> DecideCommand(const DecisionState&, const T&, const CommandMeta&); \
  template Status MayRun(const DecisionState&, const UserRecord&, const T&);
CAIRN_REGISTRY_COMMAND(CreateModel)
CAIRN_REGISTRY_COMMAND(UpdateModel)
CAIRN_REGISTRY_COMMAND(DeleteModel)
CAIRN_REGISTRY_COMMAND(RegisterModelVersion)
CAIRN_REGISTRY_COMMAND(UpdateModelVersion)
CAIRN_REGISTRY_COMMAND(DeleteModelVersion)
#undef CAIRN_REGISTRY_COMMAND

}  // namespace cairn::commands
