// Job queue: each pool's jobs in the order the scheduler takes them, a page at a time (a queue
// may hold 10,000 jobs), with why each waits (the scheduler's explanation, asked per job shown),
// and, for the jobs the caller may change, priority, weight and kill.
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, since, pager, errorBox } from '../lib/dom.js';

const PAGE = 50;
const EXPLAIN_AT_ONCE = 4;  // the browser holds 6 connections; the event stream has one

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

// The scheduler's words for each job on the page, a few requests at a time.
async function explain(jobs, signal) {
  const reasons = new Map();
  let next = 0;
  async function worker() {
    while (next < jobs.length) {
      const job = jobs[next++];
      const taskId = job.cairn?.taskIds?.[0];
      if (!taskId) continue;
      try {
        const answer = await api.get(`/api/v1/tasks/${encodeURIComponent(taskId)}?explain=true`, signal);
        reasons.set(job.jobId, answer.task?.explanation || answer.task?.latestReason || '');
      } catch (error) {
        if (error.name === 'AbortError') throw error;
        reasons.set(job.jobId, `(${error.message})`);
      }
    }
  }
  await Promise.all(Array.from({ length: EXPLAIN_AT_ONCE }, worker));
  return reasons;
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
      { resourcePool: pool, offset, limit: PAGE, minOffset })}`, loadSignal);
    const jobs = (page.jobs || []).map((entry) => entry.full || { ...entry.limited, limited: true });
    const reasons = await explain(jobs.filter((job) => !job.limited), loadSignal);
    const rows = table([
      { title: '#', class: 'num', cell: (job) => Number(job.cairn?.queuePosition ?? 0) + 1 },
      { title: 'Job', cell: (job) => (job.limited ? h('span', { class: 'muted' }, '(not visible to you)') : jobLink(job)) },
      { title: 'Type', cell: (job) => String(job.type).replace('TYPE_', '').toLowerCase() },
      { title: 'State', cell: (job) => stateBadge(job.summary?.state) },
      { title: 'Priority', class: 'num', cell: (job) => (job.limited ? '' : numberInput(job, 'priority', 1)) },
      { title: 'Weight', class: 'num', cell: (job) => (job.limited ? '' : numberInput(job, 'weight', 0.1)) },
      { title: 'Owner', cell: (job) => job.username || '' },
      { title: 'Waiting', cell: (job) => h('span', { dataset: { since: job.submissionTime || '' } }, since(job.submissionTime)) },
      { title: 'Slots', class: 'num', cell: (job) => `${job.allocatedSlots}/${job.requestedSlots}` },
      { title: 'Why', class: 'why', cell: (job) => reasons.get(job.jobId) || '' },
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

  try {
    await load(undefined, signal);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    clear(body, errorBox(error));
  }
  return {
    refresh(minOffset, refreshSignal) {
      // Not while the user types a new priority or weight into the table.
      if (body.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return;
      load(minOffset, refreshSignal).catch(() => {});
    },
  };
}
