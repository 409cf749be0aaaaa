// Setup's Equipment: the store's lockers with their cabinets, call buttons, displays (digital call
// buttons, with their printable QR sheet) and radio edge devices. Keys the service makes (a
// locker's api_key, a display's key, an edge's device key, a scan code) are shown once, when made
// or rotated.
import { get, post } from '../api.js';
import { h } from '../dom.js';
import { choicesOf, formDialog, showSecretOnce } from '../forms.js';
import { CFH_ANNOUNCEABLE, THERMAL_MODES, VOICE_HANDLERS } from '../values.js';
import { openQrSheet, sheetButton } from './qr-sheet.js';
import { requireScanField, scanCode, scanCodeButton } from './setup-options.js';
import { confirmedAction, deleteObject, editDialog, enabledBadge, fromList, list, resourceSection, rowButton, yesNo } from './resource.js';

const enabledField = { name: 'enabled', label: 'Enabled (off: devices and customers no longer reach it; reports keep it)', type: 'checkbox' };
const chatChannel = {
  name: 'chat_channel_id',
  label: 'Chat channel',
  maxlength: 200,
  empty: null,
  hint: 'Copied to the requests it makes, for chat integrations.',
};

/** Options offered at the store (its own and the organization's), for buttons and displays. */
async function optionChoices(ctx) {
  // Unfiltered: `location_id` would leave out the organization's options, offered at every store.
  const options = await get('/api/admin/cfh_options');
  return options.filter((o) => (o.location_id === null || o.location_id === ctx.locationId) && o.enabled !== false);
}

/** A resource of the store with add, edit (PATCH with its version), delete, and extra row actions. */
function storeResource(
  ctx,
  {
    id,
    title,
    noun,
    intro,
    url,
    listUrl = `${url}?location_id=${ctx.locationId}`,
    key = (o) => o.id,
    name = (o) => o.name,
    columns,
    fields,
    values = {},
    made,
    more = () => [],
    emptyText,
  },
) {
  const section = resourceSection({
    id,
    title,
    intro,
    load: async () => (await get(listUrl)).filter((o) => o.location_id === ctx.locationId),
    emptyText,
    columns,
    add: {
      label: `Add ${noun}`,
      open: async () =>
        formDialog({
          title: `Add ${noun}`,
          fields: await fields(true),
          values: { enabled: true, ...values },
          submit: 'Add',
          send: (body) => post(url, { location_id: ctx.locationId, ...body }),
          done: made,
        }),
    },
    actions: (o, reload) => [
      rowButton(
        'Edit',
        async () => {
          if (
            await editDialog({
              title: `Change ${name(o)}`,
              url: `${url}/${key(o)}`,
              fields: await fields(false),
              object: o,
              read: () => fromList(listUrl, (x) => key(x) === key(o)),
              done: made,
            })
          )
            await reload();
        },
        { label: `Edit ${name(o)}` },
      ),
      ...more(o, reload),
      rowButton('Delete', () => deleteObject({ what: name(o), url: `${url}/${key(o)}`, version: o.version, reload }), {
        label: `Delete ${name(o)}`,
        danger: true,
      }),
    ],
  });
  return section;
}

function rotateButton(what, run, show, reload) {
  return rowButton(
    'New key',
    async () => {
      const rotated = await confirmedAction({
        title: `A new key for ${what}?`,
        text: 'The old key is refused from its next use: the device (or the printed code) must get the new one.',
        confirm: 'Make a new key',
        run,
        reload,
      });
      if (rotated) await show(rotated);
    },
    { label: `New key for ${what}` },
  );
}

