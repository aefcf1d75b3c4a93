// The tenancy domain's commands: workspaces, projects, moving experiments between projects, role
// assignments, user groups and pool bindings. Unset fields keep their value. Decided by
// commands/tenancy/tenancy_decider.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commands/identity/identity.h"
#include "events.pb.h"

namespace cairn::commands {

// Workspaces and projects (commands/tenancy/tenancy.h). Unset fields keep their value.
struct CreateWorkspace {
  static constexpr const char* kName = "CreateWorkspace";
  std::string name;
  std::string default_compute_pool;
  std::string default_aux_pool;
  std::optional<PartialAgentUser> agent_user{};
  // Checked and normalized by the caller (experiments::NormalizedCheckpointStorage); "" = none.
  std::string checkpoint_storage_json{};
};

struct UpdateWorkspace {
  static constexpr const char* kName = "UpdateWorkspace";
  int32_t workspace_id = 0;
  std::optional<std::string> name{};
  std::optional<bool> archived{};
  std::optional<std::string> default_compute_pool{};
  std::optional<std::string> default_aux_pool{};
  std::optional<PartialAgentUser> agent_user{};          // replaces the link, every field
  std::optional<std::string> checkpoint_storage_json{};  // "" clears it
};

// Only a workspace without experiments and live tasks; its empty projects go with it.
struct DeleteWorkspace {
  static constexpr const char* kName = "DeleteWorkspace";
  int32_t workspace_id = 0;
};

struct PinWorkspace {
  static constexpr const char* kName = "PinWorkspace";
  int32_t workspace_id = 0;
  bool pinned = true;
};

struct CreateProject {
  static constexpr const char* kName = "CreateProject";
  int32_t workspace_id = 0;
  std::string name;
  std::string description;
};

struct UpdateProject {
  static constexpr const char* kName = "UpdateProject";
  int32_t project_id = 0;
  std::optional<std::string> name{};
  std::optional<std::string> description{};
  std::optional<bool> archived{};
};

// Only a project without experiments.
struct DeleteProject {
  static constexpr const char* kName = "DeleteProject";
  int32_t project_id = 0;
};

struct MoveExperiment {
  static constexpr const char* kName = "MoveExperiment";
  int64_t experiment_id = 0;
  int32_t project_id = 0;
};

// Assigns (or removes) roles; all or none are applied.
struct ChangeRoles {
  static constexpr const char* kName = "ChangeRoles";
  struct Assignment {
    int32_t user_id = 0;
    int32_t workspace_id = 0;  // 0 = every workspace
    events::Role role = events::ROLE_UNSPECIFIED;
    int32_t group_id = 0;  // a group's role instead of a user's (user_id unused)
  };
  std::vector<Assignment> assignments;
  bool remove = false;
};

// A user group (det user-group create), with its first members.
struct CreateGroup {
  static constexpr const char* kName = "CreateGroup";
  std::string name;
  std::vector<int32_t> user_ids;
};

// Renames a group, adds members and removes members; all or nothing.
struct UpdateGroup {
  static constexpr const char* kName = "UpdateGroup";
  int32_t group_id = 0;
  std::optional<std::string> name;
  std::vector<int32_t> add_user_ids;
  std::vector<int32_t> remove_user_ids;
};

// Deletes a group and its role assignments.
struct DeleteGroup {
  static constexpr const char* kName = "DeleteGroup";
  int32_t group_id = 0;
};

// Binds a resource pool to workspaces, unbinds it, or replaces its bindings.
struct SetPoolBindings {
  static constexpr const char* kName = "SetPoolBindings";
  enum class Mode { kAdd, kRemove, kReplace };
  std::string pool_name;
  std::vector<int32_t> workspace_ids;
  Mode mode = Mode::kAdd;
};

// Records the authorization model a master starts with when it differs from the log's last.
struct ConfigureAuthz {
  static constexpr const char* kName = "ConfigureAuthz";
  events::AuthzType type = events::AUTHZ_TYPE_BASIC;
};

// Records a master's new log level (the edge applies it once recorded).
struct ChangeMasterLogLevel {
  static constexpr const char* kName = "ChangeMasterLogLevel";
  std::string master_id;
  std::string level;
};

// Sets the cluster message (cleared: ends the current one). Times in unix micros; end 0 = none.
struct SetClusterMessage {
  static constexpr const char* kName = "SetClusterMessage";
  bool clear = false;
  std::string message;
  int64_t start_unix_micros = 0;
  int64_t end_unix_micros = 0;
};

}  // namespace cairn::commands
