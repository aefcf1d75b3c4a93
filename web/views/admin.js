// Administration (admins): users (create, deactivate, reset a password, the admin flag), role
// assignments per workspace, agents (enable, disable, drain), the master's configuration (secrets
// masked by the master) and its recent log lines. Every action is the API's, which refuses
// anyone else; the navigation shows this page to admins only.
import * as api from '../lib/api.js';
import { h, clear, table, formatTime, loadedView, field, forbidden, errorBox } from '../lib/dom.js';
import { ROLES } from '../lib/session.js';

const ROLE_NAMES = {
  [ROLES.viewer]: 'Viewer', [ROLES.editor]: 'Editor', [ROLES.workspaceAdmin]: 'WorkspaceAdmin',
  [ROLES.clusterAdmin]: 'ClusterAdmin', [ROLES.modelRegistryViewer]: 'ModelRegistryViewer',
};
const LOG_LINES = 200;

export async function show(main, route, { signal }) {
  const status = h('div', { id: 'admin-status', role: 'status', class: 'muted' });
  const usersBox = h('div', { id: 'admin-users' });
  const agentsBox = h('div', { id: 'admin-agents' });
  const configBox = h('pre', { class: 'config', id: 'admin-config' });
  const logsBox = h('pre', { class: 'logs', id: 'admin-logs' });
  const forms = h('div');

  // Runs a change and says what happened (or why not); the event it records redraws the page.
  async function act(what, request) {
    try {
      await request();
      status.textContent = what;
      return true;
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
      return false;
    }
  }

  // The master's configuration (admins only: it says so before any form is drawn) and its log,
  // read once and on request, not with every refresh.
  let config;
  let workspaces = [];
  try {
    [config, { workspaces = [] }] = await Promise.all([
      api.get('/api/v1/master/config', signal), api.get(`/api/v1/workspaces${api.query({ limit: 1000 })}`, signal)]);
  } catch (error) {
    if (error.status !== 403) throw error;
    clear(main, h('h1', {}, 'Administration'), forbidden('admin-forbidden', 'Administration is', error));
    return {};
  }
  configBox.textContent = JSON.stringify(config.config, null, 2);
  async function readLog() {
    const lines = [];
    try {
      await api.stream(`/api/v1/master/logs${api.query({ limit: LOG_LINES })}`, (object) => {
        const entry = object.result?.logEntry;
        if (entry) lines.push(`${entry.timestamp} ${String(entry.level).replace('LOG_LEVEL_', '')} ${entry.message}`);
      }, signal);
      logsBox.textContent = lines.join('\n');
    } catch (error) {
      if (error.name !== 'AbortError') clear(logsBox, errorBox(error));
    }
  }

  const newName = h('input', { id: 'new-user-name', type: 'text', required: true, maxlength: '128' });
  const newPassword = h('input', { id: 'new-user-password', type: 'password', autocomplete: 'new-password' });
  const newAdmin = h('input', { id: 'new-user-admin', type: 'checkbox' });
  const userForm = h('form', { class: 'form-grid', id: 'new-user-form', 'aria-label': 'New user',
    onsubmit: (event) => {
      event.preventDefault();
      act(`user ${newName.value.trim()} created`, () => api.post('/api/v1/users', {
        user: { username: newName.value.trim(), admin: newAdmin.checked, active: true },
        password: newPassword.value, isHashed: false })).then((done) => { if (done) event.target.reset(); });
    } },
  field('new-user-name', 'Username', newName), field('new-user-password', 'Password', newPassword),
  field('new-user-admin', 'Admin', newAdmin),
  h('div', { class: 'toolbar wide' }, h('button', { type: 'submit', dataset: { action: 'create-user' } }, 'Create user')));

  const roleUser = h('select', { id: 'role-user' });  // filled by load(), with the users
  const role = h('select', { id: 'role-role' }, ...Object.entries(ROLE_NAMES).map(([id, name]) => h('option', { value: id }, name)));
  const roleWorkspace = h('select', { id: 'role-workspace' }, h('option', { value: '' }, 'the whole cluster'),
    ...workspaces.map((w) => h('option', { value: String(w.id) }, w.name)));
  const assignment = () => {
    const scoped = roleWorkspace.value ? { scopeWorkspaceId: Number(roleWorkspace.value) } : { scopeCluster: true };
    return { userRoleAssignments: [{ userId: Number(roleUser.value), roleAssignment: { role: { roleId: Number(role.value) }, ...scoped } }] };
  };
  const describe = () => `${role.selectedOptions[0]?.textContent} of ${roleWorkspace.selectedOptions[0]?.textContent} for ${roleUser.selectedOptions[0]?.textContent}`;
  const roleForm = h('form', { class: 'form-grid', id: 'role-form', 'aria-label': 'Role assignment', onsubmit: (event) => event.preventDefault() },
    field('role-user', 'User', roleUser), field('role-role', 'Role', role), field('role-workspace', 'Scope', roleWorkspace),
    h('div', { class: 'toolbar wide' },
      h('button', { type: 'button', dataset: { action: 'assign-role' }, onclick: () => act(`assigned ${describe()}`, () => api.post('/api/v1/roles/add-assignments', assignment())) }, 'Assign'),
      h('button', { type: 'button', dataset: { action: 'remove-role' }, onclick: () => act(`removed ${describe()}`, () => api.post('/api/v1/roles/remove-assignments', assignment())) }, 'Remove')));
  clear(forms,
    h('details', { class: 'card', id: 'new-user' }, h('summary', {}, 'New user'), userForm),
    h('details', { class: 'card', id: 'roles' }, h('summary', {}, 'Role assignments'), roleForm));

  async function load(minOffset, loadSignal) {
    const [usersAnswer, agentsAnswer] = await Promise.all([
      api.get(`/api/v1/users${api.query({ minOffset })}`, loadSignal),
      api.get(`/api/v1/agents${api.query({ minOffset })}`, loadSignal)]);
    const users = usersAnswer.users || [];
    // The assignment form offers every user, new ones too, keeping the one chosen; redrawn only
    // when the users changed, so that a choice being made is not swept away by a refresh.
    const offered = users.map((u) => `${u.id}:${u.username}`).join(',');
    if (roleUser.dataset.offered !== offered) {
      const chosen = roleUser.value;
      clear(roleUser, ...users.map((u) => h('option', { value: String(u.id) }, u.username)));
      if (users.some((u) => String(u.id) === chosen)) roleUser.value = chosen;
      roleUser.dataset.offered = offered;
    }
    clear(usersBox, table([
      { title: 'User', cell: (u) => u.username },
      { title: 'Display name', cell: (u) => u.displayName || '' },
      { title: 'Admin', cell: (u) => (u.admin ? 'yes' : '') },
      { title: 'Active', cell: (u) => (u.active ? 'yes' : 'no') },
      { title: 'Changed', cell: (u) => formatTime(u.modifiedAt) },
      { title: '', cell: (u) => [
        h('button', { type: 'button', dataset: { action: u.active ? 'deactivate' : 'activate' },
          onclick: () => act(`${u.username} ${u.active ? 'deactivated' : 'activated'}`, () => api.call('PATCH', `/api/v1/users/${u.id}`, { active: !u.active })) },
        u.active ? 'Deactivate' : 'Activate'),
        h('button', { type: 'button', dataset: { action: u.admin ? 'revoke-admin' : 'make-admin' },
          onclick: () => act(`${u.username} ${u.admin ? 'is no longer an admin' : 'is an admin'}`, () => api.call('PATCH', `/api/v1/users/${u.id}`, { admin: !u.admin })) },
        u.admin ? 'Remove admin' : 'Make admin'),
        h('button', { type: 'button', dataset: { action: 'reset-password' },
          onclick: () => {
            const password = window.prompt(`New password for ${u.username}`);
            if (password !== null) act(`${u.username}'s password reset`, () => api.post(`/api/v1/users/${u.id}/password`, { password, isHashed: false }));
          } }, 'Reset password'),
      ] },
    ], users, { rowProps: (u) => ({ dataset: { user: u.username, active: String(u.active), admin: String(u.admin) } }) }));
    const agents = agentsAnswer.agents || [];
    clear(agentsBox, table([
      { title: 'Agent', cell: (a) => a.id },
      { title: 'Pool', cell: (a) => (a.resourcePools || []).join(', ') },
      { title: 'Slots', class: 'num', cell: (a) => Object.keys(a.slots || {}).length },
      { title: 'Connected', cell: (a) => (a.cairn?.connected === false ? 'no' : 'yes') },
      { title: 'State', cell: (a) => (a.enabled ? 'enabled' : a.draining ? 'draining' : 'disabled') },
      { title: '', cell: (a) => (a.enabled
        ? [h('button', { type: 'button', dataset: { action: 'drain' }, onclick: () => act(`${a.id} draining`, () => api.post(`/api/v1/agents/${encodeURIComponent(a.id)}/disable`, { drain: true })) }, 'Drain'),
          h('button', { type: 'button', class: 'danger', dataset: { action: 'disable' }, onclick: () => {
            if (window.confirm(`Disable ${a.id} and kill its work?`)) act(`${a.id} disabled`, () => api.post(`/api/v1/agents/${encodeURIComponent(a.id)}/disable`, { drain: false }));
          } }, 'Disable')]
        : h('button', { type: 'button', dataset: { action: 'enable' }, onclick: () => act(`${a.id} enabled`, () => api.post(`/api/v1/agents/${encodeURIComponent(a.id)}/enable`)) }, 'Enable')) },
    ], agents, { empty: 'No agents.', rowProps: (a) => ({ dataset: { agent: a.id, enabled: String(a.enabled) } }) }));
  }

  clear(main, h('h1', {}, 'Administration'), status,
    h('h2', {}, 'Users'), forms, usersBox,
    h('h2', {}, 'Agents'), agentsBox,
    h('h2', {}, 'Master configuration'), h('p', { class: 'muted' }, 'Secrets are masked by the master.'), configBox,
    h('h2', {}, `Master log (last ${LOG_LINES} lines)`),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', dataset: { action: 'reload-log' }, onclick: readLog }, 'Reload log')),
    logsBox);
  readLog();
  // Live: users and agents change.
  return loadedView(usersBox, load, signal);
}
