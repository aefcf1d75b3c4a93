#include "projections/tenancy_projector.h"

#include <algorithm>
#include <functional>

#include "events/workspace_defaults.h"
#include "projections/experiment_keys.h"
#include "projections/view_reads.h"

namespace cairn::projections {
namespace {

constexpr std::string_view kClusterMessageKey = "cluster_message";

using experiment_keys::AppendId;
using experiment_keys::IdKey;

constexpr std::string_view kRolePrefix = "role/";
constexpr std::string_view kBindingPrefix = "binding/";
constexpr std::string_view kPlacementPrefix = "experiment/";

constexpr std::string_view kGroupRolePrefix = "group_role/";
constexpr std::string_view kGroupPrefix = "group/";

// "<prefix><workspace, 20 digits>/<holder, 20 digits>": a user's or a group's role there.
std::string ScopedRoleKey(std::string_view prefix, int32_t workspace_id, int32_t holder_id) {
  std::string key(prefix);
  AppendId(&key, static_cast<uint64_t>(workspace_id));
  key += '/';
  AppendId(&key, static_cast<uint64_t>(holder_id));
  return key;
}

std::string RoleKey(int32_t workspace_id, int32_t user_id) {
  return ScopedRoleKey(kRolePrefix, workspace_id, user_id);
}

std::string GroupRoleKey(int32_t workspace_id, int32_t group_id) {
  return ScopedRoleKey(kGroupRolePrefix, workspace_id, group_id);
}

std::string GroupKey(int32_t group_id) {
  return IdKey(kGroupPrefix, static_cast<uint64_t>(group_id));
}

std::string BindingKey(const std::string& pool) { return std::string(kBindingPrefix) + pool; }

constexpr std::string_view kPoliciesPrefix = "config_policies/";

std::string PoliciesKey(int32_t workspace_id, const std::string& workload_type) {
  std::string key(kPoliciesPrefix);
  AppendId(&key, static_cast<uint64_t>(workspace_id));
  key += '/';
  key += workload_type;
  return key;
}

// Determined's workload types; a workspace's deletion ends its policies of both.
constexpr const char* kWorkloadTypes[] = {"EXPERIMENT", "NTSC"};

// Workspaces and projects alike: where they are kept, and the built-in one (id 1), which is read
// as built in until something stores it.
template <typename View>
struct Table;

template <>
struct Table<views::WorkspaceView> {
  static constexpr std::string_view kPrefix = "workspace/";
  static constexpr int32_t kBuiltInId = kUncategorizedWorkspace;
  static views::WorkspaceView BuiltIn() {
    views::WorkspaceView workspace;
    workspace.set_id(kUncategorizedWorkspace);
    workspace.set_name("Uncategorized");
    workspace.set_immutable(true);
    workspace.add_project_ids(kUncategorizedProject);
    return workspace;
  }
};

template <>
struct Table<views::ProjectView> {
  static constexpr std::string_view kPrefix = "project/";
  static constexpr int32_t kBuiltInId = kUncategorizedProject;
  static views::ProjectView BuiltIn() {
    views::ProjectView project;
    project.set_id(kUncategorizedProject);
    project.set_workspace_id(kUncategorizedWorkspace);
    project.set_name("Uncategorized");
    project.set_immutable(true);
    return project;
  }
};

template <typename View>
std::string KeyOf(int32_t id) {
  return IdKey(Table<View>::kPrefix, static_cast<uint64_t>(id));
}

// Adds or removes `value` in a sorted repeated field.
template <typename Repeated, typename Value>
void SetMember(Repeated* field, const Value& value, bool member) {
  std::vector<Value> values(field->begin(), field->end());
  auto it = std::lower_bound(values.begin(), values.end(), value);
  const bool present = it != values.end() && *it == value;
  if (member && !present) values.insert(it, value);
  if (!member && present) values.erase(it);
  field->Clear();
  for (const auto& v : values) field->Add(Value(v));
}

// Reads a workspace or project (the built-in one before it is stored), lets `change` edit it and
// writes it back. An unknown one is left alone (the decider never names one).
template <typename View>
Status Update(ViewStore& store, int32_t id, const std::function<void(View&)>& change) {
  View view;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(KeyOf<View>(id), &view));
  if (!found) {
    if (id != Table<View>::kBuiltInId) return Status::Ok();
    view = Table<View>::BuiltIn();
  }
  change(view);
  return store.PutMessage(KeyOf<View>(id), view);
}

Status UpdateWorkspace(ViewStore& store, int32_t id,
                       const std::function<void(views::WorkspaceView&)>& change) {
  return Update<views::WorkspaceView>(store, id, change);
}

Status UpdateProject(ViewStore& store, int32_t id,
                     const std::function<void(views::ProjectView&)>& change) {
  return Update<views::ProjectView>(store, id, change);
}

// Counts an experiment in (count = +1) or out of (-1) its project and that project's workspace.
Status CountExperiment(ViewStore& store, int32_t project_id, int count, bool active,
                       int64_t started) {
  int32_t workspace_id = 0;
  CAIRN_RETURN_IF_ERROR(UpdateProject(store, project_id, [&](views::ProjectView& project) {
    workspace_id = project.workspace_id();
    project.set_num_experiments(project.num_experiments() + count);
    if (active) project.set_num_active_experiments(project.num_active_experiments() + count);
    if (started > 0) project.set_last_experiment_started_unix_micros(started);
  }));
  if (workspace_id == 0) return Status::Ok();
  return UpdateWorkspace(store, workspace_id, [&](views::WorkspaceView& workspace) {
    workspace.set_num_experiments(workspace.num_experiments() + count);
  });
}

bool Ended(events::ExperimentState state) {
  return state == events::EXPERIMENT_STATE_COMPLETED ||
         state == events::EXPERIMENT_STATE_CANCELED || state == events::EXPERIMENT_STATE_ERROR;
}

// A user's role (group_id 0) or a group's.
Status ApplyRole(ViewStore& store, int32_t workspace_id, int32_t user_id, int32_t group_id,
                 events::Role role, int64_t time) {
  const bool assigned = role != events::ROLE_UNSPECIFIED;
  const std::string key =
      group_id != 0 ? GroupRoleKey(workspace_id, group_id) : RoleKey(workspace_id, user_id);
  if (assigned) {
    views::RoleAssignmentView view;
    view.set_user_id(group_id != 0 ? 0 : user_id);
    view.set_group_id(group_id);
    view.set_workspace_id(workspace_id);
    view.set_role(role);
    view.set_assigned_unix_micros(time);
    CAIRN_RETURN_IF_ERROR(store.PutMessage(key, view));
  } else {
    CAIRN_RETURN_IF_ERROR(store.Delete(key));
  }
  if (workspace_id == 0) return Status::Ok();
  return UpdateWorkspace(store, workspace_id, [&](views::WorkspaceView& workspace) {
    if (group_id != 0) {
      SetMember(workspace.mutable_member_group_ids(), group_id, assigned);
    } else {
      SetMember(workspace.mutable_member_user_ids(), user_id, assigned);
    }
  });
}

Status DeleteWorkspace(ViewStore& store, int32_t workspace_id) {
  views::WorkspaceView workspace;
  CAIRN_ASSIGN_OR_RETURN(bool found,
                         store.GetMessage(KeyOf<views::WorkspaceView>(workspace_id), &workspace));
  if (!found) return Status::Ok();
  for (int32_t project_id : workspace.project_ids()) {
    CAIRN_RETURN_IF_ERROR(store.Delete(KeyOf<views::ProjectView>(project_id)));
  }
  for (int32_t user_id : workspace.member_user_ids()) {
    CAIRN_RETURN_IF_ERROR(store.Delete(RoleKey(workspace_id, user_id)));
  }
  for (int32_t group_id : workspace.member_group_ids()) {
    CAIRN_RETURN_IF_ERROR(store.Delete(GroupRoleKey(workspace_id, group_id)));
  }
  for (const std::string& pool : workspace.bound_pools()) {
    views::PoolBindingView binding;
    CAIRN_ASSIGN_OR_RETURN(bool bound, store.GetMessage(BindingKey(pool), &binding));
    if (!bound) continue;
    SetMember(binding.mutable_workspace_ids(), workspace_id, false);
    if (binding.workspace_ids_size() == 0) {
      CAIRN_RETURN_IF_ERROR(store.Delete(BindingKey(pool)));
    } else {
      CAIRN_RETURN_IF_ERROR(store.PutMessage(BindingKey(pool), binding));
    }
  }
  for (const char* workload_type : kWorkloadTypes) {
    CAIRN_RETURN_IF_ERROR(store.Delete(PoliciesKey(workspace_id, workload_type)));
  }
  return store.Delete(KeyOf<views::WorkspaceView>(workspace_id));
}

Status ChangeBindings(ViewStore& store, const events::PoolBindingsChanged& changed) {
  views::PoolBindingView before;
  CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(BindingKey(changed.pool_name()), &before));
  std::vector<int32_t> old_ids(before.workspace_ids().begin(), before.workspace_ids().end());
  std::vector<int32_t> new_ids(changed.workspace_ids().begin(), changed.workspace_ids().end());
  std::sort(new_ids.begin(), new_ids.end());
  for (int32_t id : old_ids) {
    if (std::binary_search(new_ids.begin(), new_ids.end(), id)) continue;
    CAIRN_RETURN_IF_ERROR(UpdateWorkspace(store, id, [&](views::WorkspaceView& workspace) {
      SetMember(workspace.mutable_bound_pools(), changed.pool_name(), false);
    }));
  }
  for (int32_t id : new_ids) {
    CAIRN_RETURN_IF_ERROR(UpdateWorkspace(store, id, [&](views::WorkspaceView& workspace) {
      SetMember(workspace.mutable_bound_pools(), changed.pool_name(), true);
    }));
  }
  if (new_ids.empty()) {
    return found ? store.Delete(BindingKey(changed.pool_name())) : Status::Ok();
  }
  views::PoolBindingView after;
  after.set_pool_name(changed.pool_name());
  for (int32_t id : new_ids) after.add_workspace_ids(id);
  return store.PutMessage(BindingKey(changed.pool_name()), after);
}

}  // namespace

