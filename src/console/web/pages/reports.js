// Reports of a date range (P1, P3) drawn as charts, and the range's requests as CSV (P2).
import { get } from '../api.js';
import { bars, columns } from '../charts.js';
import { duration, h, label, mount } from '../dom.js';
import { empty, filteredPage } from './common.js';

const day = (d) => d.toISOString().slice(0, 10);

export function reportsPage(container, { locationId }) {
  const today = new Date();
  const from = h('input', { id: 'from', type: 'date', value: day(new Date(today.getTime() - 6 * 86_400_000)), required: true });
  const to = h('input', { id: 'to', type: 'date', value: day(today), required: true });
  const csv = h('a', { class: 'button secondary', id: 'csv', download: true }, 'Export requests (CSV)');
  const body = filteredPage(container, {
    title: 'Reports',
    fields: [
      ['From', from],
      ['To', to],
    ],
    csv,
    onShow: () => load(),
  });
  let stopped = false;

  async function load() {
    const q = `from=${encodeURIComponent(from.value)}&to=${encodeURIComponent(to.value)}`;
    csv.href = `/console/api/locations/${locationId}/requests.csv?${q}`;
    mount(body, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const data = await get(`/console/api/locations/${locationId}/reports?${q}`);
      if (!stopped) render(body, data);
    } catch (err) {
      if (err.status !== 401 && !stopped) mount(body, h('p', { class: 'error', role: 'alert' }, err.message));
    }
  }
  load();
  return {
    refresh() {},
    stop() {
      stopped = true;
    },
  };
}

function render(body, { cfh, lockers, outcomes }) {
  const outcomeText = new Map(outcomes.map((o) => [o.key, o.text]));
  const times = [
    ['Claimed', cfh.time_to_claim],
    ['On the way', cfh.time_to_on_the_way],
    ['Completed', cfh.time_to_complete],
  ];
  // Requests of no button or display (from an integration) are not a button.
  const buttons = cfh.by_device.filter((g) => g.key !== 'none' && g.key !== null);
  const groups = (list) => list.map((g) => ({ label: g.name ?? g.key ?? '—', values: { requests: g.requests } }));
  mount(
    body,
    h(
      'div',
      { class: 'figures' },
      figureBox('Requests', String(cfh.total)),
      figureBox('Median time to claim', duration(cfh.time_to_claim.median_s)),
      figureBox('Median time to complete', duration(cfh.time_to_complete.median_s)),
      figureBox('Locker occupancy', lockers.occupancy === null || lockers.occupancy === undefined ? '—' : `${Math.round(lockers.occupancy * 100)} %`),
    ),
    h(
      'div',
      { class: 'charts' },
      columns({
        title: 'Requests per day',
        rows: cfh.per_day,
        x: 'day',
        series: [
          { key: 'requests', label: 'requests' },
          { key: 'escalations', label: 'escalations' },
          { key: 'timeouts', label: 'timeouts' },
        ],
      }),
      bars({
        title: 'Response times (minutes from the request)',
        unit: ' min',
        series: [
          { key: 'median', label: 'median' },
          { key: 'p90', label: '90th percentile' },
        ],
        rows: times.map(([name, d]) => ({ label: name, values: { median: minutes(d.median_s), p90: minutes(d.p90_s) } })),
      }),
      cfh.outcomes.length === 0
        ? card('Outcomes', empty('No completed requests in this range.'))
        : bars({
            title: 'Outcomes',
            series: [{ key: 'count', label: 'requests' }],
            rows: cfh.outcomes.map((o) => ({ label: outcomeText.get(o.key) ?? label(o.key), values: { count: o.count } })),
          }),
      cfh.by_employee.length === 0
        ? card('Per employee', empty('No one claimed a request in this range.'))
        : bars({
            title: 'Per employee',
            series: [
              { key: 'claimed', label: 'claimed' },
              { key: 'completed', label: 'completed' },
            ],
            rows: cfh.by_employee.map((e) => ({ label: e.claimed_by, values: { claimed: e.claimed, completed: e.completed } })),
          }),
      buttons.length === 0
        ? card('Busiest buttons', empty('No button or display requests in this range.'))
        : bars({ title: 'Busiest buttons', series: [{ key: 'requests', label: 'requests' }], rows: groups(buttons.slice(0, 10)) }),
      cfh.by_option.length === 0
        ? null
        : bars({ title: 'Requests by option', series: [{ key: 'requests', label: 'requests' }], rows: groups(cfh.by_option.slice(0, 10)) }),
      columns({
        title: 'Locker orders per day',
        rows: lockers.per_day,
        x: 'day',
        series: [
          { key: 'orders', label: 'orders' },
          { key: 'completed', label: 'completed' },
          { key: 'expired', label: 'expired' },
          { key: 'canceled', label: 'canceled' },
        ],
      }),
    ),
  );
}

const minutes = (s) => (s === null || s === undefined ? null : s / 60);
const figureBox = (name, value) => h('div', { class: 'figure card' }, h('span', { class: 'muted' }, name), h('strong', {}, value));
const card = (title, content) => h('figure', { class: 'chart-card card' }, h('figcaption', {}, title), content);
