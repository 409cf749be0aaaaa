// The location's devices: online or not, last seen, battery of call buttons, firmware and address
// of lockers, messages sent and not yet acknowledged.
import { h, label, mount, time } from '../dom.js';
import { badge, empty, livePage, scrollTable } from './common.js';

/** Below this a call button reports battery_low (contract section 14). */
const LOW_VOLTS = 2.4;

export function devicesPage(container, { locationId }) {
  return livePage(container, {
    title: 'Devices',
    url: () => `/console/api/locations/${locationId}/devices`,
    kinds: ['device'],
    pollMs: 30_000,
    render: (body, data) =>
      mount(
        body,
        data.devices.length === 0
          ? empty('This store has no devices.')
          : scrollTable(
              'Devices',
              h(
                'table',
                { class: 'table' },
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    ['Device', 'Kind', 'Health', 'Last seen', 'Battery', 'Firmware', 'Address', 'Queued'].map((t) => h('th', { scope: 'col' }, t)),
                  ),
                ),
                h(
                  'tbody',
                  {},
                  data.devices.map((d) =>
                    h(
                      'tr',
                      {},
                      h('th', { scope: 'row' }, d.name),
                      h('td', {}, label(d.kind)),
                      h('td', {}, health(d)),
                      h('td', {}, time(d.last_seen_at)),
                      h(
                        'td',
                        {},
                        d.voltage === null
                          ? '—'
                          : badge(`${d.voltage.toFixed(2)} V${d.voltage < LOW_VOLTS ? ' · low' : ''}`, d.voltage < LOW_VOLTS ? 'bad' : ''),
                      ),
                      h('td', {}, d.firmware ?? '—'),
                      h('td', {}, d.ip ?? '—'),
                      h('td', { class: d.queued_messages > 0 ? 'warn-text' : '' }, String(d.queued_messages)),
                    ),
                  ),
                ),
              ),
            ),
      ),
  });
}

/** A device never seen has not failed: it has not been installed or pressed yet, so it is not red. */
function health(d) {
  if (d.online) return badge('online', 'good');
  return d.last_seen_at === null ? badge('not seen yet') : badge('offline', 'bad');
}
