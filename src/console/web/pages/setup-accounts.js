// Setup's integrations: service accounts and their tokens (a token shown once), the messaging
// provider's accounts (the auth token is a secret: written, never shown), and the single sign-on
// role mappings (organization admins).
import { get, post } from '../api.js';
import { h, time } from '../dom.js';
import { choicesOf, formDialog, showSecretOnce } from '../forms.js';
import { ADMIN_TOKEN_SCOPES, ROLES } from '../values.js';
import { badge } from './common.js';
import { confirmedAction, deleteObject, editDialog, enabledBadge, fromList, resourceSection, rowButton } from './resource.js';

const ROLE_NAMES = { org_admin: 'organization admin', location_admin: 'store admin', staff: 'staff' };
const storeNames = (ctx, ids) => (ids === null ? 'every store' : ids.map((id) => ctx.me.locations.find((l) => l.id === id)?.name ?? `store ${id}`).join(', '));

function tokenLine(ctx, account, token, reload) {
  const state =
    token.revoked_at !== null
      ? badge('revoked', 'bad')
      : token.expires_at !== null && Date.parse(token.expires_at) < Date.now()
        ? badge('expired', 'bad')
        : null;
  return h(
    'li',
    { class: 'token', dataset: { tokenId: String(token.id) } },
    h('strong', {}, token.name),
    ` · ${token.scopes.join(', ')} · ${storeNames(ctx, token.location_ids)} · last used ${time(token.last_used_at)}`,
    token.expires_at ? ` · expires ${time(token.expires_at)}` : '',
    ' ',
    state,
    token.revoked_at === null && token.managed_by === 'admin'
      ? rowButton(
          'Revoke',
          () =>
            confirmedAction({
              title: `Revoke the token ${token.name}?`,
              text: 'It is refused at its next request. This cannot be undone.',
              confirm: 'Revoke',
              run: () => post(`/api/admin/service_accounts/${account.id}/tokens/${token.id}/revoke`),
              done: `${token.name} revoked`,
              reload,
            }),
          { label: `Revoke the token ${token.name}` },
        )
      : null,
  );
}

/** The expiry date picked is the end of that day, the person's time (anything else is sent as
 * typed); an organization admin's token at no store chosen reaches every store. */
function tokenBody(body, ctx) {
  if (typeof body.expires_at === 'string' && /^\d{4}-\d\d-\d\d$/.test(body.expires_at)) body.expires_at = new Date(`${body.expires_at}T23:59:59`).toISOString();
  if (ctx.orgAdmin && body.location_ids?.length === 0) delete body.location_ids;
  return body;
}

export function accountsSection(root, ctx) {
  const accounts = resourceSection({
    id: 'accounts',
    title: 'Service accounts',
    intro: 'Integrations (a chat platform, a call button hub, a kiosk) call the API with the tokens of their account.',
    load: () => get('/api/admin/service_accounts'),
    emptyText: 'No service account yet.',
    columns: [
      ['Name', (a) => a.name],
      [
        'Tokens',
        (a) =>
          a.tokens.length === 0
            ? '—'
            : h(
                'ul',
                { class: 'tokens' },
                a.tokens.map((t) => tokenLine(ctx, a, t, accounts.reload)),
              ),
      ],
    ],
    add: {
      label: 'Add a service account',
      open: () =>
        formDialog({
          title: 'Add a service account',
          fields: [{ name: 'name', label: 'Name', required: true, maxlength: 200, hint: 'e.g. chat-bot or paint-counter hub' }],
          submit: 'Add',
          send: (body) => post('/api/admin/service_accounts', body),
        }),
    },
    actions: (a) => [
      rowButton(
        'New token',
        async () => {
          const made = await formDialog({
            title: `A new token of ${a.name}`,
            fields: [
              { name: 'name', label: 'Token name', required: true, maxlength: 200 },
              { name: 'scopes', label: 'What it may do', type: 'checks', choices: ADMIN_TOKEN_SCOPES.map((s) => ({ value: s, text: s })) },
              {
                name: 'location_ids',
                label: ctx.orgAdmin ? 'Only at these stores (none: every store)' : 'At these stores',
                type: 'checks',
                choices: choicesOf(ctx.administered()),
              },
              { name: 'expires_at', label: 'Expires on', type: 'date', hint: 'Leave empty for a token that does not expire.' },
            ],
            values: { location_ids: ctx.orgAdmin ? [] : [ctx.locationId] },
            submit: 'Make the token',
            send: (body) => post(`/api/admin/service_accounts/${a.id}/tokens`, tokenBody(body, ctx)),
            done: (t) =>
              showSecretOnce({
                title: `The token ${t.name}`,
                label: 'Bearer token',
                value: t.token,
                note: 'The integration sends it as Authorization: Bearer <token>.',
              }),
          });
          if (made) await accounts.reload();
        },
        { label: `New token of ${a.name}` },
      ),
    ],
  });
  root.append(accounts.element);
}

