// One experiment: its trials (hyperparameters, state, best validation), learning curves per
// trial (training and validation, any metric, linear or log scale), checkpoints, configuration,
// a trial's logs followed live, and pause / activate / kill for those who may.
import * as api from '../lib/api.js';
import { lineChart } from '../lib/charts.js';
import {
  h, clear, table, stateBadge, formatTime, formatNumber, formatBytes, errorBox, field, submitting, timelineLink,
} from '../lib/dom.js';
import { bestMetric } from './experiments.js';

const COLOURS = ['#2f6fb3', '#d1495b', '#2e7d4f', '#edae49', '#6a4c93', '#00798c', '#8d6a9f',
  '#c36f09', '#4f6d7a', '#9e2a2b'];
const TERMINAL = new Set(['STATE_COMPLETED', 'STATE_CANCELED', 'STATE_ERROR', 'STATE_DELETED']);

// A curve's budget of points: the server downsamples each series to it, keeping every
// bucket's highest and lowest value, so a million-point trial draws fast and keeps its spikes.
const MAX_POINTS = 1000;
const TRIALS_PER_READ = 100;

async function load(id, minOffset, signal) {
  const q = api.query({ minOffset });
  const [experimentAnswer, trialsAnswer, checkpointsAnswer, namesAnswer] = await Promise.all([
    api.get(`/api/v1/experiments/${id}${q}`, signal),
    api.get(`/api/v1/experiments/${id}/trials${api.query({ limit: 0, minOffset })}`, signal),
    api.get(`/api/v1/experiments/${id}/checkpoints${q}`, signal),
    api.get(`/api/v1/experiments/metrics-stream/metric-names${api.query({ ids: id, minOffset })}`, signal),
  ]);
  const names = namesAnswer.result || {};
  return {
    experiment: experimentAnswer.experiment,
    trials: trialsAnswer.trials || [],
    names: { training: names.trainingMetrics || [], validation: names.validationMetrics || [] },
    series: { training: new Map(), validation: new Map() },
    checkpoints: checkpointsAnswer.checkpoints || [],
  };
}

// trial id -> [{x: batches, y: value}] of one metric of a group, for every trial of `trials`.
async function loadSeries(trials, kind, metric, minOffset, signal) {
  const series = new Map();
  if (!metric) return series;
  const reads = [];
  for (let i = 0; i < trials.length; i += TRIALS_PER_READ) {
    const trialIds = trials.slice(i, i + TRIALS_PER_READ).map((trial) => trial.id);
    reads.push(api.get(`/api/v1/trials/time-series${api.query({
      trialIds, group: kind, metricNames: metric, maxDatapoints: MAX_POINTS, minOffset,
    })}`, signal));
  }
  for (const answer of await Promise.all(reads)) {
    for (const entry of answer.trials || []) {
      const data = (entry.metrics || []).find((group) => group.group === kind)?.data || [];
      series.set(entry.trial.id, data
        .filter((point) => typeof point.values?.[metric] === 'number')
        .map((point) => ({ x: Number(point.batches), y: point.values[metric] })));
    }
  }
  return series;
}

// One chart of one kind of metric; redraws in place when the data or the choices change.
class CurveChart {
  // onChoose(kind, metric): loads the chosen metric's curves into the data, then the chart draws.
  constructor(kind, title, preferred, onChoose) {
    this.kind = kind;
    this.preferred = preferred;
    this.select = h('select', {
      dataset: { metricFor: kind },
      'aria-label': `${title} metric`,
      onchange: async () => {
        await onChoose(kind, this.select.value);
        this.draw();
      },
    });
    this.canvas = h('canvas', { id: `chart-${kind}`, role: 'img', 'aria-label': `${title} curves` });
    this.note = h('div', { class: 'muted' });
    this.element = h('div', { class: 'card' },
      h('div', { class: 'toolbar' }, h('strong', {}, title), this.select, this.note),
      h('div', { class: 'chart-box' }, this.canvas));
    this.chart = null;
  }

  // The metric to draw among `names`: the one chosen, else the preferred one, else the first.
  choose(names) {
    if (names.includes(this.select.value)) return this.select.value;
    return names.includes(this.preferred) ? this.preferred : names[0];
  }