export function equipmentSection(root, ctx) {
  const lockersUrl = '/api/admin/lockers';
  const lockerKey = (l) =>
    l?.api_key
      ? showSecretOnce({
          title: `The key of ${l.name}`,
          label: 'Locker api_key',
          value: l.api_key,
          note: 'The locker sends it in its api-key header and as its MQTT password.',
        })
      : null;
  const lockers = storeResource(ctx, {
    id: 'lockers',
    title: 'Lockers',
    noun: 'a locker',
    url: lockersUrl,
    emptyText: 'No locker at this store.',
    columns: [
      ['Name', (l) => l.name],
      ['Cabinets', (l) => String(l.cabinets?.length ?? 0)],
      ['Rear loading', (l) => yesNo(l.rear_loading_available)],
      ['Door timer (s)', (l) => String(l.timer ?? '—')],
      ['Enabled', enabledBadge],
    ],
    values: { cabinets: [{ key: 1, size: 'medium', thermal_mode: 'ambient' }] },
    fields: async (creating) => [
      { name: 'name', label: 'Name', required: true, maxlength: 200 },
      { name: 'rear_loading_available', label: 'Loaded from the rear', type: 'checkbox' },
      { name: 'timer', label: 'Door timer (seconds)', type: 'number', min: 0 },
      {
        name: 'cabinets',
        label: 'Cabinets',
        type: 'rows',
        item: 'cabinet',
        add: 'Add a cabinet',
        blank: (i) => ({ key: i + 1, size: 'medium', thermal_mode: 'ambient' }),
        fields: [
          { name: 'key', label: 'Number', type: 'number', required: true, min: 0 },
          { name: 'name', label: 'Name', maxlength: 200 },
          { name: 'size', label: 'Size', maxlength: 50 },
          { name: 'thermal_mode', label: 'Temperature', type: 'select', required: true, choices: THERMAL_MODES.map((m) => ({ value: m, text: m })) },
          ...(creating ? [] : [{ name: 'enabled', label: 'Enabled', type: 'checkbox' }]),
        ],
      },
      ...(creating ? [] : [enabledField]),
    ],
    made: lockerKey,
    more: (l, reload) => [rotateButton(l.name, () => post(`${lockersUrl}/${l.id}/key`, {}, l.version), lockerKey, reload)],
  });

  const buttons = storeResource(ctx, {
    id: 'call-buttons',
    title: 'Call buttons',
    noun: 'a call button',
    url: '/api/admin/call_buttons',
    emptyText: 'No call button at this store.',
    columns: [
      ['Name', (b) => b.name],
      ['Device key', (b) => b.device_key],
      ['Option', (b) => b.option_text ?? String(b.option_id)],
      ['Enabled', enabledBadge],
    ],
    fields: async (creating) => [
      { name: 'name', label: 'Name', required: true, maxlength: 200 },
      { name: 'device_key', label: 'Device key (MAC address)', required: true, maxlength: 64, hint: 'As the button’s hub sends it, e.g. AA:22:33:44:55:66.' },
      {
        name: 'option_id',
        label: 'Option',
        type: 'select',
        required: true,
        choices: choicesOf(await optionChoices(ctx), (o) => `${o.text_en} · ${o.text_fr}`),
      },
      chatChannel,
      requireScanField,
      ...(creating ? [] : [enabledField]),
    ],
    made: (b) => scanCode(b, b.name),
    more: (b, reload) => (b.require_scan ? [scanCodeButton(b.name, () => post(`/api/admin/call_buttons/${b.id}/scan_code`, {}, b.version), reload)] : []),
  });

  const displaysUrl = '/api/admin/displays';
  const showDisplayKey = async (d) => {
    if (!d?.key) return;
    const options = (await optionChoices(ctx)).filter((o) => d.option_ids.includes(o.id));
    const pageUrl = d.url ?? `${location.origin}/help/${d.key}`;
    await showSecretOnce({
      title: `The key of ${d.name}`,
      label: 'Customer page',
      value: pageUrl,
      note: 'Its QR code is printed now or after a new key: the key is never shown again.',
      more: [
        sheetButton(() =>
          openQrSheet({
            qrUrl: `${displaysUrl}/${d.id}/qr?${new URLSearchParams({ display_key: d.key })}`,
            pageUrl,
            storeName: ctx.location()?.name ?? '',
            displayName: d.name,
            options,
          }),
        ),
      ],
    });
    await scanCode(d, d.name);
  };
  const displays = storeResource(ctx, {
    id: 'displays',
    title: 'Displays',
    noun: 'a display',
    intro: 'Digital call buttons: a printed QR code opens a page on the customer’s phone.',
    url: displaysUrl,
    emptyText: 'No display at this store.',
    columns: [
      ['Name', (d) => d.name],
      ['Options', (d) => String(d.option_ids.length)],
      ['Free text', (d) => yesNo(d.allow_custom_text)],
      ['Enabled', enabledBadge],
    ],
    fields: async (creating) => [
      { name: 'name', label: 'Name', required: true, maxlength: 200 },
      { name: 'option_ids', label: 'Options (1 to 4)', type: 'checks', choices: choicesOf(await optionChoices(ctx), (o) => `${o.text_en} · ${o.text_fr}`) },
      { name: 'allow_custom_text', label: 'Customers may type a short text', type: 'checkbox' },
      chatChannel,
      requireScanField,
      ...(creating ? [] : [enabledField]),
    ],
    made: showDisplayKey,
    more: (d, reload) => [
      rotateButton(d.name, () => post(`${displaysUrl}/${d.id}/key`, {}, d.version), showDisplayKey, reload),
      ...(d.require_scan ? [scanCodeButton(d.name, () => post(`${displaysUrl}/${d.id}/scan_code`, {}, d.version), reload)] : []),
    ],
  });

  const edgesUrl = '/api/admin/radio_edges';
  const edgeKey = (e) =>
    e?.device_key
      ? showSecretOnce({
          title: `The key of ${e.name}`,
          label: 'Device key',
          value: e.device_key,
          note: 'The edge device sends it as its api-key and MQTT password.',
        })
      : null;
  const edges = storeResource(ctx, {
    id: 'radio-edges',
    title: 'Radio edge devices',
    noun: 'a radio edge device',
    url: edgesUrl,
    // Every edge device administered (the list takes no store): this store's are shown.
    listUrl: edgesUrl,
    key: (e) => encodeURIComponent(e.edge_id),
    emptyText: 'No radio edge device at this store.',
    columns: [
      ['Name', (e) => e.name],
      ['Edge id', (e) => e.edge_id],
      ['Announces', (e) => list(e.announce_cfh)],
      ['Voice actions', (e) => yesNo(e.voice_actions)],
      ['Enabled', enabledBadge],
    ],
    values: { voice_handlers: ['normalize', 'chime', 'transcript'], announce_cfh: ['created', 'escalated', 'cancelled'] },
    fields: async (creating) => [
      ...(creating
        ? [{ name: 'edge_id', label: 'Edge id', maxlength: 100, hint: 'Its MQTT name: letters, digits, _ . -; empty: the service makes one.' }]
        : []),
      { name: 'name', label: 'Name', required: true, maxlength: 200 },
      { name: 'voice_handlers', label: 'Voice handlers', type: 'checks', choices: VOICE_HANDLERS.map((v) => ({ value: v, text: v })) },
      {
        name: 'announce_cfh',
        label: 'Announce these Call for Help statuses',
        type: 'checks',
        choices: CFH_ANNOUNCEABLE.map((v) => ({ value: v, text: v.replace(/_/g, ' ') })),
      },
      { name: 'voice_actions', label: 'Act on what staff say on the channel', type: 'checkbox' },
      ...(creating ? [] : [enabledField]),
    ],
    made: edgeKey,
    more: (e, reload) => [rotateButton(e.name, () => post(`${edgesUrl}/${encodeURIComponent(e.edge_id)}/rotate_key`, {}, e.version), edgeKey, reload)],
  });

  root.append(h('div', { class: 'equipment' }, lockers.element, buttons.element, displays.element, edges.element));
}
