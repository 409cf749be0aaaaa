// The queue of the person's store (contract section 19): waiting requests (escalated first, then
// the longest waiting, their age ticking from the service's clock), the ones in progress with who
// has them, "My requests", and one request by itself (/staff/r/{message_id}). Each card offers the
// steps its option's staff action allows; a request that must be scanned offers Scan before Complete.
import { ApiError, post, toast } from '/console/assets/api.js';
import { h } from '/console/assets/dom.js';
// Made by the service from its own lists (src/console/values.ts).
import { DEFAULT_STAFF_ACTION, STEPS_BY_STAFF_ACTION } from '/console/assets/values.js';
import { language, t, waited } from './words.js';
import { openScanner } from './scan.js';

const WAITING = new Set(['created', 'escalated']);
const OPEN = new Set(['created', 'escalated', 'claimed', 'on_the_way']);

/** Escalated first, then whoever has waited longest. */
const byUrgency = (a, b) => Number(b.is_escalated) - Number(a.is_escalated) || Date.parse(a.created_at) - Date.parse(b.created_at);

export const isMine = (r, app) => r.claimed_by_user_id === `person:${app.me.person.id}`;
export const waitingOf = (data) => data.requests.filter((r) => WAITING.has(r.status)).sort(byUrgency);
export const inProgressOf = (data) => data.requests.filter((r) => OPEN.has(r.status) && !WAITING.has(r.status)).sort(byUrgency);
export const mineOf = (data, app) => inProgressOf(data).filter((r) => isMine(r, app));

const optionText = (r) => (language() === 'fr' && r.option_text_fr ? r.option_text_fr : r.option_text);

/** The age of a request now, by the service's clock (`offset`: its clock minus the browser's). */
export const ageOf = (r, offset) => (Date.now() + offset - Date.parse(r.created_at)) / 1000;

export function queueView(app) {
  const waiting = waitingOf(app.data);
  const busy = inProgressOf(app.data);
  return [
    h('h2', {}, `${t('queue')} (${waiting.length})`),
    waiting.length === 0
      ? h('p', { class: 'empty' }, t('nobody_waiting'))
      : h(
          'ul',
          { class: 'cards', id: 'waiting' },
          waiting.map((r) => card(r, app)),
        ),
    busy.length === 0
      ? null
      : [
          h('h2', {}, `${t('in_progress')} (${busy.length})`),
          h(
            'ul',
            { class: 'cards', id: 'in-progress' },
            busy.map((r) => card(r, app)),
          ),
        ],
  ];
}

export function mineView(app) {
  const mine = mineOf(app.data, app);
  return [
    h('h2', {}, `${t('mine')} (${mine.length})`),
    mine.length === 0
      ? h('p', { class: 'empty' }, t('nothing_mine'))
      : h(
          'ul',
          { class: 'cards', id: 'mine' },
          mine.map((r) => card(r, app)),
        ),
  ];
}

/** One request by itself: its card while it is open, else what became of it. */
export function requestView(app, messageId, status) {
  const r = app.data.requests.find((x) => x.message_id === messageId);
  const back = h('a', { class: 'button secondary', href: '/staff/', onclick: (e) => app.go(e, 'queue') }, t('back'));
  if (r !== undefined && OPEN.has(r.status)) return [h('h2', {}, t('open_request')), h('ul', { class: 'cards', id: 'request' }, card(r, app)), back];
  const s = r?.status ?? status?.cfh_request?.status;
  if (s === undefined) return [h('p', { class: 'error', role: 'alert' }, t('not_found')), back];
  const text = r ? optionText(r) : language() === 'fr' ? status.option.text_fr : status.option.text_en;
  const word = { completed: 'status_completed', cancelled: 'status_cancelled', timed_out: 'status_timed_out' }[s];
  return [h('h2', {}, text), h('p', { class: 'notice', id: 'request-closed' }, word ? t(word) : s), back];
}

