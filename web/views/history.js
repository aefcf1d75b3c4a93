// History (admins): a timeline of the log with a scrubber. Any moment — an offset, or a time —
// shows the queue, agents, live tasks and experiments as they were then (GET
// /api/v1/history/state), beside the events around it (GET /api/v1/audit), filterable by entity
// and actor; choosing an event shows its decision's reason and the whole event.
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, formatTime, errorBox, reasonsIn, forbidden } from '../lib/dom.js';

const QUEUE_ROWS = 50;
const WINDOWS = [25, 100, 1000];  // events either side of the moment

function pastTables(state) {
  const jobs = state.jobQueue || [];
  const total = Number(state.jobQueueTotal ?? jobs.length);
  return [
    h('h2', {}, `Job queue then (${total} jobs)`),
    table([
      { title: 'Job', cell: (j) => j.name || j.jobId },
      { title: 'Pool', cell: (j) => j.resourcePool },
      { title: 'State', cell: (j) => stateBadge(String(j.state || '').replace('JOB_STATE_', '')) },
      { title: 'Priority', class: 'num', cell: (j) => j.priority ?? '' },
      { title: 'Owner', cell: (j) => j.user || '' },
      { title: 'Slots', class: 'num', cell: (j) => `${j.allocatedSlots ?? 0}/${j.requestedSlots ?? 0}` },
    ], jobs.slice(0, QUEUE_ROWS), {
      empty: 'The queue was empty.',
      rowProps: (j) => ({ dataset: { jobId: j.jobId } }),
    }),
    h('h2', {}, `Agents then (${(state.agents || []).length})`),
    table([
      { title: 'Agent', cell: (a) => a.agentId },
      { title: 'Pool', cell: (a) => a.resourcePool },
      { title: 'Slots', class: 'num', cell: (a) => a.slotCount ?? '' },
      { title: 'Connected', cell: (a) => (a.connected ? 'yes' : 'no') },
    ], state.agents || [], { empty: 'No agents then.' }),
    h('h2', {}, `Live tasks then (${(state.tasks || []).length})`),
    table([
      { title: 'Task', cell: (t) => h('code', {}, t.taskId) },
      { title: 'State', cell: (t) => stateBadge(String(t.state || '').replace('TASK_STATE_', '')) },
      { title: 'Agent', cell: (t) => t.agentId || '' },
      { title: 'Why', class: 'why', cell: (t) => t.latestReason || t.placementReason || '' },
    ], (state.tasks || []).slice(0, QUEUE_ROWS), { empty: 'No live tasks then.' }),
    h('h2', {}, `Experiments not ended then (${state.experimentsTotal ?? (state.experiments || []).length})`),
    table([
      { title: 'ID', class: 'num', cell: (e) => e.experimentId },
      { title: 'Name', cell: (e) => e.name },
      { title: 'State', cell: (e) => stateBadge(String(e.state || '').replace('EXPERIMENT_STATE_', '')) },
    ], (state.experiments || []).slice(0, QUEUE_ROWS), { empty: 'None.' }),
  ];
}

