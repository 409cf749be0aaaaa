// The staff app's shell (contract section 19): sign-in, the header (the person's name always
// shown, the store, "keep screen on", switch user or sign out), the tabs (waiting, my requests,
// lockers), one request at /staff/r/{message_id}, the store's live stream (the console's), and
// offline: said at the top, every action disabled, nothing queued; back online, the stream resumes.
import { ApiError, get, post, session, toast } from '/console/assets/api.js';
import { h, mount } from '/console/assets/dom.js';
import { openLiveStream } from '/console/assets/live-stream.js';
import { browserLanguage, setLanguage, t } from './words.js';
import { renderPasswordChange, renderSignIn } from './sign-in.js';
import { mineOf, mineView, queueView, requestView, tick, waitingOf } from './queue.js';
import { lockersView } from './lockers.js';
import { keepAwake, ring, wakeLockAvailable } from './alert.js';

const main = document.getElementById('main');
const top = document.getElementById('top');
const tabs = document.getElementById('tabs');
const banner = document.getElementById('offline');
const STORE_KEY = 'storeops-staff-store';

const app = {
  me: null,
  locationId: null,
  data: { requests: [], outcomes: [] },
  lockers: null,
  offset: 0,
  offline: !navigator.onLine,
  view: 'queue',
  requestId: null,
  requestStatus: null,
  seen: null,
  /** Whether the last sign-in was on an enrolled store device. */
  handheld: false,
  refresh: () => load(),
  go: (e, view) => {
    e?.preventDefault();
    app.view = view;
    app.requestId = null;
    history.pushState(null, '', view === 'queue' ? '/staff/' : `/staff/#${view}`);
    void load();
  },
};
let stream = null;

session.onSignedOut = () => {
  if (app.me !== null) void signedOut(t('session_ended'));
};

