// Job queue: each pool's jobs in the order the scheduler takes them, a page at a time (a queue
// may hold 10,000 jobs), with why each waits (the scheduler's explanation, in the same request),
// and, for the jobs the caller may change, priority, weight and kill.
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, since, pager, loadedView } from '../lib/dom.js';

const PAGE = 50;

function killPath(job) {
  const id = encodeURIComponent(job.entityId);
  if (job.type === 'TYPE_EXPERIMENT') return `/api/v1/experiments/${id}/kill`;
  if (job.type === 'TYPE_COMMAND') return `/api/v1/commands/${id}/kill`;
  return `/api/v1/tasks/${id}/kill`;
}

function jobLink(job) {
  const id = encodeURIComponent(job.entityId);
  const href = job.type === 'TYPE_EXPERIMENT' ? `#/experiment/${id}` : `#/task/${id}`;
  return h('a', { href }, job.name || job.jobId);
}

export async function show(main, route, { session, signal }) {
  const poolsAnswer = await api.get('/api/v1/resource-pools', signal);
  const pools = poolsAnswer.resourcePools || [];
  const pool = route.params.get('pool') || pools.find((p) => p.defaultComputePool)?.name || pools[0]?.name || '';
  let offset = Number(route.params.get('offset')) || 0;
  const status = h('div', { class: 'muted', id: 'queue-status' });
  const body = h('div', { id: 'queue-body' });
  const tabs = h('div', { class: 'tabs' }, pools.map((p) =>
    h('a', { href: `#/queue?pool=${encodeURIComponent(p.name)}`, class: p.name === pool ? 'active' : '' }, p.name)));
  clear(main, h('h1', {}, 'Job queue'), h('div', { class: 'toolbar' }, tabs, status), body);

  async function update(job, change) {
    status.textContent = '';
    try {
      await api.post('/api/v1/job-queues', { updates: [{ jobId: job.jobId, ...change }] });
      status.textContent = `updated ${job.name || job.jobId}`;
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
    }
  }

  async function kill(job) {
    if (!window.confirm(`Kill ${job.name || job.jobId}?`)) return;
    try {
      await api.post(killPath(job));
      status.textContent = `kill requested for ${job.name || job.jobId}`;
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
    }
  }

  function numberInput(job, field, step) {
    if (!session.canModify(job.username, job.workspaceId)) return String(job[field]);
    return h('input', {
      type: 'number', value: String(job[field]), step, dataset: { field },
      onchange: (event) => update(job, { [field]: Number(event.target.value) }),
    });
  }

  async function load(minOffset, loadSignal) {
    const page = await api.get(`/api/v1/job-queues-v2${api.query(
      { resourcePool: pool, offset, limit: PAGE, explain: true, minOffset })}`, loadSignal);
    // A job's place in the scheduler's order: the page's start plus its row.
    const start = Number(page.pagination?.startIndex ?? offset);
    const jobs = (page.jobs || []).map((entry, i) => ({
      ...(entry.full || { ...entry.limited, limited: true }), rank: start + i + 1 }));
    const rows = table([
      { title: '#', class: 'num', cell: (job) => job.rank },
      { title: 'Job', cell: (job) => (job.limited ? h('span', { class: 'muted' }, '(not visible to you)') : jobLink(job)) },
      { title: 'Type', cell: (job) => String(job.type).replace('TYPE_', '').toLowerCase() },
      { title: 'State', cell: (job) => stateBadge(job.summary?.state) },
      { title: 'Priority', class: 'num', cell: (job) => (job.limited ? '' : numberInput(job, 'priority', 1)) },
      { title: 'Weight', class: 'num', cell: (job) => (job.limited ? '' : numberInput(job, 'weight', 0.1)) },
      { title: 'Owner', cell: (job) => job.username || '' },
      { title: 'Waiting', cell: (job) => h('span', { dataset: { since: job.submissionTime || '' } }, since(job.submissionTime)) },
      { title: 'Slots', class: 'num', cell: (job) => `${job.allocatedSlots}/${job.requestedSlots}` },
      { title: 'Why', class: 'why', cell: (job) => job.cairn?.explanation || '' },
      { title: '', cell: (job) => (!job.limited && session.canModify(job.username, job.workspaceId)
        ? h('button', { type: 'button', class: 'danger', dataset: { action: 'kill' }, onclick: () => kill(job) }, 'Kill')
        : '') },
    ], jobs, {
      empty: `The queue of pool ${pool} is empty.`,
      rowProps: (job) => ({ dataset: { jobId: job.jobId, entityId: job.entityId || '', state: job.summary?.state || '' } }),
    });
    clear(body, pager(page.pagination, PAGE, (to) => {
      location.hash = `#/queue${api.query({ pool, offset: to })}`;
    }), rows);
  }

  const view = await loadedView(body, load, signal);
  return {
    refresh(minOffset, refreshSignal) {
      // Not while the user types a new priority or weight into the table.
      if (body.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return;
      view.refresh(minOffset, refreshSignal);
    },
  };
}
