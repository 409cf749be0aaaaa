// Every cabinet of the location's lockers: doors, enabled, occupied, cool-off, its open order with
// the pickup deadline; the locker online and last seen. Staff actions, each confirmed: open, close,
// disable and enable (L3), cancel the order (L8), a new open code (L9).
import { act, confirmDialog, post, toast } from '../api.js';
import { h, label, mount, time } from '../dom.js';
import { badge, empty, livePage } from './common.js';

export function lockersPage(container, { locationId }) {
  return livePage(container, {
    title: 'Lockers',
    url: () => `/console/api/locations/${locationId}/lockers`,
    kinds: ['locker', 'device'],
    pollMs: 30_000,
    render: (body, data, ctx) =>
      mount(
        body,
        data.lockers.length === 0
          ? empty('This store has no lockers.')
          : data.lockers.map((l) =>
              h(
                'section',
                { class: 'locker', 'aria-label': l.name },
                h(
                  'div',
                  { class: 'row locker-head' },
                  h('h2', {}, l.name),
                  h(
                    'span',
                    { class: 'row meta' },
                    badge(l.online ? 'online' : 'offline', l.online ? 'good' : 'bad'),
                    h('span', { class: 'muted' }, `Last seen ${time(l.last_seen_at)}`),
                  ),
                ),
                h(
                  'ul',
                  { class: 'cards cabinets' },
                  l.cabinets.map((c) => cabinetCard(l, c, ctx, data.now)),
                ),
              ),
            ),
      ),
  });
}

function cabinetCard(locker, c, ctx, now) {
  const name = c.name ? `${c.key} · ${c.name}` : `Cabinet ${c.key}`;
  const order = c.order;
  const late = order && order.pickup_deadline && Date.parse(order.pickup_deadline) < Date.parse(now);
  return h(
    'li',
    { class: `card cabinet ${c.enabled ? '' : 'disabled'} ${c.occupied ? 'occupied' : ''}`, dataset: { cabinetId: c.id } },
    h('div', { class: 'row' }, h('strong', {}, name), h('span', { class: 'muted' }, `${c.size} · ${c.thermal_mode}`)),
    h(
      'div',
      { class: 'row meta' },
      badge(`door ${c.door}`, c.door === 'open' ? 'warn' : ''),
      locker.rear_loading_available ? badge(`rear ${c.rear_door}`, c.rear_door === 'open' ? 'warn' : '') : null,
      badge(c.enabled ? 'enabled' : 'disabled', c.enabled ? '' : 'bad'),
      badge(c.occupied ? 'occupied' : 'empty', c.occupied ? 'info' : ''),
      c.cool_off ? badge(`cool-off until ${time(c.cool_off_until)}`, 'warn') : null,
    ),
    order
      ? h(
          'p',
          { class: 'order' },
          `Order ${order.order_id} · ${label(order.status)} · pick up by `,
          h('span', { class: late ? 'late' : '' }, time(order.pickup_deadline)),
        )
      : null,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'secondary', onclick: () => door(c, name, 'open', ctx) }, 'Open'),
      h('button', { type: 'button', class: 'secondary', onclick: () => door(c, name, 'close', ctx) }, 'Close'),
      locker.rear_loading_available ? h('button', { type: 'button', class: 'secondary', onclick: () => door(c, name, 'open', ctx, true) }, 'Open rear') : null,
      c.enabled
        ? h('button', { type: 'button', class: 'secondary', onclick: () => door(c, name, 'disable', ctx) }, 'Disable')
        : h('button', { type: 'button', class: 'secondary', onclick: () => door(c, name, 'enable', ctx) }, 'Enable'),
      order ? h('button', { type: 'button', class: 'secondary', onclick: () => orderStep(order, 'open_code', ctx) }, 'New code') : null,
      order ? h('button', { type: 'button', class: 'danger', onclick: () => orderStep(order, 'cancel', ctx) }, 'Cancel order') : null,
    ),
  );
}

const VERBS = { open: 'Open', close: 'Close', disable: 'Disable', enable: 'Enable' };

async function door(c, name, action, ctx, rear = false) {
  // Opening or disabling an occupied cabinet needs a reason (it is logged with the command).
  const needsReason = c.occupied && (action === 'open' || action === 'disable');
  const answer = await confirmDialog({
    title: `${VERBS[action]} ${rear ? 'the rear door of ' : ''}${name}?`,
    confirm: VERBS[action],
    danger: action === 'disable',
    text: action === 'open' ? `The ${rear ? 'rear' : 'front'} door unlocks at the locker now.` : null,
    field: needsReason ? { label: 'Reason (the cabinet holds an order)', required: true } : null,
  });
  if (answer === null) return;
  const body = { ...(answer.value ? { reason: answer.value } : {}), ...(rear ? { rear: true } : {}) };
  const done = await act(() => post(`/console/api/cabinets/${c.id}/${action}`, body), `${VERBS[action]}${rear ? ' rear' : ''}: ${name}`);
  if (done) ctx.reload();
}

async function orderStep(order, action, ctx) {
  const cancel = action === 'cancel';
  const answer = await confirmDialog({
    title: cancel ? `Cancel order ${order.order_id}?` : `A new open code for order ${order.order_id}?`,
    text: cancel ? 'The cabinet is released; the customer can no longer open it.' : 'The old code stops working at once.',
    confirm: cancel ? 'Cancel order' : 'New code',
    danger: cancel,
  });
  if (answer === null) return;
  const result = await act(() => post(`/console/api/orders/${order.id}/${action}`));
  if (result === null) return;
  if (cancel) toast(`Order ${order.order_id} canceled`);
  else await confirmDialog({ title: 'New open code', text: `Order ${order.order_id}: ${result.open_code}`, confirm: 'Done' });
  ctx.reload();
}
