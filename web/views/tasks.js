// Tasks: commands, notebooks, shells or TensorBoards (one kind at a time, chosen by `kind`), newest
// first, a page at a time from the kind's own list route (filtered there by owner, workspace and
// state), each with its state and a link to its logs; and a form that launches one of the kind (workspace, pool, slots, template; a
// TensorBoard's experiments or trials), for those who may launch somewhere. (Trials are on their
// experiments' pages.)
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, formatTime, loadedView, errorBox, field, submitting } from '../lib/dom.js';

const PAGE = 50;

// Each kind, as Determined names it: `key` is its list route's last segment and the key the list
// is under, `singular` the key one task is under (a launch's answer, the task's own route),
// `taskType` the task's type, `slots` Determined's default for a launch.
export const KINDS = {
  command: { title: 'Commands', key: 'commands', singular: 'command', taskType: 'TASK_TYPE_COMMAND', noun: 'a command', slots: 1 },
  notebook: { title: 'Notebooks', key: 'notebooks', singular: 'notebook', taskType: 'TASK_TYPE_NOTEBOOK', noun: 'a notebook', slots: 1 },
  shell: { title: 'Shells', key: 'shells', singular: 'shell', taskType: 'TASK_TYPE_SHELL', noun: 'a shell', slots: 1 },
  tensorboard: { title: 'TensorBoards', key: 'tensorboards', singular: 'tensorboard', taskType: 'TASK_TYPE_TENSORBOARD', noun: 'a TensorBoard', slots: 0 },
};
const pathOf = (kind) => `/api/v1/${KINDS[kind].key}`;

// "3, 4 7" -> [3, 4, 7]; null when something in it is not an id.
function parseIds(text) {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  return parts.every((part) => /^[1-9][0-9]*$/.test(part)) ? parts.map(Number) : null;
}

// The launch form of `kind`, or null when the caller may launch in no workspace (a Viewer: the
// API refuses them too).
async function launchForm(kind, session, signal) {
  const { singular, noun, slots: defaultSlots } = KINDS[kind];
  const [open, { resourcePools = [] }, { templates = [] }] = await Promise.all([
    session.launchableWorkspaces(signal),
    api.get('/api/v1/resource-pools', signal),
    api.get(`/api/v1/templates${api.query({ limit: 1000 })}`, signal).catch(() => ({})),
  ]);
  if (!open.length) return null;
  const workspace = h('select', { id: 'launch-workspace' },
    ...open.map((w) => h('option', { value: String(w.id) }, w.name)));
  const pool = h('select', { id: 'launch-pool' }, h('option', { value: '' }, "the workspace's default"),
    ...resourcePools.map((p) => h('option', { value: p.name }, p.name)));
  const slots = h('input', { id: 'launch-slots', type: 'number', min: '0', max: '4096', value: String(defaultSlots), required: true });
  const template = h('select', { id: 'launch-template' }, h('option', { value: '' }, 'none'),
    ...templates.map((t) => h('option', { value: t.name }, t.name)));
  const description = h('input', { id: 'launch-description', type: 'text', maxlength: '256' });
  const entrypoint = h('input', { id: 'launch-entrypoint', type: 'text', required: true, placeholder: 'python3 train.py' });
  const experimentIds = h('input', { id: 'launch-experiments', type: 'text', placeholder: '12, 15' });
  const trialIds = h('input', { id: 'launch-trials', type: 'text', placeholder: '40' });
  const errors = h('div', { id: 'launch-error', role: 'alert' });
  const submit = h('button', { type: 'submit', dataset: { action: 'launch' } }, 'Launch');

  async function launch() {
    const config = { resources: { slots: Number(slots.value) } };
    if (pool.value) config.resources.resource_pool = pool.value;
    if (description.value.trim()) config.description = description.value.trim();
    if (kind === 'command') config.entrypoint = entrypoint.value;
    const body = { config, workspaceId: Number(workspace.value) };
    if (template.value) body.templateName = template.value;
    if (kind === 'tensorboard') {
      const experiments = parseIds(experimentIds.value);
      const trials = parseIds(trialIds.value);
      if (!experiments || !trials) {
        throw new Error('experiment and trial ids are numbers, separated by commas or spaces');
      }
      body.experimentIds = experiments;
      body.trialIds = trials;
    }
    const answer = await api.post(pathOf(kind), body);
    location.hash = `#/task/${encodeURIComponent(answer[singular].id)}`;
  }

  return h('details', { id: 'launch', class: 'card' },
    h('summary', {}, `Launch ${noun}`),
    h('form', { id: 'launch-form', class: 'form-grid', onsubmit: submitting(errors, launch), 'aria-label': `Launch ${noun}` },
      field('launch-workspace', 'Workspace', workspace),
      field('launch-pool', 'Resource pool', pool),
      field('launch-slots', 'Slots', slots),
      field('launch-template', 'Template', template),
      kind === 'command' ? field('launch-entrypoint', 'Command line', entrypoint) : null,
      kind === 'tensorboard'
        ? [field('launch-experiments', 'Experiments', experimentIds), field('launch-trials', 'Trials', trialIds)]
        : null,
      field('launch-description', 'Description', description),
      h('div', { class: 'toolbar wide' }, submit),
      errors));
}

const STATES = ['STATE_QUEUED', 'STATE_STARTING', 'STATE_RUNNING', 'STATE_TERMINATING', 'STATE_TERMINATED'];

