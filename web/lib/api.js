// The REST API as the UI calls it: same origin, the session's bearer token (kept in
// sessionStorage, so it ends with the tab), grpc-gateway's error shape turned into ApiError.
const TOKEN_KEY = 'cairn.token';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function hasSession() {
  return sessionStorage.getItem(TOKEN_KEY) !== null;
}

function headers(extra = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

// Turns a failed answer into an ApiError with the master's own message. A 401 means the session
// is over: the app hears it and shows the login page.
async function failure(response) {
  let message = response.statusText;
  try {
    const body = await response.json();
    if (body && body.message) message = body.message;
  } catch (ignored) {
    // Not JSON: the status text says enough.
  }
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    window.dispatchEvent(new CustomEvent('cairn:session-ended', { detail: message }));
  }
  return new ApiError(response.status, message);
}

export async function login(username, password) {
  const response = await fetch('/api/v1/auth/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password, isHashed: false }),
  });
  if (!response.ok) throw await failure(response);
  const body = await response.json();
  sessionStorage.setItem(TOKEN_KEY, body.token);
  return body;
}

export async function logout() {
  try {
    await call('POST', '/api/v1/auth/logout');
  } finally {
    sessionStorage.removeItem(TOKEN_KEY);
  }
}

export async function call(method, path, body, signal) {
  const init = { method, headers: headers(), signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  const text = await response.text();
  return text ? JSON.parse(text) : {};
}

export const get = (path, signal) => call('GET', path, undefined, signal);

// A file the master serves (a checkpoint's tar.gz), as a Blob.
export async function blob(path, accept, signal) {
  const response = await fetch(path, { headers: headers({ Accept: accept }), signal });
  if (!response.ok) throw await failure(response);
  return response.blob();
}
export const post = (path, body = {}) => call('POST', path, body);

// Reads a newline-delimited JSON stream (the event stream, task and trial logs), handing each
// object to `onObject`, until the master ends it, `signal` aborts it, or `onObject` returns
// false. Blank lines are the stream's keep-alives.
export async function stream(path, onObject, signal) {
  const response = await fetch(path, { headers: headers(), signal });
  if (!response.ok) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line && onObject(JSON.parse(line)) === false) return;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

// "a=1&b=x" from an object, leaving out empty values.
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