export async function show(main, route, { signal }) {
  const params = route.params;
  let master;
  try {
    // The admin-only route first: anyone else learns it here, in words, not from a broken page.
    [master] = await Promise.all([
      api.get('/api/v1/master', signal), api.get('/api/v1/audit?limit=1', signal)]);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    clear(main, h('h1', {}, 'History'), error.status === 403
      ? forbidden('history-forbidden', 'The cluster\'s history is', error)
      : errorBox(error));
    return {};
  }
  let last = Math.max(0, Number(master.cairn?.appliedOffset ?? 1) - 1);
  const at = params.has('at') ? Math.min(Number(params.get('at')) || 0, last) : last;
  const slider = h('input', { type: 'range', class: 'scrubber', id: 'history-scrubber', min: 0, max: last, value: at, 'aria-label': 'Moment (log offset)' });
  const offsetInput = h('input', { type: 'text', id: 'history-moment', value: params.get('time') || String(at), size: 28,
    placeholder: 'offset or RFC 3339 time' });
  const entity = h('input', { type: 'text', id: 'history-entity', value: params.get('entity') || '', placeholder: 'experiment/7, task/ID, agent/ID…' });
  const actor = h('input', { type: 'text', id: 'history-actor', value: params.get('actor') || '', placeholder: 'alice, agent:a1, system:scheduler' });
  const windowSelect = h('select', { id: 'history-window', 'aria-label': 'Events shown around the moment' }, WINDOWS.map((w) =>
    h('option', { value: w, selected: String(w) === (params.get('window') || '25') }, `±${w} events`)));
  const asOf = h('div', { class: 'muted', id: 'history-as-of' });
  const nowLabel = h('span', { style: { marginLeft: 'auto' } }, `offset ${last} (now)`);
  const past = h('div', { id: 'history-past' });
  const eventsBox = h('div', { id: 'history-events' });
  const detail = h('div', { class: 'card', id: 'history-detail' }, h('span', { class: 'muted' }, 'Choose an event to see its decision.'));

  // The moment in the URL, so that a moment can be shared and the back button works.
  function go(moment) {
    const isOffset = /^\d+$/.test(String(moment).trim());
    location.hash = `#/history${api.query({
      at: isOffset ? String(moment).trim() : undefined,
      time: isOffset ? undefined : String(moment).trim(),
      entity: entity.value.trim(), actor: actor.value.trim(), window: windowSelect.value,
    })}`;
  }
  slider.addEventListener('input', () => { offsetInput.value = slider.value; });
  slider.addEventListener('change', () => go(slider.value));
  const form = h('form', { class: 'toolbar', id: 'history-form' },
    h('label', {}, 'moment ', offsetInput), h('label', {}, 'entity ', entity), h('label', {}, 'actor ', actor),
    windowSelect, h('button', { type: 'submit' }, 'Show'),
    h('button', { type: 'button', onclick: () => go(String(last)) }, 'Now'));
  form.addEventListener('submit', (event) => { event.preventDefault(); go(offsetInput.value); });
  clear(main, h('h1', {}, 'History'),
    h('div', { class: 'card' }, slider,
      h('div', { class: 'toolbar muted' }, h('span', {}, 'offset 0'), nowLabel),
      form, asOf),
    h('div', { class: 'split' }, past, h('div', {}, h('h2', {}, 'Events around this moment'), detail, eventsBox)));

  const byTime = params.has('time');
  const span = Number(windowSelect.value);
  const around = (offset) => api.get(`/api/v1/audit${api.query({
    includeSystem: true, entity: entity.value.trim(), actor: actor.value.trim(),
    fromOffset: Math.max(0, offset - span), toOffset: offset + span, limit: 2 * span + 1,
  })}`, signal);
  // By offset, the past state and the events around it are asked for at once; by time, the
  // state says which offset the moment is first.
  const [state, knownRecords] = await Promise.all([
    api.get(`/api/v1/history/state${api.query(
      { ...(byTime ? { time: params.get('time') } : { at }), limit: QUEUE_ROWS, experimentLimit: QUEUE_ROWS })}`, signal)
      .catch((error) => { if (error.name === 'AbortError') throw error; return { error }; }),
    byTime ? null : around(at),
  ]);
  if (state.error) {
    clear(past, errorBox(state.error));
    return {};
  }
  const momentOffset = Number(state.asOf?.nextOffset ?? at + 1) - 1;
  slider.value = String(momentOffset);
  main.dataset.moment = String(momentOffset);
  clear(past, pastTables(state));
  const records = knownRecords ?? await around(momentOffset);
  const list = records.records || [];
  const here = list.find((r) => Number(r.offset) === momentOffset);
  clear(asOf, `As of offset ${momentOffset}`,
    here ? ` · ${formatTime(here.time)}` : '', state.asOf?.time ? ` · at or before ${formatTime(state.asOf.time)}` : '',
    state.snapshot ? ` · from the snapshot at offset ${state.snapshot.nextOffset} plus the log's tail` : ' · folded from the log');
  let selected = null;
  function choose(record, row) {
    selected?.classList.remove('selected');
    selected = row;
    row.classList.add('selected');
    const reasons = reasonsIn(record.event);
    clear(detail,
      h('strong', {}, `#${record.offset} ${record.action}`), h('span', { class: 'muted' }, ` by ${record.actor} · ${formatTime(record.time)}`),
      reasons.length ? h('ul', { id: 'history-reasons' }, reasons.map((r) => h('li', {}, r))) : h('p', { class: 'muted' }, 'This event records no reason.'),
      h('details', {}, h('summary', {}, 'the whole event'),
        h('pre', { class: 'config' }, JSON.stringify(record.event, null, 2))));
  }
  const firstAfter = list.find((r) => Number(r.offset) > momentOffset);
  clear(eventsBox, table([
    { title: '#', class: 'num', cell: (r) => r.offset },
    { title: 'Time', class: 'nowrap', cell: (r) => formatTime(r.time).slice(11) },
    { title: 'Actor', class: 'wrap', cell: (r) => r.actor },
    { title: 'Event', cell: (r) => r.action },
    { title: 'About', class: 'wrap', cell: (r) => (r.subjects || []).join(' ') },
  ], list, {
    empty: 'No events around this moment match.',
    rowProps: (r) => ({
      class: `event-row${r === firstAfter ? ' moment' : ''}`,
      dataset: { offset: String(r.offset) },
      onclick: (event) => choose(r, event.currentTarget),
    }),
  }));
  if (records.truncated) eventsBox.append(h('p', { class: 'muted' }, 'More events match than are shown.'));
  return {
    // The log grows while one looks at the past: the scrubber's end follows it.
    refresh(newest) {
      last = Math.max(last, Number(newest) || 0);
      slider.max = String(last);
      nowLabel.textContent = `offset ${last} (now)`;
    },
  };
}
