// The store's audit log (listAuditEntries, for its admins): who did what to what and when, newest
// first, with what changed, a page at a time; filtered by action; and the same as CSV
// (exportAuditEntries). Every stored value is shown as text (dom.js never parses HTML).
import { get } from '../api.js';
import { h, mount, time } from '../dom.js';
import { empty, filteredPage, scrollTable } from './common.js';

const PAGE = 50;

export function auditPage(container, { locationId }) {
  const action = h('input', {
    id: 'audit-action',
    type: 'search',
    maxlength: 100,
    placeholder: 'e.g. store_device or sign_in.failed',
    autocomplete: 'off',
    pattern: '[a-z_]+(\\.[a-z_]+)*',
  });
  const csv = h('a', { class: 'button secondary', id: 'audit-csv', download: true }, 'Export (CSV)');
  const body = filteredPage(container, { title: 'Audit', fields: [['Action', action]], csv, onShow: () => load() });
  let stopped = false;
  let shown = 0; // which load is current: an older answer never overwrites a newer one

  const query = (extra = {}) => {
    const q = new URLSearchParams({ location_id: String(locationId), ...extra });
    if (action.value.trim() !== '') q.set('action', action.value.trim());
    return q.toString();
  };

  async function load() {
    const mine = ++shown;
    csv.href = `/api/admin/audit.csv?${query()}`;
    mount(body, h('p', { class: 'muted' }, 'Loading…'));
    const rows = h('tbody', {});
    const more = h('div', { class: 'more' });
    let table = null;

    async function page(cursor) {
      try {
        const data = await get(`/api/admin/audit?${query({ limit: String(PAGE), ...(cursor ? { cursor } : {}) })}`);
        if (stopped || mine !== shown) return;
        if (table === null) {
          table = data.entries.length === 0 ? empty('Nothing recorded here yet.') : entriesTable(rows);
          mount(body, table, more);
        }
        rows.append(...data.entries.map(entryRow));
        mount(
          more,
          data.next_cursor === null
            ? null
            : h('button', { type: 'button', class: 'secondary', id: 'audit-more', onclick: () => page(data.next_cursor) }, 'Show older'),
        );
      } catch (err) {
        if (err.status !== 401 && !stopped && mine === shown) mount(body, h('p', { class: 'error', role: 'alert' }, err.message));
      }
    }
    await page(null);
  }

  load();
  return {
    refresh() {},
    stop() {
      stopped = true;
    },
  };
}

function entriesTable(rows) {
  return scrollTable(
    'Audit entries',
    h(
      'table',
      { class: 'table audit' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Time', 'Who', 'What', 'Target', 'Changes'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      rows,
    ),
  );
}

const ACTOR_KINDS = { service_account: 'service account', provisioning: 'provisioning file', system: 'storeops' };

function entryRow(e) {
  const kind = ACTOR_KINDS[e.actor.type];
  const who = e.actor.name ?? e.actor.id ?? kind ?? e.actor.type;
  return h(
    'tr',
    { dataset: { entryId: String(e.id) } },
    h('td', { title: e.at }, time(e.at)),
    h('td', {}, kind && who !== kind ? `${who} (${kind})` : who),
    h('td', { class: 'action' }, e.action),
    h('td', {}, e.target === null ? '—' : `${e.target.type.replace(/_/g, ' ')} ${e.target.name ?? e.target.id ?? ''}`.trim()),
    h('td', { class: 'changes' }, changesText(e.changes)),
  );
}

/** "name: Front desk → Till 2; enabled: true → false": each change as text. */
function changesText(changes) {
  const parts = Object.entries(changes ?? {}).map(([field, c]) => `${field}: ${value(c?.from)} → ${value(c?.to)}`);
  return parts.length === 0 ? '—' : parts.join('; ');
}

function value(v) {
  if (v === null || v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
