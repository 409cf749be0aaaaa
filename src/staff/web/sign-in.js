// The staff app's ways in (contract section 17), as the console's: on an enrolled store device a
// badge or email and PIN first; single sign-on and password where they are allowed; a one-time
// password is changed before anything else. Every refusal is said in the person's words.
import { ApiError, post } from '/console/assets/api.js';
import { h, mount } from '/console/assets/dom.js';
import { t } from './words.js';

/** The signed-out page; `ways`: the session answer's sign_in; `done` runs after a sign-in. */
export function renderSignIn(main, ways, { notice = '', done, returnTo }) {
  const device = ways.store_device;
  const others = [ssoLink(ways.sso, returnTo), passwordForm(ways, done)].filter((x) => x !== null);
  mount(
    main,
    h(
      'section',
      { class: 'signin-page' },
      h('h1', {}, device ? t('sign_in_at', { store: device.location_name }) : t('sign_in_title')),
      device ? h('p', { class: 'muted' }, t('shared_device')) : null,
      h('p', { class: 'notice', role: 'status' }, notice),
      device ? [badgeForm(done), pinForm(done)] : others,
      device && others.length > 0 ? h('details', { class: 'other-ways' }, h('summary', {}, t('other_ways')), others) : null,
      !device && others.length === 0 ? h('p', { class: 'card' }, t('no_way')) : null,
    ),
  );
  document.title = `${t('sign_in_title')} · storeops`;
}

function ssoLink(sso, returnTo) {
  if (sso === null) return null;
  return h(
    'div',
    { class: 'card' },
    h('a', { id: 'sso', class: 'button primary', href: `/auth/oidc/start?${new URLSearchParams({ return_to: returnTo })}` }, t('sso')),
    h('p', { class: 'muted' }, t('sso_note', { host: sso.host })),
  );
}

const input = (id, props) => h('input', { id, name: id, required: true, autocomplete: 'off', ...props });

function passwordForm(ways, done) {
  if (ways.password === null) return null;
  const email = input('email', { type: 'email', autocomplete: 'username', maxlength: 320 });
  const secret = input('password', { type: 'password', autocomplete: 'current-password', maxlength: 256 });
  return form(
    'password-form',
    t('your_account'),
    [h('label', { for: 'email' }, t('email')), email, h('label', { for: 'password' }, t('password')), secret],
    t('sign_in'),
    {
      send: () => post('/api/session', { email: email.value.trim(), password: secret.value }),
      clear: secret,
      how: 'password',
      done,
    },
  );
}

function badgeForm(done) {
  const badge = input('badge', { type: 'text', class: 'secret', autocapitalize: 'off', spellcheck: 'false', maxlength: 256 });
  return form(
    'badge-form',
    t('badge'),
    [h('p', { class: 'muted' }, t('badge_note')), h('label', { for: 'badge' }, t('badge_code')), badge],
    t('sign_in_badge'),
    {
      send: () => post('/api/session', { badge_code: badge.value.trim() }),
      clear: badge,
      how: 'badge',
      done,
    },
  );
}

function pinForm(done) {
  const email = input('pin-email', { type: 'email', maxlength: 320 });
  const pin = input('pin', { type: 'password', inputmode: 'numeric', pattern: '[0-9]{6,12}', maxlength: 12 });
  return form('pin-form', t('email_pin'), [h('label', { for: 'pin-email' }, t('email')), email, h('label', { for: 'pin' }, t('pin')), pin], t('sign_in_pin'), {
    send: () => post('/api/session', { email: email.value.trim(), pin: pin.value }),
    clear: pin,
    how: 'pin',
    done,
  });
}

function form(id, title, fields, submit, { send, clear, how, done }) {
  const error = h('p', { class: 'error', role: 'alert', id: `${id}-error` });
  const button = h('button', { type: 'submit', class: 'primary' }, submit);
  return h(
    'form',
    {
      id,
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        button.disabled = true;
        try {
          await send();
        } catch (err) {
          button.disabled = false;
          clear.value = '';
          clear.focus();
          error.textContent = refusal(err, how);
          return;
        }
        await done();
      },
    },
    h('h2', {}, title),
    fields,
    error,
    button,
  );
}

const minutes = (seconds) => Math.max(1, Math.ceil((seconds ?? 900) / 60));

/** A refused sign-in in words a person understands. */
export function refusal(err, how) {
  if (!(err instanceof ApiError)) return t('no_service');
  const device = how === 'badge' || how === 'pin';
  if (err.status === 401) return device ? t('wrong_device') : t('wrong_password');
  if (err.status === 429) return how === 'pin' ? t('too_many_pin', { n: minutes(err.retryAfter) }) : t('too_many', { n: minutes(err.retryAfter) });
  if (err.code === 'csrf_failed') return t('stale_page');
  if (err.status === 403) return device ? t('not_device') : t('password_off');
  return t('try_again');
}

/** After a one-time password: the person chooses their own. */
export function renderPasswordChange(main, { done }) {
  const error = h('p', { class: 'error', role: 'alert' });
  const current = input('current-password', { type: 'password', autocomplete: 'current-password', maxlength: 256 });
  const next = input('new-password', { type: 'password', autocomplete: 'new-password', minlength: 12, maxlength: 256 });
  mount(
    main,
    h(
      'form',
      {
        class: 'card',
        onsubmit: async (e) => {
          e.preventDefault();
          try {
            await post('/api/session/password', { current_password: current.value, new_password: next.value });
          } catch (err) {
            error.textContent = err instanceof ApiError && err.status < 500 ? err.message : t('try_again');
            return;
          }
          await done();
        },
      },
      h('h1', {}, t('change_password')),
      h('p', { class: 'muted' }, t('change_password_note')),
      h('label', { for: 'current-password' }, t('one_time')),
      current,
      h('label', { for: 'new-password' }, t('new_password')),
      next,
      error,
      h('button', { type: 'submit', class: 'primary' }, t('save')),
    ),
  );
}
