// Call for Help version 2 over HTTP: call button hubs (B1, B2, hub token with any scheme word),
// displays (C9, the display key is the credential) and the location's listing (C7). Each route
// parses, calls its use case and renders the answer.
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { bearerAuth, header, tokenActorOf, type ApiTokens } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { BODY_ERRORS, errorResponses, SERVICE_ERRORS } from '../http/schemas.ts';
import { PRESS_TEXT, pressButton, updateFromButton, type ButtonDeps } from './buttons.ts';
import { createDisplayRequest } from './displays.ts';
import { listRequests } from './list.ts';
import { CfhRequestRecord } from './schemas.ts';
import {
  ButtonUpdateAnswer,
  ButtonUpdateBody,
  ButtonUpdateParams,
  DisplayParams,
  DisplayRequestBody,
  ListQuery,
  PressAnswer,
  PressBody,
  RequestList,
} from './schemas-buttons-displays-list-streams.ts';
import { toButtonRecord, toListedRecord, toRecord } from './views.ts';

export interface ButtonDisplayListRouteDeps extends ButtonDeps {
  apiTokens: ApiTokens;
}

const tags = ['callforhelp'];
const hubSecurity = [{ hubToken: [] }];
const bearer = [{ bearerToken: [] }];

/**
 * The hub token (B1, B2): `Authorization: <scheme> <token>` with the hub vendor's own scheme word
 * (any word), or the token alone; scope `buttons`. The token rules are bearerAuth's.
 */
function hubAuth(tokens: ApiTokens): onRequestAsyncHookHandler {
  const bearerCheck = bearerAuth(tokens, 'buttons');
  return async function (this: unknown, request, reply) {
    const value = header(request, 'authorization');
    const m = value === undefined ? null : /^\s*(?:[^\s]+[ ]+)?([^\s]+)\s*$/.exec(value);
    // Rewritten as a bearer credential so that one check (constant-time, cached, scoped) applies.
    if (m?.[1] !== undefined) request.headers.authorization = `Bearer ${m[1]}`;
    await bearerCheck.call(this as never, request, reply);
  };
}

const hubErrors = errorResponses({
  401: 'missing or invalid hub token',
  403: 'the token lacks the buttons scope',
  422: 'the body is invalid',
  ...BODY_ERRORS,
  ...SERVICE_ERRORS,
});

