// The console's ways in (contract section 17): single sign-on when it is configured, email and
// password where PASSWORD_SIGN_IN allows it, and on an enrolled store device a badge (a scanner
// types its code and presses Enter) or email and PIN; then, after a one-time password, choosing
// one's own. A refusal is said in words a person understands, in the form's role=alert line.
import { ApiError, post } from './api.js';
import { h, mount } from './dom.js';

/**
 * The signed-out page. `ways` is GET /console/api/session's `sign_in`: { sso, password, store_device };
 * `notice` says why it shows (signed out, session ended); `done` runs once a sign-in succeeded.
 */
export function renderSignIn(main, ways, { notice = '', done }) {
  const device = ways.store_device;
  const sso = ssoLink(ways.sso);
  const password = passwordForm(ways, done);
  const others = [sso, password].filter((x) => x !== null);
  mount(
    main,
    h(
      'section',
      { class: 'signin-page', 'aria-labelledby': 'signin-title' },
      h('h1', { id: 'signin-title' }, device ? `Sign in at ${device.location_name}` : 'Sign in to the console'),
      device ? h('p', { class: 'muted' }, 'A shared device of this store: sign in for your shift, and use "Switch user" when you leave.') : null,
      h('p', { class: 'notice', role: 'status', id: 'signin-notice' }, notice),
      device ? [badgeForm(done), pinForm(done)] : others,
      device && others.length > 0 ? h('details', { class: 'other-ways' }, h('summary', {}, 'Other ways to sign in'), others) : null,
      !device && others.length === 0 ? h('p', { class: 'card signin' }, 'No way to sign in is set up here. Ask an administrator.') : null,
    ),
  );
  document.title = 'Sign in · storeops console';
  (main.querySelector('#badge') ?? main.querySelector('#email') ?? main.querySelector('#sso'))?.focus();
}

function ssoLink(sso) {
  if (sso === null) return null;
  const returnTo = `/console${location.hash}`;
  return h(
    'div',
    { class: 'card signin sso' },
    h('a', { id: 'sso', class: 'button primary', href: `/auth/oidc/start?${new URLSearchParams({ return_to: returnTo })}` }, `Sign in with ${sso.name}`),
    h('p', { class: 'muted' }, `You sign in at ${sso.host}, then come back here.`),
  );
}

function passwordForm(ways, done) {
  if (ways.password === null) return null;
  const adminsOnly = ways.password.admins_only;
  const email = h('input', { id: 'email', name: 'email', type: 'email', required: true, autocomplete: 'username', maxlength: 320 });
  const secret = h('input', { id: 'password', name: 'password', type: 'password', required: true, autocomplete: 'current-password', maxlength: 256 });
  return signInForm({
    id: 'password-form',
    title: 'Your account',
    note: adminsOnly ? `For administrators only${ways.sso ? ', when single sign-on is not available' : ''}.` : null,
    fields: [h('label', { for: 'email' }, 'Email'), email, h('label', { for: 'password' }, 'Password'), secret],
    submit: 'Sign in',
    send: () => post('/api/session', { email: email.value.trim(), password: secret.value }),
    refused: (err) => {
      secret.value = '';
      secret.focus();
      return refusal(err, adminsOnly ? 'admin password' : 'password');
    },
    done,
  });
}

function badgeForm(done) {
  // Shown as dots (a badge signs in by itself), never remembered by the browser of a shared device.
  const badge = h('input', {
    id: 'badge',
    name: 'badge',
    type: 'text',
    class: 'secret',
    required: true,
    autocomplete: 'off',
    autocapitalize: 'off',
    spellcheck: 'false',
    maxlength: 256,
  });
  return signInForm({
    id: 'badge-form',
    title: 'Badge',
    note: 'Scan your badge, or type its code and press Enter.',
    fields: [h('label', { for: 'badge' }, 'Badge code'), badge],
    submit: 'Sign in with badge',
    send: () => post('/api/session', { badge_code: badge.value.trim() }),
    refused: (err) => {
      badge.value = '';
      badge.focus();
      return refusal(err, 'badge');
    },
    done,
  });
}

function pinForm(done) {
  const email = h('input', { id: 'pin-email', name: 'email', type: 'email', required: true, autocomplete: 'off', maxlength: 320 });
  const pin = h('input', {
    id: 'pin',
    name: 'pin',
    type: 'password',
    inputmode: 'numeric',
    pattern: '[0-9]{6,12}',
    title: '6 to 12 digits',
    required: true,
    autocomplete: 'off',
    maxlength: 12,
  });
  return signInForm({
    id: 'pin-form',
    title: 'Email and PIN',
    note: null,
    fields: [h('label', { for: 'pin-email' }, 'Email'), email, h('label', { for: 'pin' }, 'PIN'), pin],
    submit: 'Sign in with PIN',
    send: () => post('/api/session', { email: email.value.trim(), pin: pin.value }),
    refused: (err) => {
      pin.value = '';
      pin.focus();
      return refusal(err, 'pin');
    },
    done,
  });
}