function readLocation() {
  const m = /^\/staff\/r\/([^/?#]+)/.exec(location.pathname);
  app.requestId = m ? decodeURIComponent(m[1]) : null;
  app.view = app.requestId ? 'request' : ['mine', 'lockers'].includes(location.hash.slice(1)) ? location.hash.slice(1) : 'queue';
}

async function boot(notice = '') {
  readLocation();
  let state;
  try {
    state = await get('/staff/api/session');
  } catch (err) {
    // No answer at all: offline, whatever navigator.onLine says (an app opened from its cache).
    if (!(err instanceof ApiError)) app.offline = true;
    setLanguage(browserLanguage());
    showBanner();
    mount(main, h('p', { class: 'error', role: 'alert' }, app.offline ? t('offline') : t('no_service')));
    setTimeout(() => boot(notice), 3000);
    return;
  }
  if (app.offline && navigator.onLine) {
    app.offline = false;
    showBanner();
  }
  if (!state.signed_in) {
    // A shift on a handheld that is no longer enrolled ended with the device: say that, not "signed out".
    if (app.handheld && state.sign_in.store_device === null && notice !== '') notice = t('device_revoked');
    setLanguage(state.language ?? browserLanguage());
    showBanner();
    mount(top);
    mount(tabs);
    return renderSignIn(main, state.sign_in, { notice, done: () => boot(), returnTo: location.pathname });
  }
  session.csrf = state.csrf_token;
  app.me = state;
  app.handheld = state.store_device !== null;
  setLanguage(state.language ?? state.locations[0]?.language ?? 'en');
  if (state.must_change_password) return renderPasswordChange(main, { done: () => boot() });
  const kept = Number(localStorage.getItem(STORE_KEY));
  const device = state.store_device?.location_id;
  app.locationId = [device, kept, state.locations[0]?.id].find((id) => state.locations.some((l) => l.id === id)) ?? null;
  if (app.requestId !== null) await findRequest();
  if (app.locationId === null) {
    renderTop();
    return mount(main, h('p', { class: 'empty' }, t('no_store')));
  }
  chooseStore(app.locationId);
}

/** /staff/r/{id}: the request's store becomes the shown one. */
async function findRequest() {
  try {
    app.requestStatus = await get(`/staff/api/requests/${encodeURIComponent(app.requestId)}`);
    app.locationId = app.requestStatus.location_id;
  } catch (err) {
    app.requestStatus = null;
    if (err instanceof ApiError && err.status === 401) throw err;
  }
}

function chooseStore(id) {
  app.locationId = id;
  localStorage.setItem(STORE_KEY, String(id));
  const store = app.me.locations.find((l) => l.id === id);
  setLanguage(app.me.language ?? store?.language ?? 'en');
  app.seen = null;
  renderTop();
  openStream();
  void load();
}

async function signedOut(notice) {
  app.me = null;
  session.csrf = null;
  stream?.close();
  stream = null;
  await keepAwake(false);
  await boot(notice);
}

function renderTop() {
  const me = app.me;
  const device = me.store_device !== null;
  const stores = me.locations;
  mount(
    top,
    h('span', { class: 'who', id: 'who' }, me.person.name),
    stores.length > 1
      ? h(
          'select',
          { id: 'store', 'aria-label': t('store'), onchange: (e) => chooseStore(Number(e.target.value)) },
          stores.map((l) => h('option', { value: l.id, selected: l.id === app.locationId }, l.name)),
        )
      : h('span', { class: 'store' }, stores[0]?.name ?? ''),
    wakeLockAvailable()
      ? h(
          'label',
          { class: 'switch' },
          h('input', {
            type: 'checkbox',
            id: 'keep-awake',
            onchange: async (e) => {
              e.target.checked = await keepAwake(e.target.checked);
            },
          }),
          t('keep_awake'),
        )
      : null,
    h(
      'button',
      {
        type: 'button',
        id: 'sign-out',
        class: 'secondary',
        onclick: async () => {
          try {
            await post('/api/session/end');
          } catch {
            // an ended session is signed out already
          }
          await signedOut('');
        },
      },
      device ? t('switch_user') : t('sign_out'),
    ),
  );
  renderTabs();
}

function renderTabs() {
  if (app.me === null) return;
  const tab = (view, text) =>
    h(
      'a',
      {
        href: view === 'queue' ? '/staff/' : `/staff/#${view}`,
        class: 'tab',
        'aria-current': app.view === view ? 'page' : null,
        onclick: (e) => app.go(e, view),
      },
      text,
    );
  mount(
    tabs,
    tab('queue', `${t('queue')} (${waitingOf(app.data).length})`),
    tab('mine', `${t('mine')} (${mineOf(app.data, app).length})`),
    tab('lockers', t('lockers')),
  );
}

let loading = null;
let again = false;

/** Reads the shown store's queue (and lockers on their tab) and draws the view; one read at a time. */
async function load() {
  if (loading !== null) {
    again = true;
    return loading;
  }
  loading = (async () => {
    do {
      again = false;
      if (app.me === null || app.locationId === null) return;
      try {
        const started = Date.now();
        const data = await get(`/console/api/locations/${app.locationId}/queue`, { automatic: true });
        app.offset = Date.parse(data.now) - (started + Date.now()) / 2;
        announceNew(data);
        app.data = data;
        if (app.view === 'lockers') app.lockers = await get(`/console/api/locations/${app.locationId}/lockers`, { automatic: true });
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return;
      }
      draw();
    } while (again);
  })();
  try {
    await loading;
  } finally {
    loading = null;
  }
}

/** A request that was not there at the last read rings (not at the first read of a store). */
function announceNew(data) {
  const waiting = waitingOf(data);
  if (app.seen !== null) {
    const fresh = waiting.filter((r) => !app.seen.has(r.message_id));
    if (fresh.length > 0 && ring()) toast(t('new_request', { what: fresh[0].option_text }));
  }
  app.seen = new Set(data.requests.map((r) => r.message_id));
}

function draw() {
  if (app.me === null) return;
  renderTabs();
  const view =
    app.view === 'mine'
      ? mineView(app)
      : app.view === 'lockers'
        ? app.lockers === null
          ? h('p', {}, t('loading'))
          : lockersView(app, app.lockers)
        : app.view === 'request'
          ? requestView(app, app.requestId, app.requestStatus)
          : queueView(app);
  mount(main, h('div', { class: `view view-${app.view}` }, view));
  showBanner();
  document.title = `${t('app')} · ${app.me.person.name}`;
}

/**
 * The console's live stream of the store (live-stream.js): any change of its requests or lockers
 * reads them again; while it is not live the app polls, so the queue keeps moving.
 */
function openStream() {
  stream?.close();
  stream = null;
  if (app.offline || app.locationId === null) return;
  stream = openLiveStream(app.locationId, {
    onLive: () => {
      document.body.classList.add('live');
      void load();
    },
    onChange: ({ kinds }) => {
      if (kinds.includes('callforhelp') || (app.view === 'lockers' && kinds.includes('locker'))) void load();
    },
    onDown: () => document.body.classList.remove('live'),
    poll: () => !app.offline && void load(),
    // Closed for good: the session may have ended (signed out elsewhere, device revoked).
    stillSignedIn: async () => {
      try {
        const state = await get('/staff/api/session');
        if (!state.signed_in) {
          void signedOut(t('session_ended'));
          return false;
        }
      } catch {
        // not answering: tried again
      }
      return true;
    },
  });
}

/** The offline line at the top, in the app's language, shown while offline. */
function showBanner() {
  banner.textContent = t('offline');
  banner.hidden = !app.offline;
}

function setOffline(offline) {
  app.offline = offline;
  showBanner();
  document.body.classList.toggle('offline', offline);
  for (const b of document.querySelectorAll('main button, dialog button[type=submit]')) if (offline) b.disabled = true;
  if (offline) {
    stream?.close();
    stream = null;
  } else if (app.me !== null) {
    openStream();
    void load();
  } else void boot();
  draw();
}

addEventListener('offline', () => setOffline(true));
addEventListener('online', () => setOffline(false));
addEventListener('popstate', () => {
  readLocation();
  void load();
});
setInterval(() => tick(main, app.offset), 1000);
showBanner();

if ('serviceWorker' in navigator) {
  // A new release is a new worker; once it takes over, the page is that release's.
  const hadWorker = navigator.serviceWorker.controller !== null;
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (hadWorker) location.reload();
  });
  navigator.serviceWorker.register('/staff/sw.js', { scope: '/staff/' }).catch(() => {});
}

void boot();