export async function buttonDisplayListRoutes(fastify: FastifyInstance, deps: ButtonDisplayListRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const hub = hubAuth(deps.apiTokens);

  app.post(
    '/api/callbutton/press',
    {
      onRequest: hub,
      schema: {
        operationId: 'pressCallButton',
        tags: ['callbutton'],
        security: hubSecurity,
        summary: 'A call button was pressed, or reports its voltage (text/plain answers, as hubs parse them)',
        description:
          "A press (button absent or not 0) creates a request with the button's option and answers its message_id. " +
          "`button: 0` with `voltage` records the voltage only; `button: 0` alone does nothing. Within the location's " +
          'call_button_cooldown_seconds of the button\'s last accepted press: 429 with Retry-After and "Please wait N seconds before ' +
          'sending another request!". The Authorization header takes any scheme word before the token.',
        body: PressBody,
        // Deployed hubs post JSON or a form (a body of another type is 415).
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        produces: ['text/plain'],
        response: {
          200: PressAnswer,
          ...hubErrors,
          ...errorResponses({
            404: { description: "call_button_not_found: no button of the token's organization has this device_key", codes: ['call_button_not_found'] },
            429: { description: "the button's cooldown (see Retry-After), or too many refused requests", codes: ['call_button_cooldown', 'too_many_failures'] },
          }),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const number = (v: number | string | undefined) => (v === undefined ? null : Number(v));
      const result = await pressButton(deps, tokenActorOf(request), {
        deviceKey: body.device_key,
        voltage: number(body.voltage),
        button: number(body.button),
      });
      const text = result.kind === 'created' ? result.messageId : PRESS_TEXT[result.kind];
      return reply.type('text/plain; charset=utf-8').send(text);
    },
  );

  app.put(
    '/api/callbutton/:message_id',
    {
      onRequest: hub,
      schema: {
        operationId: 'updateCallButtonRequest',
        tags: ['callbutton'],
        security: hubSecurity,
        summary: 'A long press on the button: complete, close or cancel its own open request',
        description:
          '`completed` needs `reason` (the completion_reason); `close` completes with reason `closed`; `customer_canceled` cancels. ' +
          "A request that is not this button's, or not open: 404 cfh_request_not_found.",
        params: ButtonUpdateParams,
        body: ButtonUpdateBody,
        response: {
          200: ButtonUpdateAnswer,
          ...hubErrors,
          ...errorResponses({
            404: {
              description: 'call_button_not_found, or cfh_request_not_found: not an open request of this button',
              codes: ['call_button_not_found', 'cfh_request_not_found'],
            },
          }),
        },
      },
    },
    async (request) => {
      const { body } = request;
      const row = await updateFromButton(deps, tokenActorOf(request), request.params.message_id, {
        deviceKey: body.device_key,
        updateType: body.update_type,
        reason: body.reason ?? null,
      });
      return { message: 'Success', data: toButtonRecord(row) };
    },
  );

  app.post(
    '/api/callforhelp/displays/:display_key/requests',
    {
      config: { capabilityRoute: true },
      schema: {
        operationId: 'createDisplayRequest',
        tags,
        security: [{}],
        summary: 'A customer asks for help from a display (QR-code page): an option, or a short free text',
        description:
          "The display key is the credential. `option_id` must be one of the display's options; `custom_text` (at most 200 " +
          'characters, when the display allows it) is refused when the profanity filter flags it. A browser (`browser_id`) ' +
          'whose request from this display is still open gets that request again (200). Otherwise one request per display and ' +
          'browser per call_button_cooldown_seconds, at most 5 browsers per client address (IPv6: its /64) per cooldown (at least ' +
          'a minute), and at most 10 requests per display a minute from everyone (429 with Retry-After). Without `browser_id` the ' +
          'client is its address (IPv6: its /64).',
        params: DisplayParams,
        body: DisplayRequestBody,
        response: {
          200: { ...CfhRequestRecord, description: "the browser's request from this display that is still open (nothing created)" },
          201: { ...CfhRequestRecord, description: 'the new request' },
          ...errorResponses({
            404: { description: 'display_not_found: no display has this key', codes: ['display_not_found'] },
            422: 'the body is invalid (browser_id included), an option not of the display, a refused text',
            429: {
              description:
                "display_cooldown: this browser's (or address's) cooldown, or 5 browsers of its address in the window; display_busy: " +
                '10 requests of the display in the last minute (see Retry-After)',
              codes: ['display_cooldown', 'display_busy', 'too_many_failures'],
            },
            503: SERVICE_ERRORS[503],
            ...BODY_ERRORS,
          }),
        },
      },
    },
    async (request, reply) => {
      const { row, created } = await createDisplayRequest(deps, request.params.display_key, {
        optionId: request.body.option_id ?? null,
        customText: request.body.custom_text ?? null,
        browserId: request.body.browser_id ?? null,
        address: request.ip,
      });
      return reply.code(created ? 201 : 200).send(toRecord(row));
    },
  );

  app.get(
    '/api/callforhelp/requests',
    {
      onRequest: bearerAuth(deps.apiTokens, 'cfh'),
      schema: {
        operationId: 'listCfhRequests',
        tags,
        security: bearer,
        summary: "A location's requests, newest first, in pages",
        description:
          '`state`: open (the default: not closed), closed or all; `from` (inclusive) and `to` (exclusive) bound the creation ' +
          'time. Pages of `limit`; the next page is `cursor` = the id of the last request (a full page names it in its Link header). ' +
          "Each is the request record with its option's staff_action. A location of another organization (or outside the token's locations): 404.",
        querystring: ListQuery,
        response: {
          200: RequestList,
          ...errorResponses({
            401: 'missing or invalid bearer token',
            403: 'the token lacks the cfh scope',
            404: 'no such location (for this token)',
            422: 'the query is invalid',
            ...SERVICE_ERRORS,
          }),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const from = q.from === undefined ? null : new Date(q.from);
      const to = q.to === undefined ? null : new Date(q.to);
      if (from !== null && to !== null && from > to)
        throw new AppError(422, 'validation_failed', 'to: must not be before from', { errors: { to: ['must not be before from'] } });
      const page = await listRequests(deps, tokenActorOf(request), {
        locationId: q.location_id,
        state: q.state ?? 'open',
        from,
        to,
        limit: q.limit,
        cursor: q.cursor ?? null,
      });
      if (page.nextCursor !== null) {
        const params = new URLSearchParams({
          location_id: String(q.location_id),
          state: q.state ?? 'open',
          limit: String(q.limit),
          cursor: String(page.nextCursor),
        });
        if (q.from !== undefined) params.set('from', q.from);
        if (q.to !== undefined) params.set('to', q.to);
        void reply.header('link', `</api/callforhelp/requests?${params.toString()}>; rel="next"`);
      }
      return page.requests.map(toListedRecord);
    },
  );
}
