#include "commands/policies/policy_decider.h"

#include "commands/policies/config_policies.h"

namespace cairn::commands {

namespace {

std::string PoliciesEntity(int32_t workspace_id, const std::string& workload_type) {
  return "config-policies/" + std::to_string(workspace_id) + "/" + workload_type;
}

Status CheckScope(const DecisionState& state, int32_t workspace_id,
                  const std::string& workload_type) {
  CAIRN_RETURN_IF_ERROR(CheckWorkloadType(workload_type));
  if (workspace_id != kEveryWorkspace && state.tenancy.FindWorkspace(workspace_id) == nullptr) {
    return Status::NotFound("workspace " + std::to_string(workspace_id) + " not found");
  }
  return Status::Ok();
}

Status AuthorizePolicies(const DecisionState& state, const UserRecord& user,
                         int32_t workspace_id) {
  if (workspace_id == kEveryWorkspace) {
    return Authorize(state.tenancy, user, Permission::kUpdateMasterConfig, kEveryWorkspace,
                     "set global config policies");
  }
  return Authorize(state.tenancy, user, Permission::kUpdateWorkspace, workspace_id,
                   "set the config policies of workspace " + std::to_string(workspace_id));
}

}  // namespace

Result<Decision> DecideCommand(const DecisionState& state, const SetConfigPolicies& command,
                               const CommandMeta&) {
  CAIRN_RETURN_IF_ERROR(CheckScope(state, command.workspace_id, command.workload_type));
  CAIRN_ASSIGN_OR_RETURN(
      events::ConfigPoliciesSet policies,
      ReadConfigPolicies(command.text, command.workspace_id, command.workload_type));
  if (command.workspace_id != kEveryWorkspace) {
    if (const ConfigPolicyRecord* global =
            state.tenancy.FindConfigPolicies(kEveryWorkspace, command.workload_type)) {
      CAIRN_RETURN_IF_ERROR(
          CheckAgainstConstraints(policies, *global, "the global constraints"));
    }
  }
  events::Envelope event;
  *event.mutable_config_policies_set() = std::move(policies);
  return Decision{{std::move(event)},
                  PoliciesEntity(command.workspace_id, command.workload_type)};
}

Result<Decision> DecideCommand(const DecisionState& state, const DeleteConfigPolicies& command,
                               const CommandMeta&) {
  CAIRN_RETURN_IF_ERROR(CheckScope(state, command.workspace_id, command.workload_type));
  const std::string entity = PoliciesEntity(command.workspace_id, command.workload_type);
  if (!state.tenancy.FindConfigPolicies(command.workspace_id, command.workload_type)) {
    return NoChange(entity);
  }
  events::Envelope event;
  event.mutable_config_policies_deleted()->set_workspace_id(command.workspace_id);
  event.mutable_config_policies_deleted()->set_workload_type(command.workload_type);
  return Decision{{std::move(event)}, entity};
}

Status MayRun(const DecisionState& state, const UserRecord& user,
              const SetConfigPolicies& command) {
  return AuthorizePolicies(state, user, command.workspace_id);
}
Status MayRun(const DecisionState& state, const UserRecord& user,
              const DeleteConfigPolicies& command) {
  return AuthorizePolicies(state, user, command.workspace_id);
}

}  // namespace cairn::commands
