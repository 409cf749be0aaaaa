// What every page shares: read its data, draw it, read again when the live stream says a kind it
// shows changed (or every `pollMs` for what changes without events: last-seen times, delivery
// attempts), and keep the server's clock for ages that tick.
import { get } from '../api.js';
import { focusIn, h, mount, restoreFocus } from '../dom.js';

export function livePage(container, { title, url, kinds, render, pollMs = 0, tickMs = 0 }) {
  const heading = h('h1', { id: 'page-title' }, title);
  const body = h('div', { class: 'page-body', 'aria-live': 'off' }, h('p', { class: 'muted' }, 'Loading…'));
  mount(container, heading, body);
  const state = { offsetMs: 0, data: null, stopped: false };
  let loading = null;
  let again = false;

  // automatic: the page reads by itself (a live change, a poll), which does not keep the session alive.
  async function load(automatic = false) {
    if (loading !== null) {
      again = true;
      return loading;
    }
    loading = (async () => {
      try {
        const data = await get(url(), { automatic });
        if (state.stopped) return;
        if (data && data.now) state.offsetMs = Date.parse(data.now) - Date.now();
        state.data = data;
        const focus = focusIn(body);
        render(body, data, { reload: () => load(), now: () => new Date(Date.now() + state.offsetMs) });
        markOverflow(body);
        restoreFocus(body, focus);
      } catch (err) {
        if (err.status !== 401 && !state.stopped) mount(body, h('p', { class: 'error', role: 'alert' }, err.message));
      } finally {
        loading = null;
        if (again && !state.stopped) {
          again = false;
          load(true);
        }
      }
    })();
    return loading;
  }

  load();
  const resized = () => markOverflow(body);
  window.addEventListener('resize', resized);
  const poll = pollMs > 0 ? setInterval(() => load(true), pollMs) : null;
  const tick = tickMs > 0 ? setInterval(() => tickAges(body, new Date(Date.now() + state.offsetMs)), tickMs) : null;
  return {
    refresh(notice) {
      if (notice.kinds === null || kinds === null || notice.kinds.some((k) => kinds.includes(k))) load(true);
    },
    stop() {
      state.stopped = true;
      window.removeEventListener('resize', resized);
      if (poll !== null) clearInterval(poll);
      if (tick !== null) clearInterval(tick);
    },
  };
}

/** Elements with data-since (an ISO time) show the time since it, every tick. */
export function tickAges(root, now) {
  for (const el of root.querySelectorAll('[data-since]')) el.textContent = ageText((now - Date.parse(el.dataset.since)) / 1000);
}

export function ageText(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}:${String(s % 60).padStart(2, '0')}`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * A table in its own sideways-scrolling box, so a table wider than a phone never makes the page
 * scroll sideways; the hint under it shows only while the table is wider than its box.
 */
export function scrollTable(label, table) {
  return h(
    'div',
    { class: 'table-wrap' },
    h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': label }, table),
    h('p', { class: 'scroll-hint muted' }, 'Scroll sideways for more →'),
  );
}

/** Marks each scroll box whose table is wider than it (the hint shows then). */
function markOverflow(root) {
  for (const box of root.querySelectorAll('.table-scroll')) box.classList.toggle('overflows', box.scrollWidth > box.clientWidth + 1);
}

export function empty(text) {
  return h('p', { class: 'empty muted' }, text);
}

export function badge(text, kind = '') {
  return h('span', { class: `badge ${kind}` }, text);
}

/**
 * A page with a filter form above its body (reports, audit): the title, the form's labelled fields,
 * Show, and a CSV link; `onShow` runs on Show. Returns the body the page draws into.
 */
export function filteredPage(container, { title, fields, csv, onShow }) {
  const body = h('div', { class: 'page-body' });
  const form = h(
    'form',
    {
      class: 'range',
      onsubmit: (e) => {
        e.preventDefault();
        onShow();
      },
    },
    ...fields.flatMap(([text, input]) => [h('label', { for: input.id }, text), input]),
    h('button', { type: 'submit', class: 'primary' }, 'Show'),
    csv,
  );
  mount(container, h('h1', { id: 'page-title' }, title), form, body);
  return body;
}
