// Setup's People and Store devices (section 18's people and store devices): who works or
// administers at the store and with which role, their sign-in ways (a one-time password shown
// once, a PIN, a badge), ending their sessions; the store's enrolled tablets and handhelds.
import { get, post } from '../api.js';
import { h, time } from '../dom.js';
import { choicesOf, formDialog, showSecretOnce } from '../forms.js';
import { ROLES } from '../values.js';
import { badge } from './common.js';
import { confirmedAction, editDialog, list, resourceSection, rowButton } from './resource.js';

const ROLE_NAMES = { org_admin: 'organization admin', location_admin: 'store admin', staff: 'staff' };
const GRANTED = { admin: '', file: ' (provisioning file)', sso: ' (single sign-on)' };

function personFields(ctx, { creating }) {
  const roles = ROLES.filter((r) => r !== 'org_admin' || ctx.orgAdmin).map((r) => ({ value: r, text: ROLE_NAMES[r] }));
  return [
    { name: 'name', label: 'Name', required: true, maxlength: 200 },
    { name: 'email', label: 'Email', type: 'email', required: true, maxlength: 320 },
    ...(creating
      ? []
      : [
          {
            name: 'status',
            label: 'Status',
            type: 'select',
            required: true,
            choices: [
              { value: 'active', text: 'active' },
              { value: 'disabled', text: 'disabled (cannot sign in)' },
            ],
          },
        ]),
    {
      name: 'language',
      label: 'Language',
      type: 'select',
      nullable: "The store's",
      choices: [
        { value: 'en', text: 'English' },
        { value: 'fr', text: 'Français' },
      ],
    },
    {
      name: 'memberships',
      label: creating ? 'Roles' : 'Roles granted here (single sign-on and the provisioning file keep theirs)',
      type: 'rows',
      item: 'role',
      add: 'Add a role',
      blank: () => ({ role: 'staff', location_ids: [ctx.locationId] }),
      fields: [
        { name: 'role', label: 'Role', type: 'select', required: true, choices: roles },
        { name: 'location_ids', label: 'At the stores', type: 'checks', choices: choicesOf(ctx.administered()), none: 'No store.' },
      ],
    },
    {
      name: 'password',
      label: creating ? 'Make a one-time password (shown once, changed at the first sign-in)' : 'Make a new one-time password (ends their sessions)',
      type: 'checkbox',
    },
    {
      name: 'pin',
      label: creating ? 'PIN' : 'New PIN',
      type: 'password',
      maxlength: 12,
      autocomplete: 'new-password',
      hint: '6 to 12 digits, for signing in on the store’s shared devices. Never shown again.',
    },
    { name: 'badge_code', label: creating ? 'Badge code' : 'New badge code', maxlength: 256, hint: 'What the badge scanner types. Never shown again.' },
  ];
}

/** An org_admin's role needs no stores; the others name theirs (the API says so when none is). */
function personBody(body) {
  body.memberships = (body.memberships ?? []).map((m) => {
    const grant = { ...m };
    delete grant.id;
    if (grant.role === 'org_admin') delete grant.location_ids;
    return grant;
  });
  if (body.password === false) delete body.password;
  return body;
}

async function oneTimePassword(person) {
  if (person?.one_time_password) {
    await showSecretOnce({
      title: `A one-time password for ${person.name}`,
      label: 'One-time password',
      value: person.one_time_password,
      note: `Give it to ${person.name}: they choose their own password at their first sign-in.`,
    });
  }
}

