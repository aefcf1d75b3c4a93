// One task (a command, notebook, shell or TensorBoard): its state, where it runs and why (the
// scheduler's explanation while it is live), and its logs, followed live until it ends; a ready
// notebook or TensorBoard opens through the master's proxy; kill for those who may.
import * as api from '../lib/api.js';
import { h, clear, stateBadge, formatTime, timelineLink } from '../lib/dom.js';
import { KINDS } from './tasks.js';

// The kinds whose route answers the task's owner and workspace, by task type.
const KIND_OF_TYPE = Object.fromEntries(Object.values(KINDS).map((kind) => [kind.taskType, kind]));

export async function show(main, route, { session, signal }) {
  const id = encodeURIComponent(route.id);
  const summary = h('div');
  const status = h('span', { class: 'muted', id: 'task-status' });
  const logs = h('pre', { class: 'logs', id: 'task-logs' });
  const logsTitle = h('strong', {}, 'Logs (live)');
  const controller = new AbortController();
  signal.addEventListener('abort', () => controller.abort());

  async function load(minOffset, loadSignal) {
    const { task } = await api.get(`/api/v1/tasks/${id}${api.query({ explain: true, minOffset })}`, loadSignal);
    // The owner and workspace are on the task's own kind's record (a trial's on its experiment).
    const kind = KIND_OF_TYPE[task.taskType];
    const record = kind
      ? (await api.get(`/api/v1/${kind.key}/${id}${api.query({ minOffset })}`, loadSignal)
        .catch(() => null))?.[kind.singular]
      : null;
    const owner = record?.username;
    const mine = owner !== undefined && session.canModify(owner, record.workspaceId);
    const live = task.cairn?.state !== 'TASK_STATE_TERMINATED';
    clear(summary,
      h('h1', {}, `Task ${task.taskId} `, stateBadge(String(task.cairn?.state || '').replace('TASK_STATE_', ''))),
      h('div', { class: 'toolbar' },
        live && record?.serviceAddress && record.cairn?.ready
          ? h('button', { type: 'button', dataset: { action: 'open' }, onclick: () => open(record.serviceAddress) }, 'Open')
          : null,
        mine && live ? h('button', { type: 'button', class: 'danger', dataset: { action: 'kill' }, onclick: kill }, 'Kill') : null,
        session.admin ? timelineLink('task-timeline', `task/${task.taskId}`) : null,
        status),
      h('dl', { class: 'kv card' },
        h('dt', {}, 'type'), h('dd', {}, String(task.taskType).replace('TASK_TYPE_', '').toLowerCase()),
        h('dt', {}, 'owner'), h('dd', {}, owner ?? ''),
        h('dt', {}, 'submitted'), h('dd', {}, formatTime(task.startTime)),
        h('dt', {}, 'pool'), h('dd', {}, task.cairn?.resourcePool ?? ''),
        h('dt', {}, 'agent'), h('dd', {}, task.cairn?.agentId || '—'),
        h('dt', {}, 'why'), h('dd', { id: 'task-why' }, task.explanation || task.latestReason || ''),
        task.taskType === 'TASK_TYPE_SHELL'
          ? [h('dt', {}, 'connect'), h('dd', {}, h('code', { id: 'task-ssh' }, `cairn shell ssh ${task.taskId}`))]
          : null,
        task.cairn?.exitReason ? [h('dt', {}, 'exit'), h('dd', {}, task.cairn.exitReason)] : null));
  }

  // A ready notebook or TensorBoard, through the master's proxy in a new tab: the proxy takes the
  // session as a cookie scoped to the task's path (the tab's token is not sent by navigation).
  // The tab is opened at the click, so that no popup blocker takes it for an unasked one.
  async function open(address) {
    const tab = window.open('', '_blank');
    if (!tab) {
      status.textContent = 'the browser blocked the new tab';
      return;
    }
    try {
      await api.post(`/api/v1/tasks/${id}/proxy-cookie`);
      tab.location = address;
    } catch (error) {
      tab.close();
      status.textContent = `cannot open: ${error.message}`;
    }
  }

  async function kill() {
    if (!window.confirm(`Kill task ${route.id}?`)) return;
    try {
      await api.post(`/api/v1/tasks/${id}/kill`);
      status.textContent = 'kill requested';
    } catch (error) {
      status.textContent = `refused: ${error.message}`;
    }
  }

  await load(undefined, signal);
  clear(main, summary, h('div', { class: 'card' }, h('div', { class: 'toolbar' }, logsTitle), logs));
  api.stream(`/api/v1/tasks/${id}/logs?follow=true`, (line) => {
    const message = line.result?.message ?? line.error?.message ?? '';
    logs.append(message.endsWith('\n') ? message : `${message}\n`);
    return true;
  }, controller.signal).then(() => { logsTitle.textContent = 'Logs (ended)'; })
    .catch((error) => { if (error.name !== 'AbortError') logs.append(`(${error.message})\n`); });
  return {
    refresh: (minOffset, refreshSignal) => load(minOffset, refreshSignal).catch(() => {}),
    dispose: () => controller.abort(),
  };
}