export function messagingSection(root) {
  const url = '/api/admin/messaging_accounts';
  const key = (m) => m.id ?? m.account_sid;
  const fields = (creating) => [
    ...(creating ? [{ name: 'account_sid', label: 'Account SID', required: true, maxlength: 34, hint: '34 letters and digits, from the provider.' }] : []),
    {
      name: 'auth_token',
      label: creating ? 'Auth token' : 'New auth token',
      type: 'password',
      required: creating,
      maxlength: 512,
      autocomplete: 'new-password',
      hint: 'The key of the provider’s signatures. Never shown again.',
    },
    { name: 'enabled', label: 'Enabled', type: 'checkbox' },
  ];
  const section = resourceSection({
    id: 'messaging',
    title: 'Messaging accounts',
    intro: 'The SMS provider’s accounts whose signed webhooks play on the radio (R2).',
    load: () => get(url),
    emptyText: 'No messaging account.',
    columns: [
      ['Account SID', (m) => m.account_sid],
      ['Enabled', enabledBadge],
    ],
    add: {
      label: 'Add a messaging account',
      open: () =>
        formDialog({
          title: 'Add a messaging account',
          fields: fields(true),
          values: { enabled: true },
          submit: 'Add',
          send: (body) => post(url, body),
        }),
    },
    actions: (m, reload) => [
      rowButton(
        'Edit',
        async () => {
          if (
            await editDialog({
              title: `Change ${m.account_sid}`,
              url: `${url}/${key(m)}`,
              fields: fields(false),
              object: m,
              read: () => fromList(url, (o) => key(o) === key(m)),
            })
          )
            await reload();
        },
        { label: `Edit ${m.account_sid}` },
      ),
      rowButton('Delete', () => deleteObject({ what: m.account_sid, url: `${url}/${key(m)}`, version: m.version, reload }), {
        label: `Delete ${m.account_sid}`,
        danger: true,
      }),
    ],
  });
  root.append(section.element);
}

export function ssoSection(root, ctx) {
  const url = '/api/admin/sso_role_mappings';
  const section = resourceSection({
    id: 'sso',
    title: 'Single sign-on role mappings',
    intro: 'A person whose identity provider’s roles claim holds the value gets the role at their next single sign-on.',
    load: () => get(url),
    emptyText: 'No mapping: nobody can sign in with single sign-on unless they already have a role.',
    columns: [
      ['Claim value', (m) => m.claim_value],
      ['Role', (m) => ROLE_NAMES[m.role]],
      ['Stores', (m) => storeNames(ctx, m.location_ids)],
    ],
    add: {
      label: 'Add a mapping',
      open: () =>
        formDialog({
          title: 'Map a claim value to a role',
          fields: [
            { name: 'claim_value', label: 'Claim value', required: true, maxlength: 500, hint: 'Compared exactly, e.g. store-10-staff.' },
            { name: 'role', label: 'Role', type: 'select', required: true, choices: ROLES.map((r) => ({ value: r, text: ROLE_NAMES[r] })) },
            { name: 'location_ids', label: 'At the stores (none for an organization admin)', type: 'checks', choices: choicesOf(ctx.administered()) },
          ],
          values: { role: 'staff', location_ids: [ctx.locationId] },
          submit: 'Add',
          send: (body) => {
            if (body.role === 'org_admin' && body.location_ids?.length === 0) delete body.location_ids;
            return post(url, body);
          },
        }),
    },
    actions: (m, reload) => [
      rowButton('Delete', () => deleteObject({ what: `the mapping ${m.claim_value}`, url: `${url}/${m.id}`, version: m.version, reload }), {
        label: `Delete the mapping ${m.claim_value}`,
        danger: true,
      }),
    ],
  });
  root.append(section.element);
}
