// Small helpers every view builds its page with: elements, tables, pagers, and how times,
// durations, states and numbers read.

// h('a', {href: '#/x', class: 'y'}, 'text', child, ...): an element. Props starting with "on"
// are listeners; `dataset` sets data-* attributes, `style` an object of CSS properties;
// null/false children are skipped.
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else if (key === 'class') element.className = value;
    // Through the CSSOM: the page's policy refuses style attributes.
    else if (key === 'style') Object.assign(element.style, value);
    else if (key in element && typeof value !== 'string') element[key] = value;
    else element.setAttribute(key, value === true ? '' : value);
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

// "STATE_QUEUED" / "QUEUED" -> a badge reading QUEUED.
export function stateBadge(state) {
  const name = String(state || 'UNKNOWN').replace(/^STATE_/, '');
  return h('span', { class: `state ${name}` }, name);
}

// An RFC 3339 text or epoch milliseconds (OpenPAI's), in local time; '' for none.
export function formatTime(rfc3339) {
  if (!rfc3339) return '';
  const date = new Date(typeof rfc3339 === 'string' && /^\d+$/.test(rfc3339) ? Number(rfc3339) : rfc3339);
  if (Number.isNaN(date.getTime()) || date.getTime() <= 0) return '';
  // 2026-11-26 11:44:17, local time: sortable, and short enough for a table cell.
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

// 3725 s -> "1h 2m"; 42 s -> "42s".
export function formatDuration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function since(rfc3339) {
  const start = Date.parse(rfc3339);
  return Number.isNaN(start) ? '' : formatDuration((Date.now() - start) / 1000);
}

export function formatNumber(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value ?? '';
  if (value !== 0 && (Math.abs(value) < 1e-3 || Math.abs(value) >= 1e6)) return value.toExponential(3);
  return Number(value.toPrecision(5)).toString();
}

export function formatBytes(bytes) {
  const n = Number(bytes) || 0;
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

// A table: columns are {title, cell(row) -> node|text, class?}; `rowProps(row)` adds to each tr.
export function table(columns, rows, { empty = 'Nothing here.', rowProps } = {}) {
  const head = h('tr', {}, columns.map((c) => h('th', { class: c.class }, c.title)));
  const body = rows.length
    ? rows.map((row) => h('tr', rowProps ? rowProps(row) : {},
        columns.map((c) => h('td', { class: c.class }, c.cell(row)))))
    : [h('tr', { class: 'empty' }, h('td', { colspan: columns.length }, empty))];
  // In a box of its own that scrolls sideways: a wide table on a narrow screen does not widen
  // the page.
  return h('div', { class: 'table-scroll' }, h('table', {}, h('thead', {}, head), h('tbody', {}, body)));
}

// "1-50 of 10000" with previous and next; `go(offset)` shows another page.
export function pager(pagination, limit, go) {
  const total = Number(pagination?.total ?? 0);
  const start = Number(pagination?.startIndex ?? 0);
  const end = Number(pagination?.endIndex ?? 0);
  return h('div', { class: 'pager' },
    h('button', { type: 'button', disabled: start <= 0, dataset: { page: 'previous' },
      onclick: () => go(Math.max(0, start - limit)) }, '‹ Previous'),
    h('span', { class: 'muted', dataset: { total: String(total) } },
      total ? `${start + 1}–${end} of ${total}` : '0 of 0'),
    h('button', { type: 'button', disabled: end >= total, dataset: { page: 'next' },
      onclick: () => go(end) }, 'Next ›'));
}

// The reasons a decision recorded, wherever in an event they are ("reason", "placementReason"...),
// as "key: text" lines.
export function reasonsIn(value, found = []) {
  if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (typeof inner === 'string' && /reason$/i.test(key) && inner) found.push(`${key}: ${inner}`);
      else reasonsIn(inner, found);
    }
  }
  return found;
}

// A labelled control of a form laid out as .form-grid (the label in one column, the control in
// the other).
export function field(id, label, control) {
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

// A form's submit listener: the default prevented, `errors` cleared, `act(event)` run with the
// form's submit button disabled, and its failure shown in `errors`. Resolves to whether it was
// done.
export function submitting(errors, act) {
  return async (event) => {
    event.preventDefault();
    clear(errors);
    const button = event.target.querySelector('button[type=submit]');
    if (button) button.disabled = true;
    try {
      await act(event);
      return true;
    } catch (error) {
      clear(errors, errorBox(error));
      return false;
    } finally {
      if (button) button.disabled = false;
    }
  };
}

// What a page for admins shows anyone else (the API refuses them too).
export function forbidden(id, what, error) {
  return h('div', { class: 'card', id, dataset: { status: '403' } },
    `${what} for admins only. `, h('span', { class: 'muted' }, `(${error.message})`));
}

// A link to the timeline of `entity` ("task/ID", "experiment/7").
export function timelineLink(id, entity) {
  return h('a', { id, href: `#/timeline?${new URLSearchParams({ entity })}` }, 'Timeline');
}

// Hands `blob` to the browser as a file download named `filename`.
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

export function errorBox(error) {
  return h('div', { class: 'card error-text', dataset: { status: String(error.status ?? '') } },
    error.message || String(error));
}

// Shows what `load(minOffset, signal)` draws into `body`, or the error that stopped it, and
// returns the view's refresh: the same load again, at least as new as minOffset.
export async function loadedView(body, load, signal) {
  try {
    await load(undefined, signal);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    clear(body, errorBox(error));
  }
  return { refresh: (minOffset, refreshSignal) => load(minOffset, refreshSignal).catch(() => {}) };
}
