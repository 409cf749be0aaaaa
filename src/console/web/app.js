// The console's shell: sign-in, the header (pages, location, who is signed in), the page router
// (#/<page>/<location id>) and the live stream of the shown location, which reconnects by itself.
import { ApiError, get, post, session, toast } from './api.js';
import { h, mount } from './dom.js';
import { queuePage } from './pages/queue.js';
import { lockersPage } from './pages/lockers.js';
import { radioPage } from './pages/radio.js';
import { devicesPage } from './pages/devices.js';
import { reportsPage } from './pages/reports.js';
import { webhooksPage } from './pages/webhooks.js';

const PAGES = [
  { id: 'queue', title: 'Call for Help', page: queuePage },
  { id: 'lockers', title: 'Lockers', page: lockersPage },
  { id: 'radio', title: 'Radio', page: radioPage },
  { id: 'devices', title: 'Devices', page: devicesPage },
  { id: 'reports', title: 'Reports', page: reportsPage },
  { id: 'webhooks', title: 'Webhooks', page: webhooksPage },
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
let me = null;
let current = null; // { page, locationId, instance }
let stream = null;
let liveNow = false;

session.onSignedOut = () => {
  if (me !== null) showSignIn('Your session has ended. Sign in again.');
};

async function boot() {
  let state;
  try {
    state = await get('/console/api/session');
  } catch {
    mount(main, h('p', { class: 'error' }, 'The service is not answering. Retrying…'));
    setTimeout(boot, 2000);
    return;
  }
  if (!state.signed_in) return showSignIn();
  me = state;
  session.csrf = state.csrf_token;
  renderHeader();
  route();
}

function showSignIn(notice) {
  me = null;
  session.csrf = null;
  closeStream();
  current?.instance?.stop?.();
  current = null;
  mount(nav);
  mount(who);
  const error = h('p', { class: 'error', role: 'alert', id: 'signin-error' }, notice ?? '');
  const token = h('input', { id: 'token', name: 'token', type: 'password', required: true, autocomplete: 'current-password', maxlength: 512 });
  const name = h('input', {
    id: 'name',
    name: 'name',
    type: 'text',
    required: true,
    autocomplete: 'name',
    maxlength: 80,
    value: localStorage.getItem('console-name') ?? '',
  });
  const form = h(
    'form',
    {
      class: 'signin card',
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        try {
          await post('/console/api/session', { token: token.value, name: name.value.trim() });
          localStorage.setItem('console-name', name.value.trim());
          token.value = '';
          await boot();
        } catch (err) {
          error.textContent =
            err instanceof ApiError && err.status === 401
              ? 'That token is not valid for the console.'
              : err instanceof ApiError && err.code === 'insufficient_scope'
                ? 'That token does not have the console scope.'
                : err.message;
          token.focus();
        }
      },
    },
    h('h1', {}, 'Sign in to the console'),
    h('p', { class: 'muted' }, 'Use an API token with the console scope. Your name is shown on the requests you claim.'),
    h('label', { for: 'name' }, 'Your name'),
    name,
    h('label', { for: 'token' }, 'API token'),
    token,
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  mount(main, form);
  (name.value === '' ? name : token).focus();
}

function parseHash() {
  const [, page, loc] = /^#\/([a-z]+)(?:\/(\d+))?/.exec(location.hash) ?? [];
  return { page: PAGES.find((p) => p.id === page) ?? PAGES[0], locationId: loc === undefined ? null : Number(loc) };
}

function renderHeader() {
  const { page, locationId } = parseHash();
  const loc = locationId ?? me.locations[0]?.id ?? null;
  mount(
    nav,
    PAGES.map((p) => h('a', { href: `#/${p.id}/${loc ?? ''}`, 'aria-current': p === page ? 'page' : null }, p.title)),
  );
  const select = h(
    'select',
    {
      id: 'location',
      'aria-label': 'Store',
      onchange: () => {
        location.hash = `#/${parseHash().page.id}/${select.value}`;
      },
    },
    me.locations.map((l) => h('option', { value: l.id, selected: l.id === loc }, l.name)),
  );
  mount(
    who,
    me.locations.length > 1 ? select : h('span', { class: 'store' }, me.locations[0]?.name ?? 'No store'),
    h('span', { id: 'live', class: liveNow ? 'live on' : 'live off', title: liveNow ? 'Live' : 'Connecting…' }, '●'),
    h('span', { class: 'muted name' }, me.staff_name),
    h('button', { type: 'button', class: 'secondary', id: 'signout', onclick: signOutNow }, 'Sign out'),
  );
}

async function signOutNow() {
  try {
    await post('/console/api/session/end');
  } catch {
    /* ended either way */
  }
  showSignIn('You are signed out.');
}

function route() {
  if (me === null) return;
  const { page, locationId } = parseHash();
  const loc = locationId ?? me.locations[0]?.id;
  if (loc === undefined) {
    mount(main, h('p', {}, 'This token sees no store.'));
    return;
  }
  if (locationId === null) {
    history.replaceState(null, '', `#/${page.id}/${loc}`);
  }
  renderHeader();
  if (current !== null && current.page === page && current.locationId === loc) return;
  current?.instance?.stop?.();
  const container = h('section', { class: `page page-${page.id}`, 'aria-labelledby': 'page-title' });
  mount(main, container);
  current = { page, locationId: loc, instance: page.page(container, { locationId: loc, me }) };
  document.title = `${page.title} · storeops console`;
  openStream(loc);
}

function closeStream() {
  stream?.close();
  stream = null;
  setLive(false);
}

function setLive(ok) {
  liveNow = ok;
  const dot = document.getElementById('live');
  if (dot) {
    dot.className = ok ? 'live on' : 'live off';
    dot.title = ok ? 'Live' : 'Reconnecting…';
  }
}

/** One stream per shown location; the browser reconnects on its own while the service restarts. */
function openStream(loc) {
  if (stream !== null && stream.loc === loc) return;
  closeStream();
  const source = new EventSource(`/console/api/locations/${loc}/stream`);
  stream = { loc, close: () => source.close() };
  source.addEventListener('ready', () => {
    setLive(true);
    current?.instance?.refresh?.({ kinds: null });
  });
  source.addEventListener('change', (e) => current?.instance?.refresh?.(JSON.parse(e.data)));
  source.addEventListener('error', () => {
    setLive(false);
    if (source.readyState !== EventSource.CLOSED) return;
    // Refused (signed out, or the service answered an error): check the session, then try again.
    setTimeout(async () => {
      if (stream?.loc !== loc) return;
      stream = null;
      try {
        const state = await get('/console/api/session', { automatic: true });
        if (!state.signed_in) return showSignIn('Your session has ended. Sign in again.');
      } catch {
        /* the service is still away */
      }
      if (current?.locationId === loc) openStream(loc);
    }, 2000);
  });
}

window.addEventListener('hashchange', route);
window.addEventListener('error', (e) => toast(e.message, 'error'));
boot();
