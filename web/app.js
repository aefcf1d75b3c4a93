// Cairn's web UI: log in through the REST login, then one view at a time by the URL's hash
// (#/queue?pool=gpu). Views refresh themselves when the event stream says something changed,
// reading with ?minOffset= so that what they show includes that event.
import * as api from './lib/api.js';
import { clear, errorBox, since } from './lib/dom.js';
import * as cluster from './views/cluster.js';
import * as queue from './views/queue.js';
import * as experiments from './views/experiments.js';
import * as experiment from './views/experiment.js';
import * as tasks from './views/tasks.js';
import * as task from './views/task.js';
import * as history from './views/history.js';
import * as timeline from './views/timeline.js';
import * as models from './views/models.js';
import * as jobs from './views/jobs.js';
import * as workspaces from './views/workspaces.js';
import * as admin from './views/admin.js';
import { showLogin } from './views/login.js';
import { Session } from './lib/session.js';

const VIEWS = { cluster, queue, experiments, experiment, tasks, task, history, timeline, models, jobs, workspaces, admin };
const main = document.getElementById('view');
let current = null;  // {name, view, controller}
let generation = 0;  // which navigation a finishing view belongs to

// Chart.js is Debian's libjs-chart.js, served by the master; without it the charts cannot be
// drawn and the page says why instead of failing on its first chart.
async function checkChartJs() {
  if (window.Chart) return;
  const banner = document.getElementById('banner');
  let reason = 'Chart.js did not load';
  try {
    const response = await fetch('/ui/vendor/chart.js');
    if (!response.ok) reason = (await response.json()).message || reason;
  } catch (ignored) {
    // The reason above stands.
  }
  banner.hidden = false;
  banner.className = 'banner error';
  banner.dataset.missing = 'chart.js';
  banner.textContent = `Learning curves are unavailable: ${reason}.`;
}

function parseRoute() {
  const hash = location.hash.replace(/^#\/?/, '') || 'cluster';
  const [path, search = ''] = hash.split('?');
  const [name, ...rest] = path.split('/');
  return { name, id: rest.join('/'), params: new URLSearchParams(search) };
}

async function navigate(session) {
  const route = parseRoute();
  const name = VIEWS[route.name] ? route.name : 'cluster';
  const navName = { experiment: 'experiments', task: 'tasks' }[name] || name;
  for (const link of document.querySelectorAll('[data-nav]')) {
    link.classList.toggle('active', link.dataset.nav === navName);
  }
  if (current) {
    current.controller.abort();
    current.view?.dispose?.();
  }
  const mine = ++generation;
  const controller = new AbortController();
  current = { name, view: null, controller };
  const started = performance.now();
  delete main.dataset.ready;
  main.dataset.view = name;
  clear(main);
  try {
    const view = await VIEWS[name].show(main, route, { session, signal: controller.signal });
    if (mine !== generation) return;
    current.view = view;
  } catch (error) {
    if (mine !== generation || error.name === 'AbortError') return;
    clear(main, errorBox(error));
  }
  // The browser test reads how long the view took from here (navigation to its data shown).
  main.dataset.ready = String(mine);
  window.cairnViewTimings = window.cairnViewTimings || [];
  window.cairnViewTimings.push({
    view: name, ms: performance.now() - started, fromNavigationMs: performance.now() });
}

// Follows the event stream from the log's end and lets the current view refresh. Changes come
// in bursts (a submission is several events), so a view refreshes at most every 300 ms.
// `master`: GET /api/v1/master as the page read it at sign-in, where the stream first starts.
async function followEvents(session, master) {
  const live = document.getElementById('live');
  // Ended explicitly when the page goes: a stream the browser is left to tear down can keep
  // holding one of its few connections to the master for a while.
  const controller = new AbortController();
  window.addEventListener('pagehide', () => controller.abort());
  let timer = null;
  let newest = 0;
  let known = master;
  for (;;) {
    try {
      const from = Number((known ?? await api.get('/api/v1/master')).cairn?.appliedOffset ?? 0);
      known = null;  // a reconnect asks again
      live.classList.add('on');
      await api.stream(`/api/v1/events?follow=true&from=${from}`, (event) => {
        newest = Math.max(newest, Number(event.offset ?? 0));
        if (timer === null) {
          timer = setTimeout(() => {
            timer = null;
            current?.view?.refresh?.(newest, current.controller.signal);
          }, 300);
        }
        return true;
      }, controller.signal);
    } catch (error) {
      if (error.status === 401 || controller.signal.aborted) return;
    }
    live.classList.remove('on');
    // The master went away or restarted: try again after a pause, as any reconnecting client.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    if (!api.hasSession()) return;
  }
}

async function start() {
  checkChartJs();
  // Log streams too are ended, not left for the browser to tear down (see followEvents).
  window.addEventListener('pagehide', () => {
    current?.controller.abort();
    current?.view?.dispose?.();
  });
  window.addEventListener('cairn:session-ended', () => location.reload());
  if (!api.hasSession()) {
    showLogin(main, () => location.reload());
    main.dataset.view = 'login';
    main.dataset.ready = 'login';
    return;
  }
  let session;
  let master;
  try {
    let me;
    let summary;
    [me, summary, master] = await Promise.all([
      api.get('/api/v1/me'), api.get('/api/v1/permissions/summary'), api.get('/api/v1/master')]);
    session = new Session(me.user || me, summary, master);
  } catch (error) {
    if (error.status === 401) return;  // the session-ended listener reloads into the login
    clear(main, errorBox(error));
    return;
  }
  document.getElementById('nav').hidden = false;
  // Administration and the audit trail are for admins: the API refuses everyone else, and the
  // pages are not offered.
  for (const name of ['admin', 'timeline']) {
    document.querySelector(`[data-nav="${name}"]`).hidden = !session.admin;
  }
  document.getElementById('whoami').textContent =
    `${session.me.username}${session.admin ? ' (admin)' : ''}`;
  const logout = document.getElementById('logout');
  logout.hidden = false;
  logout.addEventListener('click', async () => {
    await api.logout().catch(() => {});
    location.hash = '';
    location.reload();
  });
  window.addEventListener('hashchange', () => navigate(session));
  // Waiting times count on between refreshes.
  setInterval(() => {
    for (const cell of document.querySelectorAll('[data-since]')) cell.textContent = since(cell.dataset.since);
  }, 5000);
  navigate(session);
  followEvents(session, master);
}

start();