// The filters in the URL (#/tasks?kind=shell&users=alice&workspaceId=2&states=STATE_RUNNING) and
// the form that sets them.
function filterForm(kind, filters, workspaces) {
  const owner = h('input', { type: 'text', id: 'task-owner', value: filters.users, placeholder: 'anyone', size: 12 });
  const workspace = h('select', { id: 'task-workspace' }, h('option', { value: '' }, 'any'),
    ...workspaces.map((w) => h('option', { value: String(w.id), selected: String(w.id) === filters.workspaceId }, w.name)));
  const state = h('select', { id: 'task-state' }, h('option', { value: '' }, 'any'),
    ...STATES.map((name) => h('option', { value: name, selected: name === filters.states }, name.replace('STATE_', '').toLowerCase())));
  const chooser = h('select', { id: 'task-kind' }, ...Object.entries(KINDS).map(([value, { title }]) =>
    h('option', { value, selected: value === kind }, title)));
  const apply = () => {
    const params = { kind: chooser.value, users: owner.value.trim(), workspaceId: workspace.value, states: state.value };
    location.hash = `#/tasks?${new URLSearchParams(Object.entries(params).filter(([, v]) => v))}`;
  };
  for (const select of [chooser, workspace, state]) select.addEventListener('change', apply);
  return h('form', { class: 'toolbar', id: 'task-filters', onsubmit: (event) => { event.preventDefault(); apply(); } },
    h('label', { for: 'task-kind' }, 'Kind '), chooser,
    h('label', { for: 'task-owner' }, 'Owner '), owner,
    h('label', { for: 'task-workspace' }, 'Workspace '), workspace,
    h('label', { for: 'task-state' }, 'State '), state,
    h('button', { type: 'submit' }, 'Filter'));
}

export async function show(main, route, { session, signal }) {
  const kind = KINDS[route.params.get('kind')] ? route.params.get('kind') : 'command';
  const offset = Number(route.params.get('offset')) || 0;
  const filters = Object.fromEntries(['users', 'workspaceId', 'states'].map((key) => [key, route.params.get(key) || '']));
  const chosen = Object.fromEntries(Object.entries(filters).filter(([, value]) => value));
  const at = (params) => `#/tasks?${new URLSearchParams({ kind, ...chosen, ...params })}`;
  const filterBox = h('div', { id: 'task-filter-area' });
  const body = h('div', { id: 'tasks-body' });
  const launch = h('div', { id: 'launch-area' });
  clear(main, h('h1', {}, 'Tasks'), filterBox, launch, body);
  clear(filterBox, filterForm(kind, filters, []));
  // The workspaces fill their filter when they come; the list waits for nothing but itself.
  api.get(`/api/v1/workspaces${api.query({ limit: 1000 })}`, signal)
    .then(({ workspaces = [] }) => clear(filterBox, filterForm(kind, filters, workspaces)))
    .catch(() => {});
  // The form waits for nothing the list needs: a failure to build it is said where it would be.
  launchForm(kind, session, signal).then((form) => clear(launch, form))
    .catch((error) => { if (error.name !== 'AbortError') clear(launch, errorBox(error)); })
    .finally(() => { launch.dataset.ready = 'true'; });

  async function load(minOffset, loadSignal) {
    const { key, title } = KINDS[kind];
    const answer = await api.get(`${pathOf(kind)}${api.query(
      { offset, limit: PAGE, orderBy: 'ORDER_BY_DESC', minOffset, ...chosen })}`, loadSignal);
    const tasks = answer[key] || [];
    // The list has no total: a full page means there may be more.
    const nav = h('div', { class: 'pager' },
      h('button', { type: 'button', disabled: offset === 0, dataset: { page: 'previous' },
        onclick: () => { location.hash = at({ offset: Math.max(0, offset - PAGE) }); } }, '‹ Newer'),
      h('span', { class: 'muted' }, tasks.length ? `${offset + 1}–${offset + tasks.length}` : 'none'),
      h('button', { type: 'button', disabled: tasks.length < PAGE, dataset: { page: 'next' },
        onclick: () => { location.hash = at({ offset: offset + PAGE }); } }, 'Older ›'));
    clear(body, nav, table([
      { title: 'Task', cell: (t) => h('a', { href: `#/task/${encodeURIComponent(t.id)}` }, h('code', {}, t.id)) },
      { title: 'Type', cell: () => kind },
      { title: 'Description', cell: (t) => t.description },
      { title: 'State', cell: (t) => stateBadge(t.state) },
      { title: 'Exit', cell: (t) => t.exitStatus ?? '' },
      { title: 'Owner', cell: (t) => t.username },
      { title: 'Pool', cell: (t) => t.resourcePool },
      { title: 'Submitted', cell: (t) => formatTime(t.startTime) },
    ], tasks, {
      empty: Object.keys(chosen).length
        ? `No ${title.toLowerCase()} match these filters: widen them.`
        : `No ${title.toLowerCase()} yet: start one with det ${kind === 'command' ? 'cmd run' : kind === 'tensorboard' ? 'tensorboard start' : `${kind} start`}.`,
      rowProps: (t) => ({ dataset: { taskId: t.id, state: t.state, kind } }),
    }));
  }

  return loadedView(body, load, signal);
}
