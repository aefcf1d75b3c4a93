// The tenancy projection: "workspace/<id, 20 digits>" -> views::WorkspaceView,
// "project/<id, 20 digits>" -> views::ProjectView, "role/<workspace, 20 digits>/<user, 20 digits>"
// -> views::RoleAssignmentView (workspace 0: cluster-wide), "binding/<pool>" ->
// views::PoolBindingView, "experiment/<id, 20 digits>" -> views::ExperimentPlacementView, and
// "cluster_message" -> views::ClusterMessageView, "config_policies/<workspace, 20 digits, 0:
// global>/<EXPERIMENT|NTSC>" -> events::ConfigPoliciesSet, "group/<id, 20 digits>" ->
// views::GroupView and "group_role/<workspace, 20 digits>/<group, 20 digits>" ->
// views::RoleAssignmentView (a group's).
// The built-in Uncategorized workspace and project (id 1) are read as built in until stored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"
#include "views.pb.h"

namespace cairn::projections {

inline const std::string kTenancyProjector = "tenancy";

class TenancyProjector : public Projector {
 public:
  const std::string& name() const override { return kTenancyProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

Result<std::optional<views::WorkspaceView>> ReadWorkspace(ViewReader& reader, int32_t workspace_id);
// Every workspace, by id (the built-in one first).
Result<std::vector<views::WorkspaceView>> ReadWorkspaces(ViewReader& reader);
Result<std::optional<views::ProjectView>> ReadProject(ViewReader& reader, int32_t project_id);
// Every project, by id.
Result<std::vector<views::ProjectView>> ReadProjects(ViewReader& reader);
// Every role assignment: users' by workspace (cluster-wide ones first) and then user, then
// groups' the same way.
Result<std::vector<views::RoleAssignmentView>> ReadRoleAssignments(ViewReader& reader);
// Every user group, by id.
Result<std::vector<views::GroupView>> ReadGroups(ViewReader& reader);
// The latest cluster message, ended or not; nullopt before the first.
Result<std::optional<views::ClusterMessageView>> ReadClusterMessage(ViewReader& reader);
// One scope's config policies for one workload type; nullopt when none are set.
Result<std::optional<events::ConfigPoliciesSet>> ReadConfigPolicies(
    ViewReader& reader, int32_t workspace_id, const std::string& workload_type);
// Every bound pool, by name.
Result<std::vector<views::PoolBindingView>> ReadPoolBindings(ViewReader& reader);

}  // namespace cairn::projections
