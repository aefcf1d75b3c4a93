// Tasks: the commands, newest first, a page at a time, each with its state and a link to its
// logs. (Notebooks, shells and TensorBoards are not in Cairn yet; trials are on their
// experiments' pages.)
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, formatTime, loadedView } from '../lib/dom.js';

const PAGE = 50;

export async function show(main, route, { signal }) {
  const offset = Number(route.params.get('offset')) || 0;
  const body = h('div', { id: 'tasks-body' });
  clear(main, h('h1', {}, 'Tasks'), body);

  async function load(minOffset, loadSignal) {
    const answer = await api.get(`/api/v1/commands${api.query(
      { offset, limit: PAGE, orderBy: 'ORDER_BY_DESC', minOffset })}`, loadSignal);
    const commands = answer.commands || [];
    // The list has no total: a full page means there may be more.
    const nav = h('div', { class: 'pager' },
      h('button', { type: 'button', disabled: offset === 0, dataset: { page: 'previous' },
        onclick: () => { location.hash = `#/tasks?offset=${Math.max(0, offset - PAGE)}`; } }, '‹ Newer'),
      h('span', { class: 'muted' }, commands.length ? `${offset + 1}–${offset + commands.length}` : 'none'),
      h('button', { type: 'button', disabled: commands.length < PAGE, dataset: { page: 'next' },
        onclick: () => { location.hash = `#/tasks?offset=${offset + PAGE}`; } }, 'Older ›'));
    clear(body, nav, table([
      { title: 'Task', cell: (c) => h('a', { href: `#/task/${encodeURIComponent(c.id)}` }, h('code', {}, c.id)) },
      { title: 'Type', cell: () => 'command' },
      { title: 'Description', cell: (c) => c.description },
      { title: 'State', cell: (c) => stateBadge(c.state) },
      { title: 'Exit', cell: (c) => c.exitStatus ?? '' },
      { title: 'Owner', cell: (c) => c.username },
      { title: 'Pool', cell: (c) => c.resourcePool },
      { title: 'Submitted', cell: (c) => formatTime(c.startTime) },
    ], commands, {
      empty: 'No commands yet.',
      rowProps: (c) => ({ dataset: { taskId: c.id, state: c.state } }),
    }));
  }

  return loadedView(body, load, signal);
}
