// Setup's Store settings (section 18's locations): the shown store's name, number, time zone,
// language and its Call for Help and locker timers, changed from the version read (a 412 offers to
// reload); organization admins also add a store, which then appears in the header's store list.
import { get, patch, post, toast } from '../api.js';
import { h, mount } from '../dom.js';
import { adminForm, formDialog } from '../forms.js';
import { badge } from './common.js';

const seconds = (name, label, hint) => ({ name, label, type: 'number', min: 0, empty: null, hint });

/** The location's fields as the provisioning file has them (section 7), plus enabled. */
export function locationFields({ creating }) {
  return [
    {
      group: 'The store',
      columns: 2,
      fields: [
        { name: 'name', label: 'Name', required: true, maxlength: 200 },
        { name: 'store_number', label: 'Store number', maxlength: 50, empty: null },
        { name: 'time_zone', label: 'Time zone', maxlength: 64, empty: null, hint: 'e.g. America/Toronto (reports’ days); empty: UTC' },
        {
          name: 'language',
          label: 'Language',
          type: 'select',
          nullable: 'English (default)',
          choices: [
            { value: 'en', text: 'English' },
            { value: 'fr', text: 'Français' },
          ],
        },
        {
          name: 'staff_name_format',
          label: 'Staff names customers see',
          type: 'select',
          nullable: 'Default',
          choices: [
            { value: 'full', text: 'Full name' },
            { value: 'first', text: 'First name' },
            { value: 'generic', text: '“An associate”' },
          ],
        },
        ...(creating ? [] : [{ name: 'enabled', label: 'Open (devices and customers reach it)', type: 'checkbox' }]),
      ],
    },
    {
      group: 'Call for Help (seconds; empty: the service’s default; 0 turns a reminder off)',
      columns: 2,
      fields: [
        seconds('cfh_timeout_seconds', 'Time out after'),
        seconds('cfh_escalation_seconds', 'Escalate after'),
        seconds('cfh_reminder_seconds', 'Remind while waiting every'),
        seconds('cfh_reminder_claimed_seconds', 'Remind once claimed every'),
        seconds('cfh_reminder_cap_seconds', 'Stop reminding after'),
        seconds('cfh_auto_complete_seconds', 'Complete by itself after'),
        seconds('call_button_cooldown_seconds', 'A button’s pause between presses'),
      ],
    },
    {
      group: 'Lockers (hours)',
      columns: 2,
      fields: [
        { name: 'locker_pickup_hours', label: 'An order waits for its customer', type: 'number', empty: null },
        { name: 'locker_reminder_hours', label: 'Remind the customer every', type: 'number', empty: null },
      ],
    },
  ];
}

export function storeSection(root, ctx) {
  const url = `/api/admin/locations/${ctx.locationId}`;
  const box = h('section', { class: 'resource', 'aria-labelledby': 'store-title' });
  root.append(box);
  let version = null;

  async function draw() {
    mount(box, h('h2', { id: 'store-title' }, 'Store settings'), h('p', { class: 'muted' }, 'Loading…'));
    let loc;
    try {
      loc = await get(url);
    } catch (err) {
      if (err.status !== 401) mount(box, h('h2', { id: 'store-title' }, 'Store settings'), h('p', { class: 'error', role: 'alert' }, err.message));
      return;
    }
    version = loc.version;
    const file = loc.managed_by === 'file';
    const form = adminForm({
      id: 'store-form',
      fields: locationFields({ creating: false }),
      values: loc,
      submit: 'Save the settings',
      send: (body) => patch(url, body, version),
      reload: async () => {
        const fresh = await get(url);
        version = fresh.version;
        return fresh;
      },
      done: async (saved) => {
        version = saved.version;
        toast('Settings saved');
        if (saved.name !== loc.name) await ctx.refreshSession();
      },
    });
    if (file) for (const el of form.querySelectorAll('input, select, textarea, button[type=submit]')) el.disabled = true;
    mount(
      box,
      h(
        'div',
        { class: 'row resource-head' },
        h('h2', { id: 'store-title' }, 'Store settings'),
        file ? badge('provisioning file', 'file') : null,
        addStore(ctx),
      ),
      file
        ? h('p', { class: 'notice-box info' }, 'The provisioning file manages this store: change it there (the next apply would undo a change made here).')
        : null,
      form,
    );
  }
  draw();
}

/** Organization admins add a store; the console then shows it (the header's list) and its setup. */
function addStore(ctx) {
  if (!ctx.orgAdmin) return null;
  return h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      id: 'add-store',
      onclick: async () => {
        const made = await formDialog({
          title: 'Add a store',
          fields: locationFields({ creating: true }),
          submit: 'Add the store',
          send: (body) => post('/api/admin/locations', body),
        });
        if (!made) return;
        toast(`${made.name} added`);
        await ctx.refreshSession();
        location.hash = `#/setup/${made.id}/store`;
      },
    },
    'Add a store',
  );
}
