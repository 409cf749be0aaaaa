// Lockers for staff (contract section 19), through the console's own locker operations: open a
// cabinet for a customer (with a reason), load an order (its cabinet opens, from the rear where the
// locker loads from there; closing it makes the order ready), and give an order a new open code.
// Each is recorded as the person's (L3's acted_by).
import { post, toast } from '/console/assets/api.js';
import { h } from '/console/assets/dom.js';
import { t } from './words.js';
import { stepProblem } from './queue.js';

export function lockersView(app, data) {
  if (data.lockers.length === 0) return h('p', { class: 'empty' }, t('no_lockers'));
  return data.lockers.map((locker) =>
    h(
      'section',
      { class: 'locker' },
      h('h2', {}, locker.name, locker.online ? null : h('span', { class: 'badge' }, t('offline_device'))),
      h(
        'ul',
        { class: 'cards' },
        locker.cabinets.map((c) => cabinetCard(app, locker, c)),
      ),
    ),
  );
}

function cabinetCard(app, locker, c) {
  const order = c.order;
  const button = (text, run, primary = false) =>
    h('button', { type: 'button', class: primary ? 'primary' : 'secondary', disabled: app.offline || !c.enabled, onclick: run }, text);
  return h(
    'li',
    { class: 'card cabinet', dataset: { cabinetId: c.id } },
    h('div', { class: 'line' }, h('strong', {}, c.name ?? t('cabinet', { key: c.key })), c.enabled ? null : h('span', { class: 'badge' }, t('disabled'))),
    h('div', { class: 'place' }, order === null ? t('empty_cabinet') : t(`order_status_${order.status}`, { id: order.order_id })),
    h(
      'div',
      { class: 'actions' },
      order !== null && order.status === 'open'
        ? button(t('load', { id: order.order_id }), () => open(app, c, { reason: `load order ${order.order_id}`, rear: locker.rear_loading_available }), true)
        : null,
      button(t('cabinet_open'), () => askReason(app, c)),
      order !== null ? button(t('new_code'), () => newCode(app, order)) : null,
    ),
  );
}

async function open(app, c, body) {
  if (app.offline) return;
  try {
    await post(`/console/api/cabinets/${c.id}/open`, body);
    toast(t('opened', { key: c.key }));
  } catch (err) {
    if (err.status !== 401) toast(stepProblem(err), 'error');
  }
  await app.refresh();
}

function askReason(app, c) {
  const reason = h('input', { id: 'reason', type: 'text', required: true, maxlength: 200 });
  const dialog = h(
    'dialog',
    { class: 'sheet' },
    h(
      'form',
      {
        method: 'dialog',
        onsubmit: async (e) => {
          e.preventDefault();
          if (reason.value.trim() === '') return;
          dialog.close();
          await open(app, c, { reason: reason.value.trim() });
        },
      },
      h('h2', {}, t('cabinet_open'), ' · ', c.name ?? t('cabinet', { key: c.key })),
      h('label', { for: 'reason' }, t('reason')),
      reason,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, t('cancel')),
        h('button', { type: 'submit', class: 'primary', disabled: app.offline }, t('open')),
      ),
    ),
  );
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

async function newCode(app, order) {
  if (app.offline) return;
  try {
    const renewed = await post(`/console/api/orders/${order.id}/open_code`);
    toast(t('code_is', { id: renewed.order_id, code: renewed.open_code }));
  } catch (err) {
    if (err.status !== 401) toast(stepProblem(err), 'error');
  }
  await app.refresh();
}
