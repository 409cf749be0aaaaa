// The console's shell: sign-in (sign-in.js), the header (pages, store, who is signed in and their
// role there, sign out or, on a store device, switch user), the page router (#/<page>/<location id>)
// and the live stream of the shown location, which reconnects by itself.
import { get, post, session, toast } from './api.js';
import { focusIn, h, mount, restoreFocus } from './dom.js';
import { openLiveStream } from './live-stream.js';
import { renderPasswordChange, renderSignIn } from './sign-in.js';
import { queuePage } from './pages/queue.js';
import { lockersPage } from './pages/lockers.js';
import { radioPage } from './pages/radio.js';
import { devicesPage } from './pages/devices.js';
import { reportsPage } from './pages/reports.js';
import { webhooksPage } from './pages/webhooks.js';
import { auditPage } from './pages/audit.js';
import { setupPage } from './pages/setup.js';

const PAGES = [
  { id: 'queue', title: 'Call for Help', page: queuePage },
  { id: 'lockers', title: 'Lockers', page: lockersPage },
  { id: 'radio', title: 'Radio', page: radioPage },
  { id: 'devices', title: 'Devices', page: devicesPage },
  { id: 'reports', title: 'Reports', page: reportsPage, admins: true },
  { id: 'webhooks', title: 'Webhooks', page: webhooksPage, admins: true },
  { id: 'setup', title: 'Setup', page: setupPage, admins: true },
  { id: 'audit', title: 'Audit', page: auditPage, admins: true },
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

async function boot(notice) {
  let state;
  try {
    state = await get('/console/api/session');
  } catch {
    mount(main, h('p', { class: 'error', role: 'alert' }, 'The service is not answering. Retrying…'));
    setTimeout(() => boot(notice), 2000);
    return;
  }
  if (!state.signed_in) return renderSignIn(main, state.sign_in, { notice, done: () => boot() });
  session.csrf = state.csrf_token;
  if (state.must_change_password) return renderPasswordChange(main, { done: () => boot() });
  me = state;
  renderHeader();
  route();
}

/** Back to the sign-in page (signed out, or the session ended), saying why. */
function showSignIn(notice) {
  me = null;
  session.csrf = null;
  closeStream();
  current?.instance?.stop?.();
  current = null;
  mount(nav);
  mount(who);
  return boot(notice);
}

/** The pages the person's role at the store allows: reports, webhooks, setup and the audit log are its admins'. */
function pagesAt(locationId) {
  const role = me.locations.find((l) => l.id === locationId)?.role;
  return PAGES.filter((p) => !p.admins || (role !== undefined && role !== 'staff'));
}

const ROLE_NAMES = { org_admin: 'organization admin', location_admin: 'store admin', staff: 'staff' };

/** The person's role at the shown store, as the header shows it after their name. */
function roleLabel(locationId) {
  const role = me.locations.find((l) => l.id === locationId)?.role;
  return role ? ` · ${ROLE_NAMES[role]}` : '';
}

function parseHash() {
  const [, page, loc, section] = /^#\/([a-z]+)(?:\/(\d+)(?:\/([a-z_-]+))?)?/.exec(location.hash) ?? [];
  return { page: PAGES.find((p) => p.id === page) ?? PAGES[0], locationId: loc === undefined ? null : Number(loc), section: section ?? null };
}

/** The store shown when the URL names none: a store device's own, else the first. */
function homeLocation() {
  const device = me.store_device?.location_id;
  return me.locations.find((l) => l.id === device)?.id ?? me.locations[0]?.id;
}

function renderHeader() {
  const { page, locationId } = parseHash();
  const loc = locationId ?? homeLocation() ?? null;
  mount(
    nav,
    pagesAt(loc).map((p) => h('a', { href: `#/${p.id}/${loc ?? ''}`, 'aria-current': p === page ? 'page' : null }, p.title)),
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
  // Rebuilt on every page or store change: the keyboard's focus (on the store select) stays put.
  const was = focusIn(who);
  mount(
    who,
    me.locations.length > 1 ? select : h('span', { class: 'store' }, me.locations[0]?.name ?? 'No store'),
    h('span', { id: 'live', class: liveNow ? 'live on' : 'live off', title: liveNow ? 'Live' : 'Connecting…' }, '●'),
    h('span', { class: 'muted name', id: 'signed-in-as' }, `${me.person.name}${roleLabel(loc)}`),
    // On a shared store device, signing out is handing the device to the next person.
    me.store_device
      ? h('button', { type: 'button', class: 'primary switch-user', id: 'switch-user', onclick: signOutNow }, 'Switch user')
      : h('button', { type: 'button', class: 'secondary', id: 'signout', onclick: signOutNow }, 'Sign out'),
  );
  restoreFocus(who, was);
}

async function signOutNow() {
  const onDevice = (me?.store_device ?? null) !== null;
  try {
    await post('/api/session/end');
  } catch {
    /* ended either way */
  }
  showSignIn(onDevice ? 'You are signed out. The next person can sign in.' : 'You are signed out.');
}

let askedFor = null; // the store last asked about by reading the session again

function route() {
  if (me === null) return;
  const { page, locationId, section } = parseHash();
  // A store this console does not know yet (made a moment ago, here or on another instance): the
  // session is read again first, once, before the address is judged.
  if (locationId !== null && !me.locations.some((l) => l.id === locationId) && askedFor !== locationId) {
    askedFor = locationId;
    refreshSession(false).then(route);
    return;
  }
  const loc = locationId ?? homeLocation();
  if (loc === undefined) {
    mount(main, h('p', {}, 'You have no role at any store. Ask an administrator.'));
    return;
  }
  if (locationId === null || !pagesAt(loc).includes(page)) {
    history.replaceState(null, '', `#/${pagesAt(loc).includes(page) ? page.id : PAGES[0].id}/${loc}`);
    return route();
  }
  renderHeader();
  // The same page of the same store: only its section (a Setup tab) may have changed.
  if (current !== null && current.page === page && current.locationId === loc) return current.instance?.show?.(section);
  current?.instance?.stop?.();
  const container = h('section', { class: `page page-${page.id}`, 'aria-labelledby': 'page-title' });
  mount(main, container);
  current = { page, locationId: loc, instance: page.page(container, { locationId: loc, me, section, refreshSession }) };
  document.title = `${page.title} · storeops console`;
  openStream(loc);
}

/**
 * Reads the session again (the stores a person sees change when a store is made, or a role is
 * granted or taken away): the header then offers what the person may see now. Setup calls it after
 * a change of stores; the console also does when the page comes back into view and every minute.
 */
async function refreshSession(reroute = true) {
  if (me === null) return;
  let state;
  try {
    state = await get('/console/api/session', { automatic: true });
  } catch {
    return;
  }
  if (!state.signed_in) return showSignIn('Your session has ended. Sign in again.');
  const before = JSON.stringify(me.locations);
  Object.assign(me, state);
  session.csrf = state.csrf_token;
  if (reroute && JSON.stringify(me.locations) !== before) {
    renderHeader();
    route();
  }
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') refreshSession();
});
setInterval(() => refreshSession(), 60_000);

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
    dot.title = ok ? 'Live' : 'Reconnecting… (the page reads its data every 10 s meanwhile)';
  }
}

/** Whether the session holds (a service that does not answer may still have it); ended: sign-in. */
async function stillSignedIn() {
  try {
    const state = await get('/console/api/session', { automatic: true });
    if (!state.signed_in) {
      showSignIn('Your session has ended. Sign in again.');
      return false;
    }
  } catch {
    /* the service is away: the stream is tried again */
  }
  return true;
}

/**
 * One stream per shown location; the browser reconnects on its own while the service restarts,
 * and while it is not live (refused, or away) the page polls (live-stream.js).
 */
function openStream(loc) {
  if (stream !== null && stream.loc === loc) return;
  closeStream();
  const refreshAll = () => current?.instance?.refresh?.({ kinds: null });
  const live = openLiveStream(loc, {
    onLive: () => {
      setLive(true);
      refreshAll();
    },
    onChange: (notice) => current?.instance?.refresh?.(notice),
    onDown: () => setLive(false),
    poll: refreshAll,
    stillSignedIn,
  });
  stream = { loc, close: () => live.close() };
}

window.addEventListener('hashchange', route);
window.addEventListener('error', (e) => toast(e.message, 'error'));
boot();
