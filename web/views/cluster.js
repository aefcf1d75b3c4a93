// Cluster: the resource pools (slots used of total, jobs in the queue), the cluster's slots and
// queue over time (utilization.js), and every agent with its slots, free or busy and with what.
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, formatTime, timelineLink } from '../lib/dom.js';
import { UtilizationChart } from './utilization.js';

async function load(minOffset, signal) {
  const q = api.query({ minOffset });
  const [pools, agents] = await Promise.all([
    api.get(`/api/v1/resource-pools${q}`, signal),
    api.get(`/api/v1/agents${q}`, signal),
  ]);
  // One job of each pool's queue is enough to learn its length (pagination.total).
  const queued = await Promise.all((pools.resourcePools || []).map((pool) =>
    api.get(`/api/v1/job-queues-v2${api.query({ resourcePool: pool.name, limit: 1, minOffset })}`, signal)
      .then((page) => Number(page.pagination?.total ?? 0))));
  return { pools: pools.resourcePools || [], agents: agents.agents || [], queued };
}

function poolCard(pool, jobs) {
  const total = Number(pool.slotsAvailable) || 0;
  const used = Number(pool.slotsUsed) || 0;
  return h('div', { class: 'card', dataset: { pool: pool.name } },
    h('div', { class: 'muted' }, `pool ${pool.name}`,
      pool.defaultComputePool ? ' · default compute' : '', pool.defaultAuxPool ? ' · default aux' : ''),
    h('div', { class: 'stat', dataset: { used: String(used), total: String(total) } }, `${used} / ${total} slots`),
    h('div', { class: 'bar' }, h('div', { style: { width: `${total ? (100 * used) / total : 0}%` } })),
    h('div', { class: 'muted' },
      `${pool.numAgents} agents · ${jobs} jobs in queue · ${String(pool.schedulerType).replace('SCHEDULER_TYPE_', '').toLowerCase()}`),
    h('a', { href: `#/queue?pool=${encodeURIComponent(pool.name)}` }, 'queue →'));
}

function slotsOf(agent) {
  return Object.values(agent.slots || {}).sort((a, b) => Number(a.id) - Number(b.id)).map((slot) => {
    const busy = Boolean(slot.container);
    return h('div', {
      class: `slot${busy ? ' busy' : ''}${slot.enabled ? '' : ' disabled'}`,
      title: busy ? `slot ${slot.id}: ${slot.container.id}` : `slot ${slot.id}: free`,
      dataset: { slot: slot.id, busy: String(busy) },
    });
  });
}

function render(body, data, session) {
  const agentRows = table([
    { title: 'Agent', cell: (a) => h('strong', {}, a.id) },
    { title: 'Pool', cell: (a) => (a.resourcePools || []).join(', ') },
    { title: 'State', cell: (a) => stateBadge(a.cairn?.connected ? (a.enabled ? 'ACTIVE' : 'DISABLED') : 'DISCONNECTED') },
    { title: 'Slots (busy = running work)', cell: (a) => h('div', { class: 'slots' }, slotsOf(a)) },
    { title: 'Running', class: 'num', cell: (a) => a.cairn?.runningAllocations ?? 0 },
    { title: 'Host', cell: (a) => (a.addresses || []).join(', ') },
    { title: 'Registered', cell: (a) => formatTime(a.registeredTime) },
    // The timeline view reads the audit trail, which is for admins.
    session.admin ? { title: 'History', cell: (a) => timelineLink(undefined, `agent/${a.id}`) } : null,
  ].filter(Boolean), data.agents, {
    empty: 'No agents have registered.',
    rowProps: (a) => ({ dataset: { agent: a.id } }),
  });
  clear(body,
    h('div', { class: 'cards' }, data.pools.map((pool, i) => poolCard(pool, data.queued[i]))),
    h('h2', {}, `Agents (${data.agents.length})`),
    agentRows);
}

export async function show(main, route, { session, signal }) {
  const body = h('div', { id: 'cluster-now' });
  // Outside the body the live refresh redraws: the chart keeps its window and its canvas.
  const chart = new UtilizationChart({ admin: session.admin });
  clear(main, h('h1', {}, 'Cluster'), body, chart.element);
  const [data] = await Promise.all([load(undefined, signal), chart.load()]);
  render(body, data, session);
  return {
    async refresh(minOffset, refreshSignal) {
      const [fresh] = await Promise.all([load(minOffset, refreshSignal), chart.load({ live: true, minOffset })]);
      render(body, fresh, session);
    },
    dispose() {
      chart.dispose();
    },
  };
}
