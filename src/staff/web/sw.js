// The staff app's service worker (contract section 19). Its cache is named by the service's version
// (filled in when the service serves it), so an upgraded service is a new worker: it takes over at
// once, deletes the old version's cache, and the page reloads as the new release. Pages and files
// come from the network first (always the service's current ones) and from the cache when offline,
// so the shell opens and says "offline"; the API is never cached and nothing is queued.
const VERSION = '__STOREOPS_VERSION__';
const CACHE = `storeops-staff-${VERSION}`;
const SHELL = [
  '/staff/',
  '/staff/manifest.webmanifest',
  '/staff/assets/app.js',
  '/staff/assets/words.js',
  '/staff/assets/sign-in.js',
  '/staff/assets/queue.js',
  '/staff/assets/scan.js',
  '/staff/assets/lockers.js',
  '/staff/assets/alert.js',
  '/staff/assets/style.css',
  '/staff/assets/icons/icon-192.png',
  '/console/assets/dom.js',
  '/console/assets/api.js',
  '/console/assets/values.js',
  '/console/assets/live-stream.js',
];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('storeops-staff-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

const isShell = (url) =>
  url.origin === self.location.origin && (url.pathname.startsWith('/staff/r/') || url.pathname === '/staff/' || SHELL.includes(url.pathname));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || !isShell(url)) return;
  const key = request.mode === 'navigate' ? '/staff/' : url.pathname;
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          void caches.open(CACHE).then((cache) => cache.put(key, copy));
        }
        return response;
      })
      .catch(async () => (await caches.match(key)) ?? Response.error()),
  );
});
