// The built-in workspace and project every cluster has, as events carry their ids. Shared by the
// write side (commands/tenancy/tenancy.h), the projections and the edge.
#pragma once

#include <cstdint>

namespace cairn {

// Workspace 1 and its project 1, both "Uncategorized", exist before any event.
inline constexpr int32_t kUncategorizedWorkspace = 1;
inline constexpr int32_t kUncategorizedProject = 1;

// Workspace and project ids as events and views carry them: 0 (written before workspaces
// existed, and kept so that old logs rebuild to the same bytes) is the built-in Uncategorized.
inline int32_t WorkspaceOrUncategorized(int32_t id) {
  return id > 0 ? id : kUncategorizedWorkspace;
}
inline int32_t ProjectOrUncategorized(int32_t id) { return id > 0 ? id : kUncategorizedProject; }

}  // namespace cairn
