// Model registry: models (#/models) with their descriptions, labels and versions, 50 a page, and a
// form that makes one; a model's page (#/models/NAME) lists its versions, each linked to its
// checkpoint (downloaded through the master), trial and experiment, with its labels and notes.
// Versions are registered from an experiment's checkpoints (views/experiment.js).
import * as api from '../lib/api.js';
import {
  h, clear, table, formatTime, loadedView, errorBox, pager, field, submitting, saveBlob,
} from '../lib/dom.js';

const PAGE = 50;

// Who may make a model where: the workspaces where the caller may launch work.
async function createForm(session, signal) {
  const open = await session.launchableWorkspaces(signal);
  if (!open.length) return null;
  const name = h('input', { id: 'model-name', type: 'text', required: true, maxlength: '256' });
  const description = h('input', { id: 'model-description', type: 'text', maxlength: '1024' });
  const labels = h('input', { id: 'model-labels', type: 'text', placeholder: 'vision, prod' });
  const workspace = h('select', { id: 'model-workspace' },
    ...open.map((w) => h('option', { value: String(w.id) }, w.name)));
  const errors = h('div', { id: 'model-error', role: 'alert' });
  async function create() {
    const { model } = await api.post('/api/v1/models', {
      name: name.value.trim(), description: description.value.trim(), workspaceId: Number(workspace.value),
      labels: labels.value.split(',').map((l) => l.trim()).filter(Boolean) });
    location.hash = `#/models/${encodeURIComponent(model.name)}`;
  }
  return h('details', { id: 'model-create', class: 'card' },
    h('summary', {}, 'New model'),
    h('form', { class: 'form-grid', id: 'model-form', onsubmit: submitting(errors, create), 'aria-label': 'New model' },
      field('model-name', 'Name', name),
      field('model-description', 'Description', description),
      field('model-labels', 'Labels', labels),
      field('model-workspace', 'Workspace', workspace),
      h('div', { class: 'toolbar wide' }, h('button', { type: 'submit', dataset: { action: 'create-model' } }, 'Create')),
      errors));
}

// A checkpoint's files as a .tar.gz, through the master.
async function download(uuid, status) {
  status.textContent = 'downloading…';
  try {
    saveBlob(await api.blob(`/checkpoints/${encodeURIComponent(uuid)}`, 'application/gzip'), `${uuid}.tar.gz`);
    status.textContent = '';
  } catch (error) {
    status.textContent = `download failed: ${error.message}`;
  }
}

async function showModel(main, name, signal) {
  const body = h('div', { id: 'model-body' });
  const status = h('span', { class: 'muted', id: 'model-status' });
  clear(main, h('p', {}, h('a', { href: '#/models' }, '‹ Models')), body);
  async function load(minOffset, loadSignal) {
    const { model, modelVersions = [] } = await api.get(
      `/api/v1/models/${encodeURIComponent(name)}/versions${api.query({ limit: 1000, orderBy: 'ORDER_BY_DESC', minOffset })}`, loadSignal);
    clear(body,
      h('h1', {}, `Model ${model.name}`, model.archived ? h('span', { class: 'state ARCHIVED' }, 'ARCHIVED') : null),
      h('dl', { class: 'kv card' },
        h('dt', {}, 'description'), h('dd', {}, model.description || ''),
        h('dt', {}, 'labels'), h('dd', {}, (model.labels || []).join(', ')),
        h('dt', {}, 'metadata'), h('dd', {}, h('code', {}, JSON.stringify(model.metadata || {}))),
        h('dt', {}, 'owner'), h('dd', {}, model.username || ''),
        h('dt', {}, 'updated'), h('dd', {}, formatTime(model.lastUpdatedTime)),
        model.notes ? [h('dt', {}, 'notes'), h('dd', { class: 'wrap' }, model.notes)] : null),
      h('h2', {}, `Versions (${modelVersions.length})`),
      table([
        { title: 'Version', class: 'num', cell: (v) => v.version },
        { title: 'Name', cell: (v) => v.name },
        { title: 'Checkpoint', cell: (v) => [h('code', {}, v.checkpoint?.uuid || ''), ' ',
          v.checkpoint?.uuid ? h('button', { type: 'button', dataset: { action: 'download' }, onclick: () => download(v.checkpoint.uuid, status) }, 'Download') : null] },
        { title: 'Trial', class: 'num', cell: (v) => v.checkpoint?.training?.trialId ?? '' },
        { title: 'Experiment', cell: (v) => {
          const experiment = v.checkpoint?.training?.experimentId;
          return experiment ? h('a', { href: `#/experiment/${experiment}` }, `experiment ${experiment}`) : '';
        } },
        { title: 'Labels', cell: (v) => (v.labels || []).join(', ') },
        { title: 'Comment', class: 'wrap', cell: (v) => v.comment || v.notes || '' },
        { title: 'Registered', cell: (v) => `${formatTime(v.creationTime)} by ${v.username || ''}` },
      ], modelVersions, {
        empty: 'No versions yet: register a checkpoint from its experiment\'s page.',
        rowProps: (v) => ({ dataset: { version: String(v.version), checkpoint: v.checkpoint?.uuid || '' } }),
      }),
      status);
  }
  return loadedView(body, load, signal);
}

export async function show(main, route, { session, signal }) {
  if (route.id) return showModel(main, route.id, signal);
  const offset = Number(route.params.get('offset')) || 0;
  const create = h('div', { id: 'model-create-area' });
  const body = h('div', { id: 'models-body' });
  clear(main, h('h1', {}, 'Model registry'), create, body);
  createForm(session, signal).then((form) => clear(create, form))
    .catch((error) => { if (error.name !== 'AbortError') clear(create, errorBox(error)); })
    .finally(() => { create.dataset.ready = 'true'; });
  async function load(minOffset, loadSignal) {
    const answer = await api.get(`/api/v1/models${api.query({
      offset, limit: PAGE, sortBy: 'SORT_BY_LAST_UPDATED_TIME', orderBy: 'ORDER_BY_DESC', minOffset })}`, loadSignal);
    const models = answer.models || [];
    clear(body,
      pager(answer.pagination, PAGE, (at) => { location.hash = `#/models?offset=${at}`; }),
      table([
        { title: 'Model', cell: (m) => h('a', { href: `#/models/${encodeURIComponent(m.name)}` }, m.name) },
        { title: 'Description', class: 'wrap', cell: (m) => m.description },
        { title: 'Labels', cell: (m) => (m.labels || []).join(', ') },
        { title: 'Versions', class: 'num', cell: (m) => m.numVersions ?? '' },
        { title: 'Owner', cell: (m) => m.username || '' },
        { title: 'Updated', cell: (m) => formatTime(m.lastUpdatedTime) },
      ], models, {
        empty: 'No models yet: make one here or with det model create.',
        rowProps: (m) => ({ dataset: { model: m.name } }),
      }));
  }
  return loadedView(body, load, signal);
}
