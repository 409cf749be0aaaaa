// Setup's Call for Help options (what a customer may ask for, on buttons and displays) and outcomes
// (what staff record when they complete), each text in English and French side by side, as the
// customer pages and the staff app show them in the store's language.
import { get, post } from '../api.js';
import { formDialog, showSecretOnce } from '../forms.js';
import { STAFF_ACTIONS } from '../values.js';
import { confirmedAction, deleteObject, editDialog, enabledBadge, fromList, resourceSection, rowButton } from './resource.js';

const STAFF_ACTION_NAMES = {
  claim_and_on_the_way: 'claim, then on the way',
  on_the_way: 'on the way',
  acknowledge: 'acknowledge',
  done: 'done',
  none: 'nothing (information only)',
};

/** Section 19: staff scan the object's code before completing its requests. */
export const requireScanField = {
  name: 'require_scan',
  label: 'Scan to complete',
  type: 'checkbox',
  hint: 'Staff scan its code (shown once when made) before they complete a request.',
};

function optionFields(ctx, { creating }) {
  return [
    {
      group: 'What the customer chooses',
      fields: [
        { name: 'text_en', label: 'English', required: true, maxlength: 200 },
        { name: 'text_fr', label: 'Français', required: true, maxlength: 200 },
      ],
    },
    {
      group: 'What the customer reads then',
      fields: [
        { name: 'prompt_en', label: 'English', type: 'textarea', required: true, maxlength: 2000 },
        { name: 'prompt_fr', label: 'Français', type: 'textarea', required: true, maxlength: 2000 },
      ],
    },
    {
      name: 'staff_action',
      label: 'What staff do',
      type: 'select',
      required: true,
      choices: STAFF_ACTIONS.map((a) => ({ value: a, text: STAFF_ACTION_NAMES[a] ?? a })),
    },
    requireScanField,
    ...(creating && ctx.orgAdmin
      ? [
          {
            name: 'location_id',
            label: 'Offered at',
            type: 'select',
            required: true,
            choices: [
              { value: ctx.locationId, text: `${ctx.location()?.name ?? 'this store'} only` },
              { value: null, text: 'every store of the organization' },
            ],
          },
        ]
      : []),
    ...(creating ? [] : [{ name: 'enabled', label: 'Offered (off: retired, reports keep it)', type: 'checkbox' }]),
  ];
}

/** A scan code made by the service (section 19) is shown once. */
export async function scanCode(made, what) {
  if (made?.scan_code) {
    await showSecretOnce({
      title: `The scan code of ${what}`,
      label: 'Scan code',
      value: made.scan_code,
      note: 'Print it as a QR code where staff complete the request.',
    });
  }
}

/** A new scan code (the old one no longer scans), shown once. */
export function scanCodeButton(what, run, reload) {
  return rowButton(
    'New scan code',
    async () => {
      const rotated = await confirmedAction({
        title: `A new scan code for ${what}?`,
        text: 'The old code no longer scans: print the new one where staff complete the request.',
        confirm: 'Make a new scan code',
        run,
        reload,
      });
      if (rotated) await scanCode(rotated, what);
    },
    { label: `New scan code for ${what}` },
  );
}

export function optionsSection(root, ctx) {
  const url = '/api/admin/cfh_options';
  const here = (o) => o.location_id === null || o.location_id === ctx.locationId;
  const options = resourceSection({
    id: 'options',
    title: 'Call for Help options',
    intro: 'What customers ask for on call buttons and displays. Options for every store show at each store.',
    // Unfiltered: `location_id` would leave out the organization's options, offered here too.
    load: async () => (await get(url)).filter(here),
    emptyText: 'No option yet: buttons and displays need one.',
    columns: [
      ['English', (o) => o.text_en],
      ['Français', (o) => o.text_fr],
      ['Staff', (o) => STAFF_ACTION_NAMES[o.staff_action] ?? o.staff_action],
      ['Offered at', (o) => (o.location_id === null ? 'every store' : 'this store')],
      ['Enabled', enabledBadge],
    ],
    add: {
      label: 'Add an option',
      open: () =>
        formDialog({
          title: 'Add a Call for Help option',
          fields: optionFields(ctx, { creating: true }),
          values: { staff_action: 'claim_and_on_the_way', location_id: ctx.locationId },
          submit: 'Add',
          send: (body) => post(url, { location_id: ctx.locationId, ...body }),
          done: (o) => scanCode(o, o.text_en),
        }),
    },
    actions: (o, reload) => [
      rowButton(
        'Edit',
        async () => {
          if (
            await editDialog({
              title: `Change “${o.text_en}”`,
              url: `${url}/${o.id}`,
              fields: optionFields(ctx, { creating: false }),
              object: o,
              read: () => fromList(url, (x) => x.id === o.id),
              done: (saved) => scanCode(saved, saved.text_en),
            })
          )
            await reload();
        },
        { label: `Edit ${o.text_en}` },
      ),
      ...(o.require_scan ? [scanCodeButton(o.text_en, () => post(`${url}/${o.id}/scan_code`, {}, o.version), reload)] : []),
      rowButton('Delete', () => deleteObject({ what: `“${o.text_en}”`, url: `${url}/${o.id}`, version: o.version, reload }), {
        label: `Delete ${o.text_en}`,
        danger: true,
      }),
    ],
  });

  const outcomesUrl = '/api/admin/cfh_outcomes';
  const outcomeFields = (creating) => [
    { name: 'key', label: 'Key', required: true, maxlength: 100, hint: 'The stable word reports and integrations see, e.g. sale.' },
    {
      group: 'What staff choose',
      fields: [
        { name: 'text_en', label: 'English', required: true, maxlength: 200 },
        { name: 'text_fr', label: 'Français', required: true, maxlength: 200 },
      ],
    },
    ...(creating ? [] : [{ name: 'enabled', label: 'Offered (off: retired, reports keep it)', type: 'checkbox' }]),
  ];
  const outcomes = resourceSection({
    id: 'outcomes',
    title: 'Outcomes',
    intro: 'What staff choose when they complete a request. With none, they type it.',
    load: async () => (await get(`${outcomesUrl}?location_id=${ctx.locationId}`)).filter((o) => o.location_id === ctx.locationId),
    emptyText: 'No outcome: staff type what happened.',
    columns: [
      ['Key', (o) => o.key],
      ['English', (o) => o.text_en],
      ['Français', (o) => o.text_fr],
    ],
    add: {
      label: 'Add an outcome',
      open: () =>
        formDialog({
          title: 'Add an outcome',
          fields: outcomeFields(true),
          submit: 'Add',
          send: (body) => post(outcomesUrl, { location_id: ctx.locationId, ...body }),
        }),
    },
    actions: (o, reload) => [
      rowButton(
        'Edit',
        async () => {
          if (
            await editDialog({
              title: `Change the outcome ${o.key}`,
              url: `${outcomesUrl}/${o.id}`,
              fields: outcomeFields(false),
              object: o,
              read: () => fromList(`${outcomesUrl}?location_id=${ctx.locationId}`, (x) => x.id === o.id),
            })
          )
            await reload();
        },
        { label: `Edit the outcome ${o.key}` },
      ),
      rowButton('Delete', () => deleteObject({ what: `the outcome ${o.key}`, url: `${outcomesUrl}/${o.id}`, version: o.version, reload }), {
        label: `Delete the outcome ${o.key}`,
        danger: true,
      }),
    ],
  });
  root.append(options.element, outcomes.element);
}
