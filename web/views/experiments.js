// Experiments: a page at a time (a cluster may hold thousands), newest first, with state,
// progress and the best value of the searcher's metric so far.
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, formatTime, formatNumber, pager, loadedView } from '../lib/dom.js';

const PAGE = 50;

// The best searcher metric over the experiment's trials, by its own smallerIsBetter.
export function bestMetric(experiment) {
  const smaller = experiment.cairn?.smallerIsBetter !== false;
  let best;
  for (const trial of experiment.trials || []) {
    const value = trial.searcherMetricValue;
    if (typeof value !== 'number') continue;
    if (best === undefined || (smaller ? value < best : value > best)) best = value;
  }
  return best;
}

export async function show(main, route, { signal }) {
  // The list is oldest first; a page from its end shows the newest.
  const requested = route.params.get('offset');
  // A project's experiments (from its workspace's page), or everyone's.
  const projectId = route.params.get('projectId') || undefined;
  const body = h('div', { id: 'experiments-body' });
  clear(main, h('h1', {}, projectId ? `Experiments of ${route.params.get('title') || `project ${projectId}`}` : 'Experiments'), body);

  async function load(minOffset, loadSignal) {
    let offset = Number(requested) || 0;
    let page = await api.get(`/api/v1/experiments${api.query({ offset, limit: PAGE, projectId, minOffset })}`, loadSignal);
    const total = Number(page.pagination?.total ?? 0);
    if (requested === null && total > PAGE) {
      offset = total - PAGE;
      page = await api.get(`/api/v1/experiments${api.query({ offset, limit: PAGE, projectId, minOffset })}`, loadSignal);
    }
    const experiments = (page.experiments || []).slice().reverse();
    const rows = table([
      { title: 'ID', class: 'num', cell: (e) => h('a', { href: `#/experiment/${e.id}` }, e.id) },
      { title: 'Name', cell: (e) => h('a', { href: `#/experiment/${e.id}` }, e.name) },
      { title: 'State', cell: (e) => stateBadge(e.state) },
      { title: 'Progress', class: 'num', cell: (e) => `${Math.round(100 * (Number(e.progress) || 0))}%` },
      { title: 'Trials', class: 'num', cell: (e) => e.numTrials ?? (e.trials || []).length },
      { title: 'Best metric', class: 'num', cell: (e) => {
        const best = bestMetric(e);
        return best === undefined ? '' : `${e.cairn?.searcherMetric || ''} ${formatNumber(best)}`;
      } },
      { title: 'Owner', cell: (e) => e.username },
      { title: 'Started', cell: (e) => formatTime(e.startTime) },
    ], experiments, {
      empty: 'No experiments yet.',
      rowProps: (e) => ({ dataset: { experimentId: String(e.id), state: e.state } }),
    });
    clear(body, pager(page.pagination, PAGE, (to) => {
      location.hash = `#/experiments?${new URLSearchParams({ ...Object.fromEntries(route.params), offset: to })}`;
    }), rows);
  }

  return loadedView(body, load, signal);
}
