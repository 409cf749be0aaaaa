// Webhook endpoints receiving the location's events, their recent deliveries with every attempt,
// failures marked, and "send again" (W2), confirmed; and their administration (section 18): add,
// change, delete, and "send a test" (testWebhook), which shows the receiver's answer.
import { act, confirmDialog, post } from '../api.js';
import { h, mount, time } from '../dom.js';
import { badge, empty, livePage, scrollTable } from './common.js';
import { addEndpoint, endpointActions } from './webhook-admin.js';

export function webhooksPage(container, { locationId, me }) {
  const orgAdmin = me.locations.find((l) => l.id === locationId)?.role === 'org_admin';
  const page = livePage(container, {
    title: 'Webhooks',
    url: () => `/console/api/locations/${locationId}/webhooks`,
    kinds: null,
    pollMs: 15_000,
    render: (body, data, ctx) =>
      mount(
        body,
        h('div', { class: 'actions' }, addEndpoint({ locationId, orgAdmin, reload: ctx.reload })),
        data.endpoints.length === 0
          ? empty("No webhook endpoint receives this store's events.")
          : data.endpoints.map((e) =>
              h(
                'section',
                { class: 'endpoint', 'aria-label': e.url },
                h('h2', { class: 'url' }, e.url),
                h(
                  'div',
                  { class: 'row meta' },
                  h('span', { class: 'muted' }, e.location_id === null ? 'Every store of the organization' : 'This store'),
                  h('span', { class: 'muted' }, `Events: ${e.events.join(', ') || 'none'}`),
                  badge(`${e.delivered} delivered`, 'good'),
                  badge(`${e.pending} pending`, e.pending > 0 ? 'warn' : ''),
                  badge(`${e.failed} failed`, e.failed > 0 ? 'bad' : ''),
                ),
                h('div', { class: 'actions endpoint-actions' }, endpointActions(e, { locationId, orgAdmin, reload: ctx.reload })),
                e.deliveries.length === 0
                  ? empty('No deliveries yet.')
                  : scrollTable(
                      `Deliveries to ${e.url}`,
                      h(
                        'table',
                        { class: 'table' },
                        h(
                          'thead',
                          {},
                          h(
                            'tr',
                            {},
                            ['Event', 'State', 'Attempts', 'Last answer', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)),
                          ),
                        ),
                        h(
                          'tbody',
                          {},
                          e.deliveries.map((d) => {
                            const last = d.attempts.at(-1);
                            return h(
                              'tr',
                              { class: d.state === 'failed' ? 'failed' : '' },
                              h('td', {}, `${d.type} · ${d.status}`),
                              h('td', {}, badge(d.state, d.state === 'delivered' ? 'good' : d.state === 'failed' ? 'bad' : 'warn')),
                              h('td', {}, String(d.attempts.length)),
                              h('td', {}, last ? `${last.status_code ?? '—'}${last.error ? ` · ${last.error}` : ''} (${last.duration_ms} ms)` : '—'),
                              h('td', {}, time(d.created_at)),
                              h('td', {}, h('button', { type: 'button', class: 'secondary', onclick: () => again(d, ctx) }, 'Send again')),
                            );
                          }),
                        ),
                      ),
                    ),
              ),
            ),
      ),
  });
  return page;
}

async function again(d, ctx) {
  const ok = await confirmDialog({ title: 'Send this delivery again?', text: `${d.type} · ${d.status} (event ${d.event_uuid})`, confirm: 'Send again' });
  if (ok === null) return;
  if (await act(() => post(`/console/api/webhooks/deliveries/${d.id}/redeliver`), 'Queued to send again')) ctx.reload();
}
