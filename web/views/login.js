// The login page: Determined's POST /api/v1/auth/login, the same login as the CLI's.
import * as api from '../lib/api.js';
import { h, clear } from '../lib/dom.js';

export function showLogin(main, loggedIn) {
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password' });
  const message = h('p', { id: 'login-error', class: 'error-text' });
  const form = h('form', { class: 'card login', id: 'login-form' },
    h('h1', {}, 'Sign in to Cairn'),
    h('label', { for: 'username' }, 'User name'), username,
    h('label', { for: 'password' }, 'Password'), password,
    h('button', { type: 'submit', id: 'login-button' }, 'Sign in'),
    message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    try {
      await api.login(username.value.trim(), password.value);
      loggedIn();
    } catch (error) {
      message.textContent = error.message;
    }
  });
  clear(main, form);
  username.focus();
}