Status TenancyProjector::Apply(const Envelope& event, ViewStore& store) const {
  const int64_t time = event.time_unix_micros();
  switch (event.payload_case()) {
    case Envelope::kWorkspaceCreated: {
      const auto& created = event.workspace_created();
      views::WorkspaceView workspace;
      workspace.set_id(created.workspace_id());
      workspace.set_name(created.name());
      workspace.set_owner_user_id(created.owner_user_id());
      workspace.set_default_compute_pool(created.default_compute_pool());
      workspace.set_default_aux_pool(created.default_aux_pool());
      if (created.has_agent_user()) *workspace.mutable_agent_user() = created.agent_user();
      workspace.set_checkpoint_storage_json(created.checkpoint_storage_json());
      workspace.set_created_unix_micros(time);
      return store.PutMessage(KeyOf<views::WorkspaceView>(created.workspace_id()), workspace);
    }
    case Envelope::kWorkspaceUpdated: {
      const auto& updated = event.workspace_updated();
      return UpdateWorkspace(store, updated.workspace_id(), [&](views::WorkspaceView& workspace) {
        if (updated.has_name()) workspace.set_name(updated.name());
        if (updated.has_archived()) workspace.set_archived(updated.archived());
        if (updated.has_default_compute_pool()) {
          workspace.set_default_compute_pool(updated.default_compute_pool());
        }
        if (updated.has_default_aux_pool()) {
          workspace.set_default_aux_pool(updated.default_aux_pool());
        }
        if (updated.has_agent_user()) *workspace.mutable_agent_user() = updated.agent_user();
        if (updated.has_checkpoint_storage_json()) {
          workspace.set_checkpoint_storage_json(updated.checkpoint_storage_json());
        }
      });
    }
    case Envelope::kWorkspaceDeleted:
      return DeleteWorkspace(store, event.workspace_deleted().workspace_id());
    case Envelope::kWorkspacePinned: {
      const auto& pinned = event.workspace_pinned();
      return UpdateWorkspace(store, pinned.workspace_id(), [&](views::WorkspaceView& workspace) {
        SetMember(workspace.mutable_pinned_by(), pinned.user_id(), pinned.pinned());
      });
    }
    case Envelope::kProjectCreated: {
      const auto& created = event.project_created();
      views::ProjectView project;
      project.set_id(created.project_id());
      project.set_workspace_id(created.workspace_id());
      project.set_name(created.name());
      project.set_description(created.description());
      project.set_owner_user_id(created.owner_user_id());
      project.set_created_unix_micros(time);
      CAIRN_RETURN_IF_ERROR(
          store.PutMessage(KeyOf<views::ProjectView>(created.project_id()), project));
      return UpdateWorkspace(store, created.workspace_id(), [&](views::WorkspaceView& workspace) {
        SetMember(workspace.mutable_project_ids(), created.project_id(), true);
      });
    }
    case Envelope::kProjectUpdated: {
      const auto& updated = event.project_updated();
      return UpdateProject(store, updated.project_id(), [&](views::ProjectView& project) {
        if (updated.has_name()) project.set_name(updated.name());
        if (updated.has_description()) project.set_description(updated.description());
        if (updated.has_archived()) project.set_archived(updated.archived());
      });
    }
    case Envelope::kProjectDeleted: {
      const int32_t project_id = event.project_deleted().project_id();
      views::ProjectView project;
      CAIRN_ASSIGN_OR_RETURN(bool found,
                             store.GetMessage(KeyOf<views::ProjectView>(project_id), &project));
      if (!found) return Status::Ok();
      CAIRN_RETURN_IF_ERROR(store.Delete(KeyOf<views::ProjectView>(project_id)));
      return UpdateWorkspace(store, project.workspace_id(), [&](views::WorkspaceView& workspace) {
        SetMember(workspace.mutable_project_ids(), project_id, false);
      });
    }
    case Envelope::kExperimentCreated: {
      const auto& created = event.experiment_created();
      views::ExperimentPlacementView placement;
      placement.set_project_id(ProjectOrUncategorized(created.project_id()));
      CAIRN_RETURN_IF_ERROR(
          store.PutMessage(IdKey(kPlacementPrefix, created.experiment_id()), placement));
      return CountExperiment(store, placement.project_id(), +1, true, time);
    }
    case Envelope::kExperimentMoved: {
      const auto& moved = event.experiment_moved();
      const std::string key = IdKey(kPlacementPrefix, moved.experiment_id());
      views::ExperimentPlacementView placement;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &placement));
      if (!found) return Status::Ok();
      CAIRN_RETURN_IF_ERROR(
          CountExperiment(store, placement.project_id(), -1, !placement.ended(), 0));
      placement.set_project_id(moved.project_id());
      CAIRN_RETURN_IF_ERROR(store.PutMessage(key, placement));
      return CountExperiment(store, placement.project_id(), +1, !placement.ended(), 0);
    }
    case Envelope::kExperimentDeleted:
    case Envelope::kExperimentContinued: {
      const bool deleted = event.has_experiment_deleted();
      const int64_t experiment_id = deleted ? event.experiment_deleted().experiment_id()
                                            : event.experiment_continued().experiment_id();
      const std::string key = IdKey(kPlacementPrefix, experiment_id);
      views::ExperimentPlacementView placement;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &placement));
      if (!found) return Status::Ok();
      if (deleted) {
        // Only ended experiments are deleted: it leaves the counts, and its placement goes.
        CAIRN_RETURN_IF_ERROR(store.Delete(key));
        return CountExperiment(store, placement.project_id(), -1, !placement.ended(), 0);
      }
      if (!placement.ended()) return Status::Ok();
      placement.set_ended(false);
      CAIRN_RETURN_IF_ERROR(store.PutMessage(key, placement));
      return UpdateProject(store, placement.project_id(), [&](views::ProjectView& project) {
        project.set_num_active_experiments(project.num_active_experiments() + 1);
      });
    }
    case Envelope::kExperimentStateChanged: {
      const auto& changed = event.experiment_state_changed();
      if (!Ended(changed.state())) return Status::Ok();
      const std::string key = IdKey(kPlacementPrefix, changed.experiment_id());
      views::ExperimentPlacementView placement;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(key, &placement));
      if (!found || placement.ended()) return Status::Ok();
      placement.set_ended(true);
      CAIRN_RETURN_IF_ERROR(store.PutMessage(key, placement));
      return UpdateProject(store, placement.project_id(), [&](views::ProjectView& project) {
        project.set_num_active_experiments(project.num_active_experiments() - 1);
      });
    }
    case Envelope::kRoleAssigned: {
      const auto& assigned = event.role_assigned();
      return ApplyRole(store, assigned.workspace_id(), assigned.user_id(), assigned.group_id(),
                       assigned.role(), time);
    }
    case Envelope::kRoleRemoved: {
      const auto& removed = event.role_removed();
      return ApplyRole(store, removed.workspace_id(), removed.user_id(), removed.group_id(),
                       events::ROLE_UNSPECIFIED, time);
    }
    case Envelope::kGroupCreated: {
      const auto& created = event.group_created();
      views::GroupView group;
      group.set_group_id(created.group_id());
      group.set_name(created.name());
      *group.mutable_user_ids() = created.user_ids();
      group.set_created_unix_micros(time);
      return store.PutMessage(GroupKey(created.group_id()), group);
    }
    case Envelope::kGroupUpdated: {
      const auto& updated = event.group_updated();
      views::GroupView group;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(GroupKey(updated.group_id()), &group));
      if (!found) return Status::Ok();
      if (updated.has_name()) group.set_name(updated.name());
      for (int32_t user_id : updated.added_user_ids()) {
        SetMember(group.mutable_user_ids(), user_id, true);
      }
      for (int32_t user_id : updated.removed_user_ids()) {
        SetMember(group.mutable_user_ids(), user_id, false);
      }
      return store.PutMessage(GroupKey(updated.group_id()), group);
    }
    case Envelope::kGroupDeleted:
      return store.Delete(GroupKey(event.group_deleted().group_id()));
    case Envelope::kPoolBindingsChanged:
      return ChangeBindings(store, event.pool_bindings_changed());
    case Envelope::kConfigPoliciesSet: {
      const auto& set = event.config_policies_set();
      return store.PutMessage(PoliciesKey(set.workspace_id(), set.workload_type()), set);
    }
    case Envelope::kConfigPoliciesDeleted: {
      const auto& deleted = event.config_policies_deleted();
      return store.Delete(PoliciesKey(deleted.workspace_id(), deleted.workload_type()));
    }
    case Envelope::kClusterMessageSet: {
      const auto& set = event.cluster_message_set();
      views::ClusterMessageView message;
      message.set_message(set.message());
      message.set_start_unix_micros(set.start_unix_micros());
      message.set_end_unix_micros(set.end_unix_micros());
      message.set_created_unix_micros(event.time_unix_micros());
      message.set_created_by(event.actor());
      return store.PutMessage(kClusterMessageKey, message);
    }
    case Envelope::kClusterMessageCleared: {
      views::ClusterMessageView message;
      CAIRN_ASSIGN_OR_RETURN(bool found, store.GetMessage(kClusterMessageKey, &message));
      const int64_t now = event.time_unix_micros();
      if (!found || (message.end_unix_micros() != 0 && message.end_unix_micros() <= now)) {
        return Status::Ok();
      }
      message.set_end_unix_micros(now);
      return store.PutMessage(kClusterMessageKey, message);
    }
    default:
      return Status::Ok();
  }
}