/** A sign-in form: its heading names it, its fields point at its error line, a refusal is said there. */
function signInForm({ id, title, note, fields, submit, send, refused, done }) {
  const error = h('p', { class: 'error', role: 'alert', id: `${id}-error` });
  for (const field of fields) if (field.tagName !== 'LABEL') field.setAttribute('aria-describedby', error.id);
  // Disabled while it is sent: a scanner's second Enter (implicit submission) then does nothing.
  const button = h('button', { type: 'submit', class: 'primary' }, submit);
  return h(
    'form',
    {
      id,
      class: 'card signin',
      'aria-labelledby': `${id}-title`,
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        button.disabled = true;
        try {
          await send();
        } catch (err) {
          button.disabled = false;
          error.textContent = refused(err);
          return;
        }
        await done();
      },
    },
    h('h2', { id: `${id}-title` }, title),
    note ? h('p', { class: 'muted' }, note) : null,
    fields,
    error,
    button,
  );
}

const minutes = (seconds) => {
  const n = Math.max(1, Math.ceil((seconds ?? 15 * 60) / 60));
  return n === 1 ? '1 minute' : `${n} minutes`;
};

/** A refused sign-in in words a person understands. `how`: password, admin password, badge or pin. */
export function refusal(err, how) {
  if (!(err instanceof ApiError)) return 'The service is not answering. Try again in a moment.';
  const device = how === 'badge' || how === 'pin';
  if (err.status === 401) return device ? 'That badge or PIN is not right for this store.' : 'That email and password do not match an account here.';
  if (err.status === 429) {
    if (how === 'pin') return `Too many wrong PINs on this device. Try again in ${minutes(err.retryAfter)}.`;
    if (how === 'badge') return `Too many failed sign-ins on this device. Try again in ${minutes(err.retryAfter)}.`;
    return `Too many failed attempts for this account. Try again in ${minutes(err.retryAfter)}.`;
  }
  if (err.code === 'csrf_failed') return 'This page is out of date. Reload it, then sign in again.';
  if (err.status === 403 && device) return "Badge and PIN sign-in work only on this store's shared devices.";
  if (err.status === 403) {
    return how === 'admin password'
      ? 'Password sign-in here is for administrators only. Use single sign-on.'
      : 'Password sign-in is turned off here. Use single sign-on.';
  }
  if (err.status >= 500) return 'The service could not sign you in just now. Try again in a moment.';
  return err.message;
}

/** A one-time password signed in: the person chooses their own before anything else. */
export function renderPasswordChange(main, { done }) {
  const error = h('p', { class: 'error', role: 'alert', id: 'password-error' });
  const current = h('input', { id: 'current-password', type: 'password', required: true, autocomplete: 'current-password', maxlength: 256 });
  const next = h('input', { id: 'new-password', type: 'password', required: true, autocomplete: 'new-password', minlength: 12, maxlength: 256 });
  for (const field of [current, next]) field.setAttribute('aria-describedby', error.id);
  const form = h(
    'form',
    {
      class: 'signin card',
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        try {
          await post('/api/session/password', { current_password: current.value, new_password: next.value });
        } catch (err) {
          error.textContent = passwordProblem(err);
          return;
        }
        await done();
      },
    },
    h('h1', {}, 'Choose a new password'),
    h('p', { class: 'muted' }, 'You signed in with a one-time password. Choose your own: at least 12 characters.'),
    h('label', { for: 'current-password' }, 'One-time password'),
    current,
    h('label', { for: 'new-password' }, 'New password'),
    next,
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Save and continue'),
  );
  mount(main, form);
  document.title = 'Choose a new password · storeops console';
  current.focus();
}

function passwordProblem(err) {
  if (!(err instanceof ApiError)) return 'The service is not answering. Try again in a moment.';
  if (err.status === 429) return `Too many failed attempts for this account. Try again in ${minutes(err.retryAfter)}.`;
  const problems = Object.entries(err.errors ?? {});
  if (problems.length === 0) return err.message;
  const named = { current_password: 'The one-time password', new_password: 'The new password' };
  return problems.map(([field, said]) => `${named[field] ?? field.replace(/_/g, ' ')} ${said.join(', ')}.`).join(' ');
}
