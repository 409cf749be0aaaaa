// The staff app over HTTP (contract section 19): its shell (one page for /staff and /staff/r/{id}),
// its manifest, service worker and files, and what it needs beyond the console's API, whose reads,
// steps and live stream it shares (src/console/api-routes.ts): the session with its languages, one
// request by its message_id (the link of chat cards), and scanning a request's code (scanCfhRequest).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { recordArrival } from '../cfh/arrival.ts';
import { requestStatus } from '../cfh/requests.ts';
import { toStatusView } from '../cfh/views.ts';
import { staffOf } from '../console/actions.ts';
import { visibleLocation } from '../console/pages.ts';
import type { ConsoleRouteDeps } from '../console/routes.ts';
import { SECURITY_HEADERS } from '../console/static.ts';
import { BODY_ERRORS, errorResponses, SERVICE_ERRORS, StorableText, Timestamp } from '../http/schemas.ts';
import { sendWebFile } from '../http/web-files.ts';
import { answersUncached, changingWithSession, personAuth, personOf } from '../people/guard.ts';
import { staffSession } from './session.ts';
import { loadStaffFiles } from './static.ts';

// The console's, without its reports (the app has none).
export type StaffRouteDeps = Omit<ConsoleRouteDeps, 'reportGate'>;

const MessageId = Type.String({ minLength: 1, maxLength: 200 });

export async function staffRoutes(fastify: FastifyInstance, deps: StaffRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const files = loadStaffFiles();
  const shell = files.get('index.html');
  if (shell === undefined) throw new Error('the staff app (src/staff/web/index.html) is missing');

  const sendShell = async (request: FastifyRequest, reply: FastifyReply) => sendWebFile(request, reply.headers(SECURITY_HEADERS), shell);
  // /staff/ is the app's scope (its manifest's and service worker's): /staff goes there.
  app.get('/staff', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/staff/', 302));
  app.get('/staff/', { schema: { hide: true } }, sendShell);
  app.get('/staff/r/:message_id', { schema: { hide: true, params: Type.Object({ message_id: MessageId }) } }, sendShell);

  // The service worker and the manifest sit at /staff/ so that the worker's scope is the whole app.
  for (const name of ['sw.js', 'manifest.webmanifest']) {
    const file = files.get(name);
    if (file === undefined) throw new Error(`the staff app's ${name} is missing`);
    app.get(`/staff/${name}`, { schema: { hide: true } }, async (request, reply) => sendWebFile(request, reply.headers(SECURITY_HEADERS), file));
  }
  app.get('/staff/assets/*', { schema: { hide: true } }, async (request, reply) => {
    const file = files.get((request.params as { '*': string })['*']);
    if (file === undefined) return reply.code(404).send({ message: 'no such file', code: 'not_found' });
    return sendWebFile(request, reply.headers(SECURITY_HEADERS), file);
  });

  await app.register(async (plugin) => {
    const api = plugin.withTypeProvider<TypeBoxTypeProvider>();
    answersUncached(api);
    api.get('/staff/api/session', { schema: { hide: true } }, async (request) => staffSession(deps, request));

    // One request for /staff/r/{message_id}: where it is, so the app opens that store's queue on it.
    api.get(
      '/staff/api/requests/:message_id',
      { onRequest: personAuth(deps), schema: { hide: true, params: Type.Object({ message_id: MessageId }) } },
      async (request) => {
        const person = personOf(request);
        const row = await requestStatus(deps, person, request.params.message_id);
        await visibleLocation(deps, person, row.location_id);
        return toStatusView(row, 'staff');
      },
    );

    api.post(
      '/staff/api/cfh/:message_id/scan',
      {
        onRequest: changingWithSession(deps),
        schema: {
          operationId: 'scanCfhRequest',
          tags: ['staff'],
          security: [{ session: [] }],
          summary: "Record the associate's arrival by the request's scan code",
          description:
            'Contract section 19: a request whose option, call button or display has `require_scan` is completed from the console or ' +
            'the staff app only after the associate scanned (or typed) the code printed on the button or beside the display. A right ' +
            'code sets `employee_has_arrived` and `employee_arrived_at` and emits a `callforhelp` event with status `arrived`; scanning ' +
            'again answers the first arrival. A wrong code is 422 and changes nothing. Needs a person’s session with its CSRF token.',
          params: Type.Object({ message_id: MessageId }),
          body: Type.Object({
            code: StorableText({ minLength: 1, maxLength: 200, description: 'the scan code, as scanned or typed (case, spaces and dashes do not matter)' }),
          }),
          response: {
            200: Type.Object({
              message_id: Type.String(),
              employee_has_arrived: Type.Literal(true),
              employee_arrived_at: Timestamp,
            }),
            ...errorResponses({
              ...BODY_ERRORS,
              401: 'no live session',
              403: 'a foreign page, or no CSRF token (csrf_failed)',
              404: 'no such request the session may see',
              409: {
                description:
                  'the request is closed (cfh_request_closed), or needs no scan (scan_not_required). Until a scan succeeds, completing ' +
                  'the request from a person’s session (the console, the staff app) answers 409 scan_required',
                codes: ['cfh_request_closed', 'scan_not_required', 'scan_required'],
              },
              422: 'the code is not this request’s (errors.code)',
              ...SERVICE_ERRORS,
            }),
          },
        },
      },
      async (request) => {
        const person = personOf(request);
        return recordArrival(deps, person, request.params.message_id, request.body.code, staffOf(person));
      },
    );
  });
}