function card(r, app) {
  const mine = isMine(r, app);
  const claimed = mine ? t('you_claimed') : t('claimed_by', { name: r.claimed_by });
  const going = mine ? t('you_on_the_way') : t('on_the_way_by', { name: r.claimed_by });
  const status = r.status === 'on_the_way' ? going : r.status === 'claimed' ? claimed : null;
  return h(
    'li',
    { class: `card request ${r.is_escalated ? 'escalated' : ''} ${mine ? 'mine' : ''}`, dataset: { messageId: r.message_id } },
    h(
      'div',
      { class: 'line' },
      h('strong', { class: 'option' }, optionText(r)),
      r.is_escalated && WAITING.has(r.status) ? h('span', { class: 'badge escalated' }, t('escalated')) : null,
    ),
    r.device_name ? h('div', { class: 'place' }, r.device_name) : null,
    r.custom_text ? h('blockquote', { class: 'customer-text', 'aria-label': t('customer_text') }, r.custom_text) : null,
    h('div', { class: 'age', dataset: { created: r.created_at } }, t('waiting_for', { t: waited(ageOf(r, app.offset)) })),
    status ? h('div', { class: 'who' }, status) : null,
    r.require_scan && r.employee_arrived_at !== null ? h('div', { class: 'arrived' }, t('arrived')) : null,
    h('div', { class: 'actions' }, actionsOf(r, app, mine)),
  );
}

function actionsOf(r, app, mine) {
  const steps = STEPS_BY_STAFF_ACTION[r.staff_action ?? DEFAULT_STAFF_ACTION] ?? [];
  const free = !r.is_claimed;
  const buttons = [];
  const button = (step, text, run, primary = false) =>
    h('button', { type: 'button', class: primary ? 'primary' : 'secondary', disabled: app.offline, dataset: { step }, onclick: run }, text);
  if (steps.includes('claim') && free) buttons.push(button('claim', t('claim'), () => step(app, r, 'claim'), true));
  if (steps.includes('on_the_way') && (free || mine) && !r.is_on_the_way)
    buttons.push(button('on_the_way', t('on_the_way'), () => step(app, r, 'on_the_way'), !steps.includes('claim')));
  const mayComplete = steps.includes('complete') && (mine || (free && !steps.includes('claim') && !steps.includes('on_the_way')));
  if (mayComplete && r.require_scan && r.employee_arrived_at === null) {
    buttons.push(button('scan', t('scan'), () => openScanner(app, r), true));
  } else if (mayComplete) {
    buttons.push(button('complete', t('complete'), () => complete(app, r), true));
  }
  return buttons;
}

/** A step's refusal in the person's words. */
export function stepProblem(err) {
  if (!(err instanceof ApiError)) return t('offline');
  if (err.code === 'scan_required') return t('scan_first');
  if (err.status === 404) return t('not_found');
  if (err.status === 409) return t('closed_already');
  if (err.status < 500) return err.message;
  return t('try_again');
}

async function step(app, r, name, body) {
  if (app.offline) return;
  try {
    const { success } = await post(`/console/api/cfh/${encodeURIComponent(r.message_id)}/${name}`, body);
    toast(
      success
        ? t({ claim: 'done_claimed', on_the_way: 'done_on_the_way', complete: 'done_completed' }[name])
        : t(name === 'complete' ? 'closed_already' : 'taken'),
      success ? 'ok' : 'error',
    );
  } catch (err) {
    if (err.status !== 401) toast(stepProblem(err), 'error');
  }
  await app.refresh();
}

/** Complete: with one of the store's outcomes when it has some, else a short free text. */
function complete(app, r) {
  const outcomes = app.data.outcomes;
  const field =
    outcomes.length > 0
      ? h(
          'select',
          { id: 'outcome', required: true },
          h('option', { value: '' }, t('choose')),
          outcomes.map((o) => h('option', { value: o.key }, language() === 'fr' && o.text_fr ? o.text_fr : o.text)),
        )
      : h('input', { id: 'outcome', type: 'text', required: true, maxlength: 200, value: 'helped' });
  const dialog = h(
    'dialog',
    { class: 'sheet' },
    h(
      'form',
      {
        method: 'dialog',
        onsubmit: async (e) => {
          e.preventDefault();
          if (field.value.trim() === '' || app.offline) return;
          dialog.close();
          await step(app, r, 'complete', { outcome: field.value.trim() });
        },
      },
      h('h2', {}, `${t('complete')}: ${optionText(r)}`),
      h('label', { for: 'outcome' }, t('outcome')),
      field,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, t('cancel')),
        h('button', { type: 'submit', class: 'primary', disabled: app.offline, dataset: { step: 'confirm-complete' } }, t('complete')),
      ),
    ),
  );
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

/** Every age on the page, again (each second). */
export function tick(root, offset) {
  for (const el of root.querySelectorAll('.age[data-created]')) {
    el.textContent = t('waiting_for', { t: waited((Date.now() + offset - Date.parse(el.dataset.created)) / 1000) });
  }
}
