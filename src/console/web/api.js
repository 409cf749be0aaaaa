// Talking to the service: JSON reads and state-changing calls, which carry the session's CSRF
// token. A 401 means the session ended (signed out, idle, token revoked): the app shows sign-in.
import { h } from './dom.js';

export const session = { csrf: null, onSignedOut: () => {} };

export class ApiError extends Error {
  constructor(status, body, retryAfter = null) {
    super(body?.message ?? `the service answered ${status}`);
    this.status = status;
    this.code = body?.code ?? 'error';
    this.errors = body?.errors ?? null;
    /** Seconds, from Retry-After (a throttled sign-in), else null. */
    this.retryAfter = retryAfter;
  }
}

async function call(method, url, body, automatic = false, version = null) {
  const headers = { accept: 'application/json' };
  // Section 18's changes send back the version they were made from; a stale one is 412.
  if (version !== null && version !== undefined) headers['if-match'] = `"${version}"`;
  // A read the page makes by itself (a live change, a poll) keeps the session showing but not alive.
  if (automatic) headers['x-console-refresh'] = 'auto';
  if (method !== 'GET') {
    headers['x-csrf-token'] = session.csrf ?? '';
    if (body !== undefined) headers['content-type'] = 'application/json';
  }
  const res = await fetch(url, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (res.status === 401 && !url.endsWith('/console/api/session')) session.onSignedOut();
  if (!res.ok) throw new ApiError(res.status, json, /^\d+$/.test(res.headers.get('retry-after') ?? '') ? Number(res.headers.get('retry-after')) : null);
  return json;
}

export const get = (url, { automatic = false } = {}) => call('GET', url, undefined, automatic);
/** `version`: an action on an object sends the version it was read at (If-Match), as a change does. */
export const post = (url, body, version = null) => call('POST', url, body ?? {}, false, version);
/** A change of an object from `version` (sent as If-Match). */
export const patch = (url, body, version) => call('PATCH', url, body ?? {}, false, version);
export const del = (url, version) => call('DELETE', url, undefined, false, version);

/** A toast for a moment: what an action did, or why it was refused. */
export function toast(text, kind = 'ok') {
  const el = document.getElementById('toast');
  el.textContent = text;
  el.className = `toast show ${kind}`;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => {
    el.className = 'toast';
  }, 5000);
}

/**
 * A modal confirmation (native <dialog>: focus kept inside, Escape cancels). `field` asks for a
 * text (required when `field.required`); resolves with { value } or null when cancelled.
 */
export function confirmDialog({ title, text, confirm = 'Confirm', danger = false, field = null }) {
  return new Promise((resolve) => {
    // choices [{ value, text }]: a select; otherwise a text field, with `options` as suggestions.
    const input =
      field === null
        ? null
        : field.choices
          ? h(
              'select',
              { id: 'dialog-field', required: field.required ?? false },
              h('option', { value: '' }, 'Choose…'),
              field.choices.map((c) => h('option', { value: c.value }, c.text)),
            )
          : h('input', {
              id: 'dialog-field',
              type: 'text',
              maxlength: field.maxLength ?? 200,
              required: field.required ?? false,
              list: field.options ? 'dialog-options' : null,
              value: field.value ?? '',
              autocomplete: 'off',
            });
    const options = field?.options
      ? h(
          'datalist',
          { id: 'dialog-options' },
          field.options.map((o) => h('option', { value: o })),
        )
      : null;
    const form = h(
      'form',
      { method: 'dialog' },
      h('h2', {}, title),
      text ? h('p', {}, text) : null,
      input ? h('label', { for: 'dialog-field' }, field.label) : null,
      input,
      options,
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: () => {
              dialog.close();
            },
          },
          'Cancel',
        ),
        h('button', { type: 'submit', class: danger ? 'danger' : 'primary', value: 'ok' }, confirm),
      ),
    );
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': 'dialog-title' }, form);
    form.querySelector('h2').id = 'dialog-title';
    let answer = null;
    form.addEventListener('submit', (e) => {
      if (input && field.required && input.value.trim() === '') {
        e.preventDefault();
        input.focus();
        return;
      }
      answer = { value: input ? input.value.trim() : null };
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    (input ?? form.querySelector('button[type=submit]')).focus();
  });
}

/** Runs a confirmed action and tells how it went. */
export async function act(run, done) {
  try {
    const result = await run();
    if (done) toast(typeof done === 'function' ? done(result) : done);
    return result;
  } catch (err) {
    if (err.status !== 401) toast(err.message, 'error');
    return null;
  }
}
