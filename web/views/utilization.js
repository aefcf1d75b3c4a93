// The cluster's slots used (of its total) and its queue (tasks waiting for slots) over a window,
// drawn from the log's history (GET /api/v1/history/utilization): the last 15 minutes to the
// last week, or any window typed in. Each point is the counts at the end of its step, so that
// the chart agrees with the log at that moment; the table under it lists the same points for a
// screen reader, with each step's peak. Admins jump from a point to the history view there.
import * as api from '../lib/api.js';
import { lineChart } from '../lib/charts.js';
import { h, clear, formatTime, errorBox, table } from '../lib/dom.js';

const MINUTE = 60 * 1000;
const WINDOWS = [
  { label: 'last 15 minutes', ms: 15 * MINUTE },
  { label: 'last hour', ms: 60 * MINUTE },
  { label: 'last 6 hours', ms: 6 * 60 * MINUTE },
  { label: 'last 24 hours', ms: 24 * 60 * MINUTE },
  { label: 'last 7 days', ms: 7 * 24 * 60 * MINUTE },
];
const STEPS = 60;
const LIVE_REFRESH_MS = 5000;
// The counts at each step's end, and each step's peak filled faintly under them: work shorter
// than a step still shows.
const SERIES = [
  { key: 'slotsUsed', label: 'slots used', colour: '#2f6fdf' },
  { key: 'slotsTotal', label: 'slots in the cluster', colour: '#9aa5b1', dash: [4, 4] },
  { key: 'tasksWaiting', label: 'tasks waiting (queue)', colour: '#d9822b' },
  { key: 'peakSlotsUsed', label: 'peak slots used in the step', colour: 'rgba(47, 111, 223, 0.18)', fill: 'origin' },
  { key: 'peakTasksWaiting', label: 'peak tasks waiting in the step', colour: 'rgba(217, 130, 43, 0.18)', fill: 'origin' },
];

// "2026-12-03T10:00" (a datetime-local input's value, local time) from epoch milliseconds.
function localInput(ms) {
  const date = new Date(ms - new Date(ms).getTimezoneOffset() * MINUTE);
  return date.toISOString().slice(0, 16);
}

export class UtilizationChart {
  constructor({ admin }) {
    this.admin = admin;
    this.windowSelect = h('select', { id: 'utilization-window', onchange: () => this.chooseWindow() },
      WINDOWS.map((w, i) => h('option', { value: String(w.ms), selected: i === 1 }, w.label)),
      h('option', { value: 'custom' }, 'from … to …'));
    this.from = h('input', { type: 'datetime-local', id: 'utilization-from' });
    this.to = h('input', { type: 'datetime-local', id: 'utilization-to' });
    this.custom = h('form', { class: 'inline', id: 'utilization-custom', hidden: true,
      onsubmit: (event) => { event.preventDefault(); this.load(); } },
    h('label', { for: 'utilization-from' }, 'From '), this.from,
    h('label', { for: 'utilization-to' }, ' to '), this.to,
    h('button', { type: 'submit' }, 'Show'));
    this.canvas = h('canvas', { id: 'utilization-chart', role: 'img',
      'aria-label': 'Slots used, slots in the cluster and tasks waiting over the chosen window; the table below lists the same points' });
    this.note = h('div', { class: 'muted', id: 'utilization-note', 'aria-live': 'polite' });
    this.points = h('details', { class: 'card', id: 'utilization-points' }, h('summary', {}, 'The points as a table'));
    this.element = h('section', { class: 'card', id: 'utilization', 'aria-labelledby': 'utilization-title' },
      h('div', { class: 'toolbar' },
        h('h2', { id: 'utilization-title' }, 'Slots and queue over time'),
        h('label', { for: 'utilization-window', class: 'visually-hidden' }, 'Window'),
        this.windowSelect, this.custom),
      h('div', { class: 'chart-box' }, this.canvas),
      this.note, this.points);
    this.chart = null;
    this.controller = null;
    this.loadedAt = 0;
  }

  chooseWindow() {
    const custom = this.windowSelect.value === 'custom';
    this.custom.hidden = !custom;
    if (custom && !this.from.value) {
      const now = Date.now();
      this.from.value = localInput(now - 60 * MINUTE);
      this.to.value = localInput(now);
    }
    if (!custom) this.load();
  }

