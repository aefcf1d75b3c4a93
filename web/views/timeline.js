// Timeline (admins): everything the log holds about one experiment, trial, task, agent or user,
// oldest first, each decision with the reason it recorded (queued, why it waited, placed where,
// preempted by whom, resumed), read from the audit trail (GET /api/v1/audit) with the master's
// own decisions included; without an entity, the audit trail itself: who did what, filtered by
// actor. A page at a time, from an offset on.
import * as api from '../lib/api.js';
import { h, clear, table, formatTime, reasonsIn, loadedView, forbidden } from '../lib/dom.js';

const PAGE = 200;

// Where a subject ("experiment/7", "task/ID") has a page of its own.
function subjectLink(subject) {
  const [kind, ...rest] = subject.split('/');
  const id = rest.join('/');
  if (kind === 'experiment') return h('a', { href: `#/experiment/${encodeURIComponent(id)}` }, subject);
  if (kind === 'task') return h('a', { href: `#/task/${encodeURIComponent(id)}` }, subject);
  return subject;
}

export async function show(main, route, { signal }) {
  const params = route.params;
  const entityValue = params.get('entity') || '';
  const from = Number(params.get('from')) || 0;
  // A timeline includes the master's own decisions; the bare audit trail only when asked.
  const system = entityValue !== '' || params.get('system') === 'true';
  const entity = h('input', { type: 'text', id: 'timeline-entity', value: entityValue, placeholder: 'experiment/7, task/ID, agent/ID, user/alice' });
  const actor = h('input', { type: 'text', id: 'timeline-actor', value: params.get('actor') || '', placeholder: 'alice, agent:a1, system:scheduler' });
  const withSystem = h('input', { type: 'checkbox', id: 'timeline-system', checked: system });
  const body = h('div', { id: 'timeline-body' });
  const go = (extra = {}) => {
    location.hash = `#/timeline?${new URLSearchParams({
      entity: entity.value.trim(), actor: actor.value.trim(), system: String(withSystem.checked), ...extra })}`;
  };
  clear(main,
    h('h1', {}, entityValue ? `Timeline of ${entityValue}` : 'Audit trail'),
    h('form', { class: 'toolbar', id: 'timeline-filters', onsubmit: (event) => { event.preventDefault(); go(); } },
      h('label', { for: 'timeline-entity' }, 'Entity '), entity,
      h('label', { for: 'timeline-actor' }, 'Actor '), actor,
      h('label', { for: 'timeline-system' }, withSystem, ' the master\'s own decisions'),
      h('button', { type: 'submit' }, 'Show')),
    body);

  async function load(minOffset, loadSignal) {
    let answer;
    try {
      answer = await api.get(`/api/v1/audit${api.query({
        entity: entityValue, actor: params.get('actor') || '', includeSystem: system,
        fromOffset: from, limit: PAGE, minOffset })}`, loadSignal);
    } catch (error) {
      if (error.status !== 403) throw error;
      clear(body, forbidden('timeline-forbidden', 'Timelines and the audit trail are', error));
      return;
    }
    const records = answer.records || [];
    const last = records.length ? Number(records[records.length - 1].offset) : from;
    clear(body,
      table([
        { title: 'When', cell: (r) => formatTime(r.time) },
        { title: 'Offset', class: 'num', cell: (r) => r.offset },
        { title: 'Who', class: 'wrap', cell: (r) => r.actor },
        { title: 'What', cell: (r) => r.action },
        { title: 'About', class: 'wrap', cell: (r) => (r.subjects || []).flatMap((s, i) => [i ? ' ' : '', subjectLink(s)]) },
        { title: 'Why', class: 'why', cell: (r) => reasonsIn(r.event).join('; ') },
      ], records, {
        empty: entityValue
          ? `Nothing in the log is about ${entityValue}: name it as experiment/7, trial/3, task/ID, agent/ID or user/NAME.`
          : 'No events match: widen the filters.',
        rowProps: (r) => ({ dataset: { offset: r.offset, action: r.action } }),
      }),
      h('div', { class: 'pager' },
        h('button', { type: 'button', disabled: from === 0, dataset: { page: 'first' }, onclick: () => go({ from: 0 }) }, '« From the start'),
        h('span', { class: 'muted' }, records.length ? `#${records[0].offset} – #${last}` : 'none'),
        h('button', { type: 'button', disabled: !answer.truncated, dataset: { page: 'next' },
          onclick: () => go({ from: last + 1 }) }, 'Later ›')));
  }

  return loadedView(body, load, signal);
}
