// The Webhooks page's administration (section 18's webhook endpoints, section 20's formats): add an
// endpoint (a secret the service makes is shown once), change or delete it from the version read,
// and send it a test event now, whose answer (status, time, the start of the body) is shown.
import { confirmDialog, post } from '../api.js';
import { h } from '../dom.js';
import { formDialog, showSecretOnce } from '../forms.js';
import { EVENT_TYPES } from '../values.js';
import { deleteObject, editDialog, fromList } from './resource.js';

const URL_BASE = '/api/admin/webhooks';

function endpointFields({ creating, orgAdmin, locationId }) {
  return [
    { name: 'url', label: 'URL', required: true, maxlength: 2000, type: 'url', hint: 'Where the events are POSTed (https).' },
    {
      name: 'format',
      label: 'Format',
      type: 'select',
      required: true,
      choices: [
        { value: 'signed', text: 'Signed JSON (x-signature)' },
        { value: 'slack', text: 'Slack message' },
        { value: 'teams', text: 'Teams card' },
      ],
    },
    {
      name: 'secret',
      label: creating ? 'Secret' : 'New secret',
      type: 'password',
      maxlength: 512,
      autocomplete: 'new-password',
      hint: creating
        ? 'Signed JSON only: the key of the signatures; empty: the service makes one, shown once. Slack and Teams URLs are their own secret.'
        : 'Signed JSON only. Leave empty to keep the current one.',
    },
    { name: 'events', label: 'Events sent', type: 'checks', choices: EVENT_TYPES.map((e) => ({ value: e, text: e })) },
    ...(creating && orgAdmin
      ? [
          {
            name: 'location_id',
            label: 'Events of',
            type: 'select',
            required: true,
            choices: [
              { value: locationId, text: 'this store' },
              { value: null, text: 'every store of the organization' },
            ],
          },
        ]
      : []),
    ...(creating ? [] : [{ name: 'enabled', label: 'Enabled', type: 'checkbox' }]),
  ];
}

async function secretShown(endpoint) {
  if (endpoint?.secret) {
    await showSecretOnce({
      title: 'The endpoint’s secret',
      label: 'Signing secret',
      value: endpoint.secret,
      note: 'The receiver checks x-signature with it (HMAC-SHA256 of x-timestamp and the body).',
    });
  }
}

export function addEndpoint({ locationId, orgAdmin, reload }) {
  return h(
    'button',
    {
      type: 'button',
      class: 'primary',
      id: 'add-webhook',
      onclick: async () => {
        const made = await formDialog({
          title: 'Add a webhook endpoint',
          fields: endpointFields({ creating: true, orgAdmin, locationId }),
          values: { format: 'signed', events: [...EVENT_TYPES], location_id: locationId },
          submit: 'Add',
          send: (body) => post(URL_BASE, { location_id: locationId, ...body }),
          done: secretShown,
        });
        if (made) reload();
      },
    },
    'Add an endpoint',
  );
}

/** What testWebhook answered, in words. */
function answerText(r) {
  const status = r.status_code ?? r.status ?? null;
  const took = r.duration_ms === undefined ? '' : ` in ${r.duration_ms} ms`;
  const body = r.body_excerpt ?? r.body ?? '';
  if (r.error) return `Not delivered${took}: ${r.error}`;
  return `The receiver answered ${status ?? '—'}${took}.${body ? ` It said: ${body}` : ''}`;
}

export function endpointActions(e, { locationId, orgAdmin, reload }) {
  const read = () => fromList(URL_BASE, (x) => x.id === e.id);
  return [
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-label': `Send a test to ${e.url}`,
        onclick: async (ev) => {
          const button = ev.currentTarget;
          button.disabled = true;
          try {
            const answer = await post(`${URL_BASE}/${e.id}/test`);
            await confirmDialog({ title: 'Test sent', text: answerText(answer), confirm: 'OK' });
          } catch (err) {
            if (err.status !== 401) await confirmDialog({ title: 'The test was not sent', text: err.message, confirm: 'OK' });
          } finally {
            button.disabled = false;
          }
        },
      },
      'Send a test',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-label': `Edit ${e.url}`,
        onclick: async () => {
          const current = await read();
          const saved = await editDialog({
            title: 'Change the endpoint',
            url: `${URL_BASE}/${e.id}`,
            fields: endpointFields({ creating: false, orgAdmin, locationId }),
            object: current,
            read,
            done: secretShown,
          });
          if (saved) reload();
        },
      },
      'Edit',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Delete ${e.url}`,
        onclick: async () => deleteObject({ what: e.url, url: `${URL_BASE}/${e.id}`, version: (await read()).version, reload }),
      },
      'Delete',
    ),
  ];
}
