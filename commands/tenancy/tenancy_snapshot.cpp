#include "commands/tenancy/tenancy_snapshot.h"

#include "commands/proto/snapshot_codec.h"

namespace cairn::commands {

CAIRN_SNAPSHOT_COVERS(WorkspaceRecord, 10);
CAIRN_SNAPSHOT_COVERS(ProjectRecord, 7);
CAIRN_SNAPSHOT_COVERS(GroupRecord, 3);

void EncodeTenancy(const TenancyState& tenancy, snapshot::Tenancy& out) {
  for (const auto& [id, workspace] : tenancy.workspaces) {
    auto* stored = out.add_workspaces();
    stored->set_id(workspace.id);
    stored->set_name(workspace.name);
    stored->set_owner_user_id(workspace.owner_user_id);
    stored->set_archived(workspace.archived);
    stored->set_immutable(workspace.immutable);
    stored->set_default_compute_pool(workspace.default_compute_pool);
    stored->set_default_aux_pool(workspace.default_aux_pool);
    for (int32_t user : workspace.pinned_by) stored->add_pinned_by(user);
    if (workspace.agent_user)
      *stored->mutable_agent_user() = WorkspaceAgentUserOf(*workspace.agent_user);
    stored->set_checkpoint_storage_json(workspace.checkpoint_storage_json);
  }
  for (const auto& [id, project] : tenancy.projects) {
    auto* stored = out.add_projects();
    stored->set_id(project.id);
    stored->set_workspace_id(project.workspace_id);
    stored->set_name(project.name);
    stored->set_description(project.description);
    stored->set_owner_user_id(project.owner_user_id);
    stored->set_archived(project.archived);
    stored->set_immutable(project.immutable);
  }
  for (const auto& [who, role] : tenancy.roles) {
    auto* stored = out.add_roles();
    stored->set_user_id(who.first);
    stored->set_workspace_id(who.second);
    stored->set_role(role);
  }
  for (const auto& [who, role] : tenancy.group_roles) {
    auto* stored = out.add_roles();
    stored->set_group_id(who.first);
    stored->set_workspace_id(who.second);
    stored->set_role(role);
  }
  for (const auto& [id, group] : tenancy.groups) {
    auto* stored = out.add_groups();
    stored->set_group_id(group.id);
    stored->set_name(group.name);
    for (int32_t user : group.members) stored->add_user_ids(user);
  }
  out.set_last_group_id(tenancy.last_group_id);
  for (const auto& [pool, workspaces] : tenancy.pool_bindings) {
    auto* stored = out.add_pool_bindings();
    stored->set_pool(pool);
    for (int32_t workspace : workspaces) stored->add_workspace_ids(workspace);
  }
  out.set_last_workspace_id(tenancy.last_workspace_id);
  out.set_last_project_id(tenancy.last_project_id);
  out.set_authz(tenancy.authz);
  for (const auto& [scope, policies] : tenancy.config_policies) {
    auto* stored = out.add_config_policies();
    stored->set_workspace_id(scope.first);
    stored->set_workload_type(scope.second);
    stored->set_invariant_config_json(policies.invariant_config_json);
    if (policies.priority_limit) stored->set_priority_limit(*policies.priority_limit);
    if (policies.max_slots) stored->set_max_slots(*policies.max_slots);
  }
}

void DecodeTenancy(const snapshot::Tenancy& in, TenancyState& tenancy) {
  // The snapshot holds the built-in workspace and project like any other.
  tenancy.workspaces.clear();
  tenancy.workspace_ids.clear();
  tenancy.projects.clear();
  for (const auto& stored : in.workspaces()) {
    WorkspaceRecord& workspace = tenancy.workspaces[stored.id()];
    workspace.id = stored.id();
    workspace.name = stored.name();
    workspace.owner_user_id = stored.owner_user_id();
    workspace.archived = stored.archived();
    workspace.immutable = stored.immutable();
    workspace.default_compute_pool = stored.default_compute_pool();
    workspace.default_aux_pool = stored.default_aux_pool();
    workspace.pinned_by.insert(stored.pinned_by().begin(), stored.pinned_by().end());
    if (stored.has_agent_user()) workspace.agent_user = PartialAgentUserOf(stored.agent_user());
    workspace.checkpoint_storage_json = stored.checkpoint_storage_json();
    tenancy.workspace_ids[workspace.name] = workspace.id;
  }
  for (const auto& stored : in.projects()) {
    ProjectRecord& project = tenancy.projects[stored.id()];
    project.id = stored.id();
    project.workspace_id = stored.workspace_id();
    project.name = stored.name();
    project.description = stored.description();
    project.owner_user_id = stored.owner_user_id();
    project.archived = stored.archived();
    project.immutable = stored.immutable();
  }
  for (const auto& role : in.roles()) {
    if (role.group_id() != 0) {
      tenancy.group_roles[{role.group_id(), role.workspace_id()}] = role.role();
    } else {
      tenancy.roles[{role.user_id(), role.workspace_id()}] = role.role();
    }
  }
  for (const auto& stored : in.groups()) {
    GroupRecord& group = tenancy.groups[stored.group_id()];
    group.id = stored.group_id();
    group.name = stored.name();
    group.members.insert(stored.user_ids().begin(), stored.user_ids().end());
  }
  tenancy.last_group_id = in.last_group_id();
  for (const auto& binding : in.pool_bindings()) {
    tenancy.pool_bindings[binding.pool()].insert(binding.workspace_ids().begin(),
                                                 binding.workspace_ids().end());
  }
  tenancy.last_workspace_id = in.last_workspace_id();
  tenancy.last_project_id = in.last_project_id();
  tenancy.authz = in.authz();
  for (const auto& stored : in.config_policies()) {
    ConfigPolicyRecord& policies =
        tenancy.config_policies[{stored.workspace_id(), stored.workload_type()}];
    policies.invariant_config_json = stored.invariant_config_json();
    if (stored.has_priority_limit()) policies.priority_limit = stored.priority_limit();
    if (stored.has_max_slots()) policies.max_slots = stored.max_slots();
  }
}

}  // namespace cairn::commands