  // The window as query parameters: a relative one ends now (the master's clock decides "now").
  windowQuery() {
    if (this.windowSelect.value !== 'custom') {
      const end = Date.now();
      return { from: new Date(end - Number(this.windowSelect.value)).toISOString(),
        to: new Date(end).toISOString(), steps: STEPS };
    }
    const from = new Date(this.from.value);
    const to = new Date(this.to.value);
    if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
      throw new Error('Give both ends of the window.');
    }
    return { from: from.toISOString(), to: to.toISOString(), steps: STEPS };
  }

  // Reloads the points; a live refresh only follows a relative window (a typed one is history),
  // and at most every LIVE_REFRESH_MS: the view refreshes on every burst of events, and a chart
  // of an hour in 60 steps does not change visibly in less.
  async load({ live = false, minOffset } = {}) {
    if (live && (this.windowSelect.value === 'custom' || Date.now() - this.loadedAt < LIVE_REFRESH_MS)) return;
    this.loadedAt = Date.now();
    this.controller?.abort();
    this.controller = new AbortController();
    let data;
    try {
      data = await api.get(`/api/v1/history/utilization${api.query({ ...this.windowQuery(), minOffset })}`,
        this.controller.signal);
    } catch (error) {
      if (error.name === 'AbortError') return;
      clear(this.note, errorBox(error));
      return;
    }
    this.draw(data);
  }

  draw(data) {
    const points = data.points || [];
    this.element.dataset.from = data.from;
    this.element.dataset.to = data.to;
    this.element.dataset.points = String(points.length);
    const peakUsed = Math.max(0, ...points.map((p) => p.peakSlotsUsed));
    const peakWaiting = Math.max(0, ...points.map((p) => p.peakTasksWaiting));
    clear(this.note, `${formatTime(data.from)} to ${formatTime(data.to)}, a point every ` +
      `${Math.round(data.stepSeconds)} s · at most ${peakUsed} slots used and ${peakWaiting} tasks waiting` +
      (this.admin ? ' · choose a point to open the history there' : ''));
    clear(this.points, h('summary', {}, 'The points as a table'), table([
      { title: 'Time', cell: (p) => formatTime(p.time) },
      { title: 'Slots used', class: 'num', cell: (p) => p.slotsUsed },
      { title: 'Slots in the cluster', class: 'num', cell: (p) => p.slotsTotal },
      { title: 'Tasks waiting', class: 'num', cell: (p) => p.tasksWaiting },
      { title: 'Peak used / waiting in the step', class: 'num', cell: (p) => `${p.peakSlotsUsed} / ${p.peakTasksWaiting}` },
    ], points, {
      empty: 'No points.',
      rowProps: (p) => ({ dataset: { time: p.time, slotsUsed: p.slotsUsed, slotsTotal: p.slotsTotal, tasksWaiting: p.tasksWaiting, offset: p.offset } }),
    }));
    if (!window.Chart) {
      this.note.append(' · Chart.js is missing: the table below has the points');
      return;
    }
    const datasets = SERIES.map((series) => ({
      label: series.label,
      data: points.map((p) => ({ x: Date.parse(p.time), y: p[series.key], offset: p.offset })),
      borderColor: series.colour,
      backgroundColor: series.colour,
      borderDash: series.dash,
      fill: series.fill || false,
      stepped: 'before',
      pointRadius: 0,
      borderWidth: 1.5,
    }));
    const xRange = { min: Date.parse(data.from), max: Date.parse(data.to) };
    if (this.chart) {
      this.chart.data.datasets = datasets;
      Object.assign(this.chart.options.scales.x, xRange);
      this.chart.update('none');
      return;
    }
    this.chart = lineChart(this.canvas, datasets, {
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { type: 'linear', ...xRange, ticks: { maxTicksLimit: 6, callback: (ms) => formatTime(new Date(ms).toISOString()).slice(5, 16) } },
        y: { type: 'linear', beginAtZero: true, ticks: { precision: 0 } },
      },
      plugins: {
        tooltip: { callbacks: { title: (items) => formatTime(new Date(items[0].parsed.x).toISOString()) } },
      },
      onClick: (event, elements) => {
        if (!this.admin || !elements.length) return;
        const point = this.chart.data.datasets[elements[0].datasetIndex].data[elements[0].index];
        location.hash = `#/history?at=${point.offset}`;
      },
    });
  }

  dispose() {
    this.controller?.abort();
    this.chart?.destroy();
  }
}
