// Workspaces and projects, as Determined's navigation has them: the workspaces (#/workspaces),
// pinned first, with their owners, projects and experiments, and a form that makes one; rename,
// archive and pin where the caller may. A workspace's page (#/workspaces/ID) lists its projects,
// each linked to its experiments, with a form that makes one and archive for those who may, and
// the workspace's default and bound pools. Experiments move between projects from their pages.
import * as api from '../lib/api.js';
import { h, clear, table, loadedView, field, submitting } from '../lib/dom.js';

// A form of one name, posting `body(name)` to `path`, then `done(answer, form)`.
function createForm(id, title, path, body, done) {
  const name = h('input', { id: `${id}-name`, type: 'text', required: true, maxlength: '256' });
  const errors = h('div', { id: `${id}-error`, role: 'alert' });
  async function submit(event) {
    done(await api.post(path, body(name.value.trim())), event.target);
  }
  return h('details', { id, class: 'card' }, h('summary', {}, title),
    h('form', { class: 'form-grid', onsubmit: submitting(errors, submit), 'aria-label': title },
      field(`${id}-name`, 'Name', name),
      h('div', { class: 'toolbar wide' }, h('button', { type: 'submit', dataset: { action: id } }, 'Create')),
      errors));
}

async function showWorkspace(main, id, session, signal) {
  const body = h('div', { id: 'workspace-body' });
  const projectsBox = h('div', { id: 'workspace-projects' });
  // Made once: the live refresh redraws what is around it, never a form being typed into.
  const formArea = h('div');
  const status = h('span', { class: 'muted', id: 'workspace-status' });
  clear(main, h('p', {}, h('a', { href: '#/workspaces' }, '‹ Workspaces')), body, formArea, projectsBox);
  async function archiveProject(project, archive) {
    try {
      await api.post(`/api/v1/projects/${project.id}/${archive ? 'archive' : 'unarchive'}`);
      status.textContent = `project ${project.name} ${archive ? 'archived' : 'unarchived'}`;
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
    }
  }
  async function load(minOffset, loadSignal) {
    const [{ workspace }, { projects = [] }] = await Promise.all([
      api.get(`/api/v1/workspaces/${id}${api.query({ minOffset })}`, loadSignal),
      api.get(`/api/v1/workspaces/${id}/projects${api.query({ limit: 1000, minOffset })}`, loadSignal)]);
    const mayCreate = session.canLaunch(workspace.id) && !workspace.archived;
    if (mayCreate && !formArea.firstChild) {
      clear(formArea, createForm('project-create', 'New project', `/api/v1/workspaces/${workspace.id}/projects`,
        // The project's event redraws the list.
        (name) => ({ name, workspaceId: workspace.id }), (_, form) => form.reset()));
    }
    clear(body,
      h('h1', {}, `Workspace ${workspace.name}`, workspace.archived ? h('span', { class: 'state ARCHIVED' }, 'ARCHIVED') : null),
      h('dl', { class: 'kv card' },
        h('dt', {}, 'owner'), h('dd', {}, workspace.username || ''),
        h('dt', {}, 'experiments'), h('dd', {}, workspace.numExperiments ?? ''),
        h('dt', {}, 'default compute pool'), h('dd', {}, workspace.defaultComputePool || "the cluster's"),
        h('dt', {}, 'default aux pool'), h('dd', {}, workspace.defaultAuxPool || "the cluster's")));
    clear(projectsBox,
      h('h2', {}, `Projects (${projects.length})`),
      table([
        { title: 'Project', cell: (p) => h('a', { href: `#/experiments?projectId=${p.id}&title=${encodeURIComponent(`${workspace.name} / ${p.name}`)}` }, p.name) },
        { title: 'Description', class: 'wrap', cell: (p) => p.description || '' },
        { title: 'Experiments', class: 'num', cell: (p) => p.numExperiments ?? '' },
        { title: 'Owner', cell: (p) => p.username || '' },
        { title: '', cell: (p) => (session.canModify(p.username, workspace.id) && !p.immutable
          ? h('button', { type: 'button', dataset: { action: p.archived ? 'unarchive' : 'archive' }, onclick: () => archiveProject(p, !p.archived) }, p.archived ? 'Unarchive' : 'Archive')
          : (p.archived ? 'archived' : '')) },
      ], projects, {
        empty: 'No projects yet.',
        rowProps: (p) => ({ dataset: { project: p.name, projectId: String(p.id), archived: String(p.archived) } }),
      }),
      status);
  }
  return loadedView(body, load, signal);
}

export async function show(main, route, { session, signal }) {
  if (route.id) return showWorkspace(main, encodeURIComponent(route.id), session, signal);
  const body = h('div', { id: 'workspaces-body' });
  const status = h('span', { class: 'muted', id: 'workspaces-status' });
  clear(main, h('h1', {}, 'Workspaces'),
    createForm('workspace-create', 'New workspace', '/api/v1/workspaces', (name) => ({ name }),
      (answer) => { location.hash = `#/workspaces/${answer.workspace.id}`; }),
    body, status);
  async function act(workspace, action, request) {
    try {
      await request();
      status.textContent = `workspace ${workspace.name}: ${action}`;
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
    }
  }
  async function rename(workspace) {
    const name = window.prompt(`Rename workspace ${workspace.name} to`, workspace.name);
    if (!name || name === workspace.name) return;
    await act(workspace, `renamed to ${name}`, () => api.call('PATCH', `/api/v1/workspaces/${workspace.id}`, { name }));
  }
  async function load(minOffset, loadSignal) {
    const { workspaces = [] } = await api.get(`/api/v1/workspaces${api.query({ limit: 1000, sortBy: 'SORT_BY_NAME', minOffset })}`, loadSignal);
    const ordered = [...workspaces.filter((w) => w.pinned), ...workspaces.filter((w) => !w.pinned)];
    clear(body, table([
      { title: 'Workspace', cell: (w) => [h('a', { href: `#/workspaces/${w.id}` }, w.name), w.pinned ? [' ', h('span', { class: 'state' }, 'PINNED')] : null] },
      { title: 'Owner', cell: (w) => w.username || '' },
      { title: 'Projects', class: 'num', cell: (w) => w.numProjects },
      { title: 'Experiments', class: 'num', cell: (w) => w.numExperiments },
      { title: 'State', cell: (w) => (w.archived ? 'archived' : '') },
      { title: '', cell: (w) => {
        const mine = session.canModify(w.username, w.id) && !w.immutable;
        return [
          h('button', { type: 'button', dataset: { action: w.pinned ? 'unpin' : 'pin' },
            onclick: () => act(w, w.pinned ? 'unpinned' : 'pinned', () => api.post(`/api/v1/workspaces/${w.id}/${w.pinned ? 'unpin' : 'pin'}`)) }, w.pinned ? 'Unpin' : 'Pin'),
          mine ? h('button', { type: 'button', dataset: { action: 'rename' }, onclick: () => rename(w) }, 'Rename') : null,
          mine ? h('button', { type: 'button', dataset: { action: w.archived ? 'unarchive' : 'archive' },
            onclick: () => act(w, w.archived ? 'unarchived' : 'archived', () => api.post(`/api/v1/workspaces/${w.id}/${w.archived ? 'unarchive' : 'archive'}`)) }, w.archived ? 'Unarchive' : 'Archive') : null,
        ];
      } },
    ], ordered, {
      empty: 'No workspaces.',
      rowProps: (w) => ({ dataset: { workspace: w.name, workspaceId: String(w.id), pinned: String(w.pinned), archived: String(w.archived) } }),
    }));
  }
  return loadedView(body, load, signal);
}
