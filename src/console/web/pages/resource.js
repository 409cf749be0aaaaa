// One section 18 resource on a Setup page: its heading, "Add" (a form in a dialog), a table of its
// objects with what each row may do (edit, delete, rotate a key...), read again after each change.
// An object the provisioning file manages is marked and offers no change (the API would answer 409).
import { act, ApiError, confirmDialog, del, get, patch, toast } from '../api.js';
import { h, mount } from '../dom.js';
import { formDialog } from '../forms.js';
import { badge, empty, scrollTable } from './common.js';

/**
 * `load()` the objects shown; `columns` [[header, (o) => cell]]; `add` { label, open() } or null;
 * `actions(o, reload)` the row's buttons. Returns { element, reload }.
 */
export function resourceSection({ id, title, intro = null, load, columns, add = null, actions = () => [], emptyText }) {
  const body = h('div', { class: 'resource-body' }, h('p', { class: 'muted' }, 'Loading…'));
  const element = h(
    'section',
    { class: 'resource', id: `section-${id}`, 'aria-labelledby': `${id}-title` },
    h(
      'div',
      { class: 'row resource-head' },
      h('h2', { id: `${id}-title` }, title),
      add
        ? h(
            'button',
            {
              type: 'button',
              class: 'primary',
              id: `add-${id}`,
              onclick: async () => {
                if (await add.open()) await reload();
              },
            },
            add.label,
          )
        : null,
    ),
    intro ? h('p', { class: 'muted' }, intro) : null,
    body,
  );
  let items = [];
  async function reload() {
    try {
      items = await load();
    } catch (err) {
      if (err.status !== 401) mount(body, h('p', { class: 'error', role: 'alert' }, err.message));
      return items;
    }
    mount(
      body,
      items.length === 0
        ? empty(emptyText)
        : scrollTable(
            title,
            h(
              'table',
              { class: 'table admin' },
              h(
                'thead',
                {},
                h('tr', {}, [...columns.map(([t]) => h('th', { scope: 'col' }, t)), h('th', { scope: 'col' }, h('span', { class: 'sr' }, 'Actions'))]),
              ),
              h(
                'tbody',
                {},
                items.map((o) =>
                  h(
                    'tr',
                    { dataset: { id: String(o.id ?? o.edge_id ?? o.account_sid) } },
                    columns.map(([, cell], i) => (i === 0 ? h('th', { scope: 'row' }, cell(o)) : h('td', {}, cell(o)))),
                    h('td', { class: 'row-actions' }, o.managed_by === 'file' ? badge('provisioning file', 'file') : actions(o, reload)),
                  ),
                ),
              ),
            ),
          ),
    );
    return items;
  }
  reload();
  return { element, reload, items: () => items };
}

/** A row's button. */
export const rowButton = (text, onclick, opts = {}) =>
  h('button', { type: 'button', class: opts.danger ? 'danger' : 'secondary', onclick, 'aria-label': opts.label ?? null }, text);

/**
 * Edit an object in a dialog: its current values, PATCH with its version (If-Match), and on a 412
 * "Reload" reads it again with `read()`. `toBody` shapes what the form read into the body sent.
 */
export function editDialog({ title, url, fields, object, read, toBody = (b) => b, done }) {
  let version = object.version;
  return formDialog({
    title,
    fields,
    values: object,
    submit: 'Save',
    send: (body) => patch(url, toBody(body), version),
    reload: async () => {
      const fresh = await read();
      version = fresh.version;
      return fresh;
    },
    done,
  });
}

/** Read one object again from its list (for resources without a read of one). */
export async function fromList(url, match) {
  const found = (await get(url)).find(match);
  if (found === undefined) throw new ApiError(404, { message: 'it is not there any more', code: 'not_found' });
  return found;
}

/**
 * Delete after a confirmation, with the version shown. `in_use` (it has history) says to disable it
 * instead; a 412 says someone changed it (the list is read again).
 */
export async function deleteObject({ what, url, version, reload }) {
  const ok = await confirmDialog({ title: `Delete ${what}?`, text: 'This cannot be undone.', confirm: 'Delete', danger: true });
  if (ok === null) return;
  try {
    await del(url, version);
    toast(`Deleted ${what}`);
  } catch (err) {
    if (err.status === 401) return;
    if (err.code === 'in_use') toast(`${err.message} Turn it off (not enabled) instead: its history stays.`, 'error');
    else if (err.status === 412) toast('Someone else changed it meanwhile: here is its current state.', 'error');
    else toast(err.message, 'error');
  }
  await reload();
}

/** An action of a row, confirmed, that answers the object changed. */
export async function confirmedAction({ title, text, confirm, run, done, reload }) {
  const ok = await confirmDialog({ title, text, confirm });
  if (ok === null) return null;
  const result = await act(run, done);
  await reload();
  return result;
}

export const yesNo = (v) => (v ? 'yes' : 'no');
export const enabledBadge = (o) => (o.enabled === false ? badge('off', 'bad') : badge('on', 'good'));
export const list = (values) => (values === null || values === undefined || values.length === 0 ? '—' : values.join(', '));