  setData(data, logScale) {
    this.data = data;
    this.logScale = logScale;
    const names = data.names[this.kind];
    const chosen = this.choose(names);
    clear(this.select, names.map((name) => h('option', { value: name, selected: name === chosen }, name)));
    this.draw();
  }

  draw() {
    const series = this.data.trials.map((trial) => ({
      trial, points: this.data.series[this.kind].get(trial.id) || [],
    }));
    const datasets = series.map(({ trial, points }, i) => ({
      label: `trial ${trial.id}`,
      data: points,
      borderColor: COLOURS[i % COLOURS.length],
      backgroundColor: COLOURS[i % COLOURS.length],
      pointRadius: points.length > 60 ? 0 : 3,
      borderWidth: 1.5,
    }));
    // A log scale cannot show zero or less: say so rather than draw nothing.
    const unplottable = this.logScale && series.some(({ points }) => points.some((p) => p.y <= 0));
    this.note.textContent = unplottable ? 'values ≤ 0 are left off the log scale' : '';
    if (!window.Chart) {
      this.note.textContent = 'Chart.js is missing: no curves';
      return;
    }
    const yType = this.logScale ? 'logarithmic' : 'linear';
    if (this.chart) {
      this.chart.data.datasets = datasets;
      this.chart.options.scales.y.type = yType;
      this.chart.update('none');
      return;
    }
    this.chart = lineChart(this.canvas, datasets, {
      scales: {
        x: { type: 'linear', title: { display: true, text: 'batches' } },
        y: { type: yType },
      },
    });
  }

  dispose() {
    this.chart?.destroy();
  }
}

// A trial's logs, followed until the trial ends or another is chosen.
class TrialLogs {
  constructor() {
    this.title = h('strong', {}, 'Trial logs');
    this.pre = h('pre', { class: 'logs', id: 'trial-logs' }, 'Choose a trial above.');
    this.element = h('div', { class: 'card' }, h('div', { class: 'toolbar' }, this.title), this.pre);
    this.controller = null;
  }

  follow(trialId) {
    this.controller?.abort();
    this.controller = new AbortController();
    this.title.textContent = `Trial ${trialId} logs (live)`;
    this.pre.textContent = '';
    this.pre.dataset.trial = String(trialId);
    const { pre } = this;
    api.stream(`/api/v1/trials/${trialId}/logs?follow=true`, (line) => {
      const message = line.result?.message ?? line.error?.message ?? '';
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.append(message.endsWith('\n') ? message : `${message}\n`);
      if (atEnd) pre.scrollTop = pre.scrollHeight;
      return true;
    }, this.controller.signal).then(() => {
      this.title.textContent = `Trial ${trialId} logs (ended)`;
    }).catch((error) => {
      if (error.name !== 'AbortError') pre.append(`\n(${error.message})\n`);
    });
  }

  dispose() {
    this.controller?.abort();
  }
}

