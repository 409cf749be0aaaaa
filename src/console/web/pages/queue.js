// The live Call for Help queue of a location: open requests first (ages ticking, escalations
// highlighted), each with the buttons its option's staff action allows; then the last closed ones.
import { act, confirmDialog, post, toast } from '../api.js';
import { h, label, mount, time } from '../dom.js';
import { ageText, badge, empty, livePage, scrollTable } from './common.js';
// Made by the service from its own lists (src/console/values.ts), not a file here.
import { DEFAULT_STAFF_ACTION, STEPS_BY_STAFF_ACTION } from '../values.js';

const OPEN = new Set(['created', 'escalated', 'claimed', 'on_the_way']);
/** The store's words for the API's values (the API keeps its own: clients switch on them). */
const WORDS = { created: 'waiting', api: 'integration' };
const word = (value) => WORDS[value] ?? label(value);
const OUTCOMES = ['helped', 'product_found', 'out_of_stock', 'customer_left', 'other'];

export function queuePage(container, { locationId }) {
  return livePage(container, {
    title: 'Call for Help',
    url: () => `/console/api/locations/${locationId}/queue`,
    kinds: ['callforhelp'],
    tickMs: 1000,
    render: (body, data, ctx) => {
      ctx.outcomes = data.outcomes;
      const outcomeText = new Map(data.outcomes.map((o) => [o.key, o.text]));
      // Who has waited longest comes first, escalations before everything else.
      const open = data.requests
        .filter((r) => OPEN.has(r.status))
        .sort((a, b) => Number(b.is_escalated) - Number(a.is_escalated) || Date.parse(a.created_at) - Date.parse(b.created_at));
      const closed = data.requests.filter((r) => !OPEN.has(r.status));
      mount(
        body,
        h('h2', {}, `Waiting and in progress (${open.length})`),
        open.length === 0
          ? empty('No one is waiting for help.')
          : h(
              'ul',
              { class: 'cards queue', id: 'open-requests' },
              open.map((r) => requestCard(r, ctx)),
            ),
        h('h2', {}, 'Recently closed'),
        closed.length === 0
          ? empty('Nothing closed yet.')
          : scrollTable(
              'Recently closed requests',
              h(
                'table',
                { class: 'table' },
                h('thead', {}, h('tr', {}, h('th', {}, 'Request'), h('th', {}, 'Status'), h('th', {}, 'By'), h('th', {}, 'Outcome'), h('th', {}, 'Closed'))),
                h(
                  'tbody',
                  {},
                  closed.map((r) =>
                    h(
                      'tr',
                      {},
                      h('td', {}, r.option_text, r.device_name ? ` · ${r.device_name}` : ''),
                      h('td', {}, badge(word(r.status), r.status)),
                      h('td', {}, r.claimed_by ?? '—'),
                      h('td', {}, outcomeText.get(r.completion_reason) ?? r.completion_reason ?? '—'),
                      h('td', {}, time(r.closed_at)),
                    ),
                  ),
                ),
              ),
            ),
      );
    },
  });
}

function requestCard(r, ctx) {
  const steps = STEPS_BY_STAFF_ACTION[r.staff_action] ?? STEPS_BY_STAFF_ACTION[DEFAULT_STAFF_ACTION];
  const escalated = r.status === 'escalated' || r.is_escalated;
  const buttons = [];
  if (steps.includes('claim') && (r.status === 'created' || r.status === 'escalated')) {
    buttons.push(
      h('button', { type: 'button', class: 'primary', onclick: () => step(r, 'claim', ctx) }, r.staff_action === 'acknowledge' ? 'Acknowledge' : 'Claim'),
    );
  }
  if (steps.includes('on_the_way') && r.status !== 'on_the_way') {
    buttons.push(h('button', { type: 'button', class: 'secondary', onclick: () => step(r, 'on_the_way', ctx) }, 'On the way'));
  }
  if (steps.includes('complete')) buttons.push(h('button', { type: 'button', class: 'secondary', onclick: () => complete(r, ctx) }, 'Complete'));
  const age = (ctx.now() - Date.parse(r.created_at)) / 1000;
  return h(
    'li',
    { class: `card request ${escalated ? 'escalated' : ''}`, dataset: { messageId: r.message_id } },
    h(
      'div',
      { class: 'row' },
      h('strong', { class: 'option' }, r.option_text),
      h('span', { class: 'age', 'aria-label': 'waiting for', dataset: { since: r.created_at } }, ageText(age)),
    ),
    r.custom_text ? h('p', { class: 'custom' }, `“${r.custom_text}”`) : null,
    h(
      'div',
      { class: 'row meta' },
      badge(word(r.status), r.status),
      escalated && r.status !== 'escalated' ? badge('escalated', 'escalated') : null,
      h('span', { class: 'muted' }, r.device_name ?? word(r.source)),
      r.claimed_by ? h('span', {}, `Claimed by ${r.claimed_by}`) : null,
    ),
    h('div', { class: 'actions' }, buttons),
  );
}

async function step(r, which, ctx) {
  const result = await act(() => post(`/console/api/cfh/${encodeURIComponent(r.message_id)}/${which}`));
  if (result === null) return;
  toast(
    result.success ? `${which === 'claim' ? 'Claimed' : 'On the way'}: ${r.option_text}` : 'Someone else got there first.',
    result.success ? 'ok' : 'error',
  );
  ctx.reload();
}

async function complete(r, ctx) {
  // The location's outcomes when it has some (C3 accepts only those), else free text with suggestions.
  const outcomes = ctx.outcomes ?? [];
  const answer = await confirmDialog({
    title: 'Complete the request',
    text: r.option_text,
    confirm: 'Complete',
    field:
      outcomes.length > 0
        ? { label: 'Outcome', required: true, choices: outcomes.map((o) => ({ value: o.key, text: o.text })) }
        : { label: 'Outcome', required: true, options: OUTCOMES, maxLength: 200 },
  });
  if (answer === null) return;
  const result = await act(
    () => post(`/console/api/cfh/${encodeURIComponent(r.message_id)}/complete`, { outcome: answer.value }),
    (res) => (res.success ? `Completed: ${r.option_text}` : 'The request was already closed.'),
  );
  if (result) ctx.reload();
}