Result<std::optional<views::ClusterMessageView>> ReadClusterMessage(ViewReader& reader) {
  return ReadView<views::ClusterMessageView>(reader, kClusterMessageKey);
}

Result<std::optional<events::ConfigPoliciesSet>> ReadConfigPolicies(
    ViewReader& reader, int32_t workspace_id, const std::string& workload_type) {
  return ReadView<events::ConfigPoliciesSet>(reader, PoliciesKey(workspace_id, workload_type));
}

namespace {

// A workspace or project by id (the built-in one before it is stored); nullopt when absent.
template <typename View>
Result<std::optional<View>> ReadOne(ViewReader& reader, int32_t id) {
  View view;
  CAIRN_ASSIGN_OR_RETURN(bool found, GetMessage(reader, KeyOf<View>(id), &view));
  if (!found) {
    if (id != Table<View>::kBuiltInId) return std::optional<View>();
    view = Table<View>::BuiltIn();
  }
  return std::optional<View>(std::move(view));
}

// Every workspace or project by id, the built-in one first.
template <typename View>
Result<std::vector<View>> ReadAll(ViewReader& reader) {
  CAIRN_ASSIGN_OR_RETURN(auto views, ScanViews<View>(reader, Table<View>::kPrefix));
  if (views.empty() || views.front().id() != Table<View>::kBuiltInId) {
    views.insert(views.begin(), Table<View>::BuiltIn());
  }
  return views;
}

}  // namespace