export async function show(main, route, { session, signal }) {
  const id = encodeURIComponent(route.id);
  let data = await load(id, undefined, signal);
  const logScale = h('input', { type: 'checkbox', id: 'log-scale', onchange: () => redrawCharts() });
  const metric = data.experiment.cairn?.searcherMetric || '';
  async function loadCurves(kind, metric, minOffset, loadSignal) {
    data.series[kind] = await loadSeries(data.trials, kind, metric, minOffset, loadSignal);
  }
  const training = new CurveChart('training', 'Training', metric.replace(/^validation_/, ''), loadCurves);
  const validation = new CurveChart('validation', 'Validation', metric, loadCurves);
  // Both charts' chosen curves, before `data` is drawn.
  async function withCurves(minOffset, loadSignal) {
    await Promise.all([training, validation].map((chart) =>
      loadCurves(chart.kind, chart.choose(data.names[chart.kind]), minOffset, loadSignal)));
  }
  await withCurves(undefined, signal);
  const logs = new TrialLogs();
  const header = h('div');
  const trialsBox = h('div');
  const checkpointsBox = h('div');
  const registerBox = h('div', { id: 'register-box' });
  const moveBox = h('div', { id: 'move-box' });
  const configBox = h('pre', { class: 'config' });
  const status = h('span', { class: 'muted', id: 'experiment-status' });

  // Moves the experiment to a project of a workspace where the caller may put work.
  async function move() {
    const errors = h('div', { id: 'move-error', role: 'alert' });
    let choices = [];
    try {
      const open = await session.launchableWorkspaces();
      const lists = await Promise.all(open.map((w) => api.get(
        `/api/v1/workspaces/${w.id}/projects${api.query({ limit: 1000, archived: false })}`)));
      choices = open.flatMap((w, i) => (lists[i].projects || [])
        .map((p) => ({ id: p.id, label: `${w.name} / ${p.name}` })));
    } catch (error) {
      clear(moveBox, errorBox(error));
      return;
    }
    const project = h('select', { id: 'move-project' }, ...choices.map((c) => h('option', { value: String(c.id) }, c.label)));
    async function submit() {
      await api.post(`/api/v1/experiments/${id}/move`, { destinationProjectId: Number(project.value), experimentId: Number(data.experiment.id) });
      const chosen = choices.find((c) => String(c.id) === project.value);
      clear(moveBox, h('div', { class: 'card', id: 'move-done' }, `Moved to ${chosen?.label || project.value}.`));
    }
    clear(moveBox, h('form', { class: 'card form-grid', id: 'move-form', onsubmit: submitting(errors, submit), 'aria-label': 'Move the experiment' },
      field('move-project', 'Project', project),
      h('div', { class: 'toolbar wide' }, h('button', { type: 'submit', dataset: { action: 'move-to' } }, 'Move'),
        h('button', { type: 'button', onclick: () => clear(moveBox) }, 'Cancel')),
      errors));
  }

  // Registers checkpoint `uuid` as the next version of a model chosen in a small form.
  async function register(uuid) {
    const errors = h('div', { id: 'register-error', role: 'alert' });
    let models = [];
    try {
      models = (await api.get(`/api/v1/models${api.query({ limit: 1000, archived: false })}`)).models || [];
    } catch (error) {
      clear(registerBox, errorBox(error));
      return;
    }
    if (!models.length) {
      clear(registerBox, h('div', { class: 'card', id: 'register-no-model' },
        'No model to register it in: ', h('a', { href: '#/models' }, 'make one in the registry'), ' first.'));
      return;
    }
    const model = h('select', { id: 'register-model' }, ...models.map((m) => h('option', { value: m.name }, m.name)));
    const name = h('input', { id: 'register-name', type: 'text', maxlength: '256' });
    async function submit() {
      const { modelVersion } = await api.post(`/api/v1/models/${encodeURIComponent(model.value)}/versions`,
        { checkpointUuid: uuid, modelName: model.value, name: name.value.trim() });
      clear(registerBox, h('div', { class: 'card', id: 'register-done' }, `Checkpoint ${uuid} is version ${modelVersion.version} of `,
        h('a', { href: `#/models/${encodeURIComponent(model.value)}` }, model.value), '.'));
    }
    clear(registerBox, h('form', { class: 'card form-grid', id: 'register-form', onsubmit: submitting(errors, submit), 'aria-label': `Register checkpoint ${uuid}` },
      h('span', { class: 'wide' }, 'Register checkpoint ', h('code', {}, uuid)),
      field('register-model', 'Model', model),
      field('register-name', 'Version name', name),
      h('div', { class: 'toolbar wide' }, h('button', { type: 'submit', dataset: { action: 'register-version' } }, 'Register'),
        h('button', { type: 'button', onclick: () => clear(registerBox) }, 'Cancel')),
      errors));
  }

  function redrawCharts() {
    training.setData(data, logScale.checked);
    validation.setData(data, logScale.checked);
  }

  async function act(action) {
    if (action === 'kill' && !window.confirm(`Kill experiment ${data.experiment.id}?`)) return;
    try {
      await api.post(`/api/v1/experiments/${id}/${action}`);
      status.textContent = `${action} requested`;
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
    }
  }

  function render() {
    const e = data.experiment;
    const mine = session.canModify(e.username, e.workspaceId);
    const mayRegister = session.canLaunch(e.workspaceId);
    const live = !TERMINAL.has(e.state);
    const best = bestMetric({ ...e, trials: data.trials });
    clear(header,
      h('h1', {}, `Experiment ${e.id}: ${e.name} `, stateBadge(e.state)),
      h('div', { class: 'toolbar' },
        mine && e.state === 'STATE_ACTIVE' ? h('button', { type: 'button', dataset: { action: 'pause' }, onclick: () => act('pause') }, 'Pause') : null,
        mine && e.state === 'STATE_PAUSED' ? h('button', { type: 'button', dataset: { action: 'activate' }, onclick: () => act('activate') }, 'Activate') : null,
        mine && live ? h('button', { type: 'button', class: 'danger', dataset: { action: 'kill' }, onclick: () => act('kill') }, 'Kill') : null,
        mine ? h('button', { type: 'button', dataset: { action: 'move' }, onclick: move }, 'Move') : null,
        session.admin ? timelineLink('experiment-timeline', `experiment/${e.id}`) : null,
        status),
      h('dl', { class: 'kv card' },
        h('dt', {}, 'owner'), h('dd', {}, e.username),
        h('dt', {}, 'searcher'), h('dd', {}, `${e.searcherType} on ${e.cairn?.searcherMetric} (${e.cairn?.smallerIsBetter ? 'smaller' : 'larger'} is better)`),
        h('dt', {}, 'progress'), h('dd', {}, `${Math.round(100 * (Number(e.progress) || 0))}%`),
        h('dt', {}, 'best'), h('dd', {}, best === undefined ? '—' : formatNumber(best)),
        h('dt', {}, 'started'), h('dd', {}, formatTime(e.startTime)),
        h('dt', {}, 'pool'), h('dd', {}, e.resourcePool || ''),
        e.cairn?.stateReason ? [h('dt', {}, 'why'), h('dd', {}, e.cairn.stateReason)] : null));
    clear(trialsBox, table([
      { title: 'Trial', class: 'num', cell: (t) => t.id },
      { title: 'State', cell: (t) => stateBadge(t.state) },
      { title: 'Hyperparameters', cell: (t) => Object.entries(t.hparams || {}).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join('  ') },
      { title: 'Batches', class: 'num', cell: (t) => t.totalBatchesProcessed },
      { title: 'Best validation', class: 'num', cell: (t) => formatNumber(t.searcherMetricValue) },
      { title: 'Restarts', class: 'num', cell: (t) => t.restarts },
      { title: 'Checkpoints', class: 'num', cell: (t) => t.checkpointCount },
      { title: '', cell: (t) => h('button', { type: 'button', dataset: { logsFor: String(t.id) }, onclick: () => logs.follow(t.id) }, 'Logs') },
    ], data.trials, { empty: 'No trials yet.', rowProps: (t) => ({ dataset: { trialId: String(t.id) } }) }));
    clear(checkpointsBox, table([
      { title: 'UUID', cell: (c) => h('code', {}, c.uuid) },
      { title: 'Trial', class: 'num', cell: (c) => c.training?.trialId },
      { title: 'Batches', class: 'num', cell: (c) => c.totalBatches },
      { title: 'State', cell: (c) => stateBadge(c.state) },
      { title: 'Size', class: 'num', cell: (c) => formatBytes(c.cairn?.sizeBytes) },
      { title: 'Validation', cell: (c) => Object.entries(c.training?.validationMetrics?.avgMetrics || {}).map(([k, v]) => `${k}=${formatNumber(v)}`).join('  ') },
      { title: 'Reported', cell: (c) => formatTime(c.reportTime) },
      { title: '', cell: (c) => (mayRegister && c.state !== 'STATE_DELETED'
        ? h('button', { type: 'button', dataset: { action: 'register', checkpoint: c.uuid }, onclick: () => register(c.uuid) }, 'Register')
        : null) },
    ], data.checkpoints, { empty: 'No checkpoints.' }));
    configBox.textContent = e.originalConfig || JSON.stringify(e.config, null, 2);
    redrawCharts();
  }

  clear(main,
    header,
    moveBox,
    h('div', { class: 'toolbar' }, h('label', {}, logScale, ' log scale')),
    h('div', { class: 'charts' }, training.element, validation.element),
    h('h2', {}, 'Trials'), trialsBox,
    logs.element,
    h('h2', {}, 'Checkpoints'), registerBox, checkpointsBox,
    h('h2', {}, 'Configuration'), configBox);
  render();
  return {
    async refresh(minOffset, refreshSignal) {
      try {
        data = await load(id, minOffset, refreshSignal);
        await withCurves(minOffset, refreshSignal);
        render();
      } catch (error) {
        status.textContent = error.message;
      }
    },
    dispose() {
      training.dispose();
      validation.dispose();
      logs.dispose();
    },
  };
}
