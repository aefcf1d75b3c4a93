// OpenPAI jobs: the list (#/jobs), newest first, with state, retries and tasks; a form that
// submits a job from its JSON (OpenPAI's job protocol), its refusals shown with the field they
// name; a job's page (#/jobs/USER/NAME) with its status and exit diagnostics and, per task role,
// each task's state, IP, ports, GPUs, exit code and logs; stop for those who may.
import * as api from '../lib/api.js';
import { h, clear, table, stateBadge, loadedView, submitting, formatTime } from '../lib/dom.js';

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'STOPPED']);
// OpenPAI jobs are the Uncategorized workspace's: its roles decide who may stop one.
const JOBS_WORKSPACE = 1;

function submitForm(session) {
  const text = h('textarea', { id: 'job-json', rows: '14', spellcheck: false,
    placeholder: '{"jobName": "hello", "image": "python:3", "taskRoles": [{"name": "main", "taskNumber": 1, "cpuNumber": 1, "memoryMB": 256, "gpuNumber": 0, "command": "echo hello"}]}' });
  const errors = h('div', { id: 'job-error', role: 'alert' });
  async function submit() {
    let job;
    try {
      job = JSON.parse(text.value);
    } catch (error) {
      throw new Error(`not JSON: ${error.message}`);
    }
    await api.post(`/api/v1/user/${encodeURIComponent(session.me.username)}/jobs`, job);
    location.hash = `#/jobs/${encodeURIComponent(session.me.username)}/${encodeURIComponent(job.jobName)}`;
  }
  return h('details', { id: 'job-submit', class: 'card' },
    h('summary', {}, 'Submit a job'),
    h('form', { id: 'job-form', onsubmit: submitting(errors, submit), 'aria-label': 'Submit an OpenPAI job' },
      h('label', { for: 'job-json' }, 'The job\'s JSON (OpenPAI job protocol)'),
      text,
      h('div', { class: 'toolbar' }, h('button', { type: 'submit', dataset: { action: 'submit-job' } }, 'Submit')),
      errors));
}

async function showJob(main, username, name, session, signal) {
  const path = `/api/v1/user/${encodeURIComponent(username)}/jobs/${encodeURIComponent(name)}`;
  const body = h('div', { id: 'job-body' });
  const status = h('span', { class: 'muted', id: 'job-status' });
  clear(main, h('p', {}, h('a', { href: '#/jobs' }, '‹ OpenPAI jobs')), body);
  async function stop() {
    if (!window.confirm(`Stop job ${name}?`)) return;
    try {
      await api.call('PUT', `${path}/executionType`, { value: 'STOP' });
      status.textContent = 'stop requested';
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
    }
  }
  async function load(minOffset, loadSignal) {
    const job = await api.get(`${path}${api.query({ minOffset })}`, loadSignal);
    const s = job.jobStatus || {};
    const mayStop = session.canModify(username, JOBS_WORKSPACE) && !TERMINAL.has(s.state) && s.executionType !== 'STOP';
    clear(body,
      h('h1', {}, `Job ${job.name} `, stateBadge(s.state)),
      h('div', { class: 'toolbar' },
        mayStop ? h('button', { type: 'button', class: 'danger', dataset: { action: 'stop' }, onclick: stop }, 'Stop') : null,
        status),
      h('dl', { class: 'kv card' },
        h('dt', {}, 'user'), h('dd', {}, s.username),
        h('dt', {}, 'virtual cluster'), h('dd', {}, s.virtualCluster),
        h('dt', {}, 'created'), h('dd', {}, formatTime(s.createdTime)),
        h('dt', {}, 'completed'), h('dd', {}, formatTime(s.completedTime)),
        h('dt', {}, 'attempt'), h('dd', {}, s.attempt ?? ''),
        h('dt', {}, 'retries'), h('dd', { id: 'job-retries' }, s.retries ?? 0),
        h('dt', {}, 'exit code'), h('dd', {}, s.appExitCode ?? ''),
        s.appExitDiagnostics ? [h('dt', {}, 'diagnostics'), h('dd', { class: 'wrap', id: 'job-diagnostics' }, s.appExitDiagnostics)] : null),
      Object.entries(job.taskRoles || {}).map(([role, { taskStatuses = [] }]) => [
        h('h2', {}, `Task role ${role}`),
        table([
          { title: 'Index', class: 'num', cell: (t) => t.taskIndex },
          { title: 'State', cell: (t) => stateBadge(t.taskState) },
          { title: 'IP', cell: (t) => t.containerIp || '' },
          { title: 'Ports', cell: (t) => Object.entries(t.containerPorts || {}).map(([label, ports]) => `${label}: ${ports}`).join('  ') },
          { title: 'GPUs', class: 'num', cell: (t) => t.containerGpus },
          { title: 'Exit', class: 'num', cell: (t) => t.containerExitCode ?? '' },
          { title: 'Agent', cell: (t) => t.agentId || '' },
          { title: 'Logs', cell: (t) => (t.containerId ? h('a', { href: `#/task/${encodeURIComponent(t.containerId)}` }, 'logs') : '') },
        ], taskStatuses, { empty: 'No tasks started yet.', rowProps: (t) => ({ dataset: { role, index: String(t.taskIndex), state: t.taskState } }) }),
      ]));
  }
  return loadedView(body, load, signal);
}

export async function show(main, route, { session, signal }) {
  if (route.id) {
    const [username, ...rest] = route.id.split('/');
    return showJob(main, decodeURIComponent(username), decodeURIComponent(rest.join('/')), session, signal);
  }
  const body = h('div', { id: 'jobs-body' });
  clear(main, h('h1', {}, 'OpenPAI jobs'), submitForm(session), body);
  async function load(minOffset, loadSignal) {
    const jobs = await api.get(`/api/v1/jobs${api.query({ minOffset })}`, loadSignal);
    clear(body, table([
      { title: 'Job', cell: (j) => h('a', { href: `#/jobs/${encodeURIComponent(j.username)}/${encodeURIComponent(j.name)}` }, j.name) },
      { title: 'User', cell: (j) => j.username },
      { title: 'State', cell: (j) => stateBadge(j.state) },
      { title: 'Retries', class: 'num', cell: (j) => j.retries },
      { title: 'Tasks', class: 'num', cell: (j) => j.totalTaskNumber },
      { title: 'GPUs', class: 'num', cell: (j) => j.totalGpuNumber },
      { title: 'Created', cell: (j) => formatTime(j.createdTime) },
      { title: 'Completed', cell: (j) => formatTime(j.completedTime) },
      { title: 'Exit', class: 'num', cell: (j) => j.appExitCode ?? '' },
    ], Array.isArray(jobs) ? jobs : [], {
      empty: 'No OpenPAI jobs yet: submit one here, or with OpenPAI\'s own clients.',
      rowProps: (j) => ({ dataset: { job: j.name, state: j.state } }),
    }));
  }
  return loadedView(body, load, signal);
}