export function peopleSection(root, ctx) {
  const storeName = (id) => ctx.me.locations.find((l) => l.id === id)?.name ?? `store ${id}`;
  const roles = (p) =>
    p.memberships
      .map((m) => `${ROLE_NAMES[m.role]}${m.location_ids === null ? '' : ` at ${m.location_ids.map(storeName).join(', ')}`}${GRANTED[m.granted_by]}`)
      .join('; ');
  const people = resourceSection({
    id: 'people',
    title: 'People',
    intro: 'Everyone with a role at this store, and the organization admins.',
    load: () => get(`/api/admin/people?location_id=${ctx.locationId}`),
    emptyText: 'Nobody has a role here yet.',
    columns: [
      ['Name', (p) => p.name],
      ['Email', (p) => p.email],
      ['Status', (p) => (p.status === 'active' ? badge('active', 'good') : badge('disabled', 'bad'))],
      ['Roles', roles],
      ['Signs in with', (p) => list([p.has_password ? 'password' : null, p.has_pin ? 'PIN' : null, p.has_badge ? 'badge' : null].filter(Boolean))],
    ],
    add: {
      label: 'Add a person',
      open: async () =>
        formDialog({
          title: 'Add a person',
          fields: personFields(ctx, { creating: true }),
          values: { memberships: [{ role: 'staff', location_ids: [ctx.locationId] }], password: true },
          submit: 'Add',
          send: (body) => post('/api/admin/people', personBody(body)),
          done: oneTimePassword,
        }),
    },
    actions: (p, reload) => [
      rowButton(
        'Edit',
        async () => {
          const changed = await editDialog({
            title: `Change ${p.name}`,
            url: `/api/admin/people/${p.id}`,
            fields: personFields(ctx, { creating: false }),
            object: { ...p, memberships: p.memberships.filter((m) => m.granted_by === 'admin') },
            read: async () => {
              const fresh = await get(`/api/admin/people/${p.id}`);
              return { ...fresh, memberships: fresh.memberships.filter((m) => m.granted_by === 'admin') };
            },
            toBody: personBody,
            done: oneTimePassword,
          });
          if (changed) await reload();
        },
        { label: `Edit ${p.name}` },
      ),
      rowButton(
        'End sessions',
        () =>
          confirmedAction({
            title: `End ${p.name}'s sessions?`,
            text: 'They are signed out everywhere at their next request; they can sign in again.',
            confirm: 'End sessions',
            run: () => post(`/api/admin/people/${p.id}/sessions/end`),
            done: (r) => `${r.sessions_ended} session${r.sessions_ended === 1 ? '' : 's'} ended`,
            reload,
          }),
        { label: `End ${p.name}'s sessions` },
      ),
    ],
  });
  root.append(people.element);
}

export function storeDevicesSection(root, ctx) {
  const devices = resourceSection({
    id: 'store-devices',
    title: 'Store devices',
    intro:
      'Shared tablets and handhelds where the store’s people sign in with a badge or a PIN. To enroll one, open the console in its browser, sign in as a store admin, and choose “Enroll this browser” there.',
    load: () => get(`/api/admin/store_devices?location_id=${ctx.locationId}`),
    emptyText: 'No store device is enrolled here.',
    columns: [
      ['Name', (d) => d.name],
      ['Enrolled by', (d) => d.enrolled_by?.name ?? '—'],
      ['Enrolled', (d) => time(d.created_at)],
      ['Last badge or PIN sign-in', (d) => time(d.last_seen_at)],
      ['State', (d) => (d.revoked_at === null ? badge('enrolled', 'good') : badge(`revoked ${time(d.revoked_at)}`, 'bad'))],
    ],
    add: {
      label: 'Enroll this browser',
      open: async () => {
        const enrolled = await formDialog({
          title: `Enroll this browser as a device of ${ctx.location()?.name ?? 'this store'}`,
          intro: h(
            'p',
            { class: 'notice-box warn' },
            'This browser becomes the store’s shared device, and you are signed out here: from then on people of the store sign in on it with their badge or PIN.',
          ),
          fields: [{ name: 'name', label: 'Device name', required: true, maxlength: 100, hint: 'What the store calls it, e.g. Front desk tablet.' }],
          submit: 'Enroll and sign out',
          send: (body) => post('/api/admin/store_devices', { ...body, location_id: ctx.locationId }),
        });
        // The enrolling session has ended: the page becomes the device's badge and PIN sign-in.
        if (enrolled) location.assign('/console');
        return false;
      },
    },
    actions: (d, reload) =>
      d.revoked_at === null
        ? [
            rowButton(
              'Revoke',
              () =>
                confirmedAction({
                  title: `Revoke ${d.name}?`,
                  text: 'Badge and PIN sign-in stop working on it, and its sessions end.',
                  confirm: 'Revoke',
                  run: () => post(`/api/admin/store_devices/${d.id}/revoke`),
                  done: `${d.name} revoked`,
                  reload,
                }),
              { label: `Revoke ${d.name}` },
            ),
          ]
        : [],
  });
  root.append(devices.element);
}
