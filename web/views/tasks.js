// Tasks: commands, notebooks, shells or TensorBoards (one kind at a time, chosen by `kind`), newest
// first, a page at a time from the kind's own list route, each with its state and a link to its
// logs. (Trials are on their experiments' pages.)
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, formatTime, loadedView } from '../lib/dom.js';

const PAGE = 50;

// Each kind's list route and the key its answer holds the list under, as Determined names them.
const KINDS = {
  command: { title: 'Commands', path: '/api/v1/commands', key: 'commands' },
  notebook: { title: 'Notebooks', path: '/api/v1/notebooks', key: 'notebooks' },
  shell: { title: 'Shells', path: '/api/v1/shells', key: 'shells' },
  tensorboard: { title: 'TensorBoards', path: '/api/v1/tensorboards', key: 'tensorboards' },
};

export async function show(main, route, { signal }) {
  const kind = KINDS[route.params.get('kind')] ? route.params.get('kind') : 'command';
  const offset = Number(route.params.get('offset')) || 0;
  const at = (params) => `#/tasks?${new URLSearchParams({ kind, ...params })}`;
  const chooser = h('select', {
    id: 'task-kind',
    onchange: (event) => { location.hash = `#/tasks?kind=${event.target.value}`; },
  }, ...Object.entries(KINDS).map(([value, { title }]) =>
    h('option', { value, selected: value === kind }, title)));
  const body = h('div', { id: 'tasks-body' });
  clear(main, h('h1', {}, 'Tasks'),
    h('div', { class: 'toolbar' }, h('label', { for: 'task-kind' }, 'Kind '), chooser), body);

  async function load(minOffset, loadSignal) {
    const { path, key, title } = KINDS[kind];
    const answer = await api.get(`${path}${api.query(
      { offset, limit: PAGE, orderBy: 'ORDER_BY_DESC', minOffset })}`, loadSignal);
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
      empty: `No ${title.toLowerCase()} yet: start one with det ${kind === 'command' ? 'cmd run' : kind === 'tensorboard' ? 'tensorboard start' : `${kind} start`}.`,
      rowProps: (t) => ({ dataset: { taskId: t.id, state: t.state, kind } }),
    }));
  }

  return loadedView(body, load, signal);
}
