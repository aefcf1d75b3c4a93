// Who is signed in and what they may do, for views that offer actions (the write side decides in
// the end: this only hides what would be refused).
import * as api from './api.js';

// Determined's built-in roles by id (role assignments name them so).
export const ROLES = { viewer: 1, editor: 2, workspaceAdmin: 3, clusterAdmin: 4, modelRegistryViewer: 5 };

export class Session {
  constructor(me, summary, master) {
    this.me = me;
    this.admin = Boolean(me.admin);
    // Under basic authorization (Determined's default) roles do not apply: everyone may launch.
    this.rolesApply = Boolean(master.rbacEnabled);
    // workspace id -> role id (1 Viewer ... 4 ClusterAdmin, 5 ModelRegistryViewer)
    this.roles = new Map();
    for (const assignment of summary.assignments || []) {
      if (assignment.scopeCluster) this.admin = this.admin || assignment.roleId === ROLES.clusterAdmin;
      for (const id of assignment.scopeWorkspaceIds || []) this.roles.set(id, assignment.roleId);
    }
  }

  // Owners change their own work; WorkspaceAdmins (3) and admins anyone's. The write side
  // decides in the end: this only hides buttons that would be refused.
  canModify(owner, workspaceId) {
    if (this.admin || owner === this.me.username) return true;
    const role = this.roles.get(Number(workspaceId)) || 0;
    return role === ROLES.workspaceAdmin || role === ROLES.clusterAdmin;
  }

  // Launching work in a workspace takes an Editor (2) or more there, or an admin.
  canLaunch(workspaceId) {
    if (this.admin || !this.rolesApply) return true;
    return [ROLES.editor, ROLES.workspaceAdmin, ROLES.clusterAdmin]
      .includes(this.roles.get(Number(workspaceId)) || 0);
  }

  // The workspaces (not archived) where the caller may launch or put work.
  async launchableWorkspaces(signal) {
    const { workspaces = [] } = await api.get(`/api/v1/workspaces${api.query({ limit: 1000 })}`, signal);
    return workspaces.filter((w) => !w.archived && this.canLaunch(w.id));
  }
}
