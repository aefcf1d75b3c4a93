#include "commands/templates/template_decider.h"

#include "base/yaml_json.h"
#include "commands/templates/template_merge.h"
#include "commands/tenancy/tenancy_decider.h"
#include "events/limits.h"

namespace cairn::commands {

Result<Decision> DecideCommand(const DecisionState& state, const SaveTemplate& command,
                               const CommandMeta&) {
  if (!IsSafeId(command.name)) {
    return Status::InvalidArgument("bad template name '" + command.name + "' (" + SafeIdRuleText() +
                                   ")");
  }
  const bool exists = state.templates.count(command.name) > 0;
  if (command.mode == SaveTemplate::Mode::kCreate && exists) {
    return Status::AlreadyExists("template " + command.name + " already exists");
  }
  if (command.mode == SaveTemplate::Mode::kUpdate && !exists) {
    return Status::NotFound("template " + command.name + " not found");
  }
  CAIRN_RETURN_IF_ERROR(templates::CheckTemplate(command.config_yaml));
  events::Envelope event;
  auto* saved = event.mutable_template_saved();
  saved->set_name(command.name);
  saved->set_config_yaml(command.config_yaml);
  saved->set_workspace_id(command.workspace_id);
  if (exists &&
      state.templates.at(command.name).SerializeAsString() == saved->SerializeAsString()) {
    return Decision{{}, command.name};
  }
  return Decision{{std::move(event)}, command.name};
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteTemplate& command,
                               const CommandMeta&) {
  if (!state.templates.count(command.name)) {
    return Status::NotFound("template " + command.name + " not found");
  }
  events::Envelope event;
  event.mutable_template_deleted()->set_name(command.name);
  return Decision{{std::move(event)}, command.name};
}

namespace {

// A template's workspace: the stored one's, or for a new one the workspace it is saved to.
Status MayChangeTemplate(const DecisionState& state, const UserRecord& user,
                         const std::string& name, int32_t new_workspace_id) {
  auto existing = state.templates.find(name);
  const int32_t workspace_id = existing != state.templates.end()
                                   ? WorkspaceOrUncategorized(existing->second.workspace_id())
                                   : new_workspace_id;
  return Authorize(state.tenancy, user, Permission::kUpdateTemplates, workspace_id,
                   "change template " + name);
}

}  // namespace

Status MayRun(const DecisionState& state, const UserRecord& user, const SaveTemplate& command) {
  return MayChangeTemplate(state, user, command.name, command.workspace_id);
}

Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteTemplate& command) {
  // One in a workspace the user may not see is not there for them (Determined: 404).
  auto existing = state.templates.find(command.name);
  if (existing != state.templates.end() &&
      !state.tenancy.Allows(user, Permission::kViewWorkspace,
                            WorkspaceOrUncategorized(existing->second.workspace_id()))) {
    return Status::NotFound("template " + command.name + " not found");
  }
  return MayChangeTemplate(state, user, command.name, kUncategorizedWorkspace);
}

Result<std::string> ConfigWithTemplate(const DecisionState& state, const std::string& name,
                                       const std::string& config_yaml, const CommandMeta& meta) {
  auto stored = state.templates.find(name);
  // A template in a workspace the user may not see is one they cannot name.
  const UserRecord* user = ActingUser(state, meta);
  if (stored == state.templates.end() ||
      (user != nullptr &&
       !state.tenancy.Allows(*user, Permission::kViewWorkspace,
                             WorkspaceOrUncategorized(stored->second.workspace_id())))) {
    return Status::NotFound("template " + name + " not found");
  }
  return templates::ApplyTemplate(stored->second.config_yaml(), config_yaml);
}

}  // namespace cairn::commands