Result<std::optional<views::WorkspaceView>> ReadWorkspace(ViewReader& reader,
                                                          int32_t workspace_id) {
  return ReadOne<views::WorkspaceView>(reader, workspace_id);
}

Result<std::vector<views::WorkspaceView>> ReadWorkspaces(ViewReader& reader) {
  return ReadAll<views::WorkspaceView>(reader);
}

Result<std::optional<views::ProjectView>> ReadProject(ViewReader& reader, int32_t project_id) {
  return ReadOne<views::ProjectView>(reader, project_id);
}

Result<std::vector<views::ProjectView>> ReadProjects(ViewReader& reader) {
  return ReadAll<views::ProjectView>(reader);
}

Result<std::vector<views::RoleAssignmentView>> ReadRoleAssignments(ViewReader& reader) {
  CAIRN_ASSIGN_OR_RETURN(auto assignments,
                         ScanViews<views::RoleAssignmentView>(reader, kRolePrefix));
  CAIRN_ASSIGN_OR_RETURN(auto of_groups,
                         ScanViews<views::RoleAssignmentView>(reader, kGroupRolePrefix));
  assignments.insert(assignments.end(), of_groups.begin(), of_groups.end());
  return assignments;
}

Result<std::vector<views::GroupView>> ReadGroups(ViewReader& reader) {
  return ScanViews<views::GroupView>(reader, kGroupPrefix);
}

Result<std::vector<views::PoolBindingView>> ReadPoolBindings(ViewReader& reader) {
  return ScanViews<views::PoolBindingView>(reader, kBindingPrefix);
}

}  // namespace cairn::projections
