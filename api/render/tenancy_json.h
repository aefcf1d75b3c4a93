// Workspaces, projects and roles in Determined's shapes (v1Workspace, v1Project, v1Role,
// v1RoleWithAssignments), for the caller `viewer_id` (pins are per user).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "events.pb.h"
#include "views.pb.h"

namespace cairn::api {

// Usernames by user id, for the owner fields.
using Usernames = std::map<int32_t, std::string>;

nlohmann::json WorkspaceJson(const views::WorkspaceView& workspace, int32_t viewer_id,
                             const Usernames& usernames);
nlohmann::json ProjectJson(const views::ProjectView& project, const std::string& workspace_name,
                           const Usernames& usernames);
// A built-in role with its permissions (v1Role).
nlohmann::json RoleJson(events::Role role);
// A role with the users holding it (v1RoleWithAssignments); only `assignments` of this role.
nlohmann::json RoleWithAssignmentsJson(events::Role role,
                                       const std::vector<views::RoleAssignmentView>& assignments);

}  // namespace cairn::api
