// The console over HTTP (contract section 15): its page and front-end files, what its pages need of
// the session (signing in is section 17's, people/routes.ts), and (api-routes.ts) the reads, actions and live stream its pages use. Every route here is the
// console's own, for its pages; they are hidden from the OpenAPI document except the live stream.
import type { ReportGate } from '../reports/gate.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import type { SpeechSynthesizer } from '../radio/speech/speech.ts';
import { consoleApiRoutes } from './api-routes.ts';
import { roleAt } from '../access/actor.ts';
import { byPerson, sessionValueOf } from '../people/guard.ts';
import type { LiveStreams } from '../live/streams.ts';
import { locationsOf } from './pages.ts';
import { csrfTokenOf, resumeSession } from '../people/sessions.ts';
import { sendWebFile } from '../http/web-files.ts';
import { loadWebFiles, SECURITY_HEADERS } from './static.ts';
import { VALUES_MODULE, valuesModule } from './values.ts';
import { storeDeviceOf, type SignInWays } from './sign-in-options.ts';
import type { StoreDeviceSignIn } from '../people/store-device-sign-in.ts';

export interface ConsoleRouteDeps {
  db: Db;
  clock: Clock;
  publicBaseUrl: string;
  /** CFH_TIMEOUT_SECONDS. */
  timeoutSeconds: number;
  /** CFH_ESCALATION_SECONDS. */
  escalationSeconds: number;
  /** DEVICE_OFFLINE_SECONDS. */
  offlineSeconds: number;
  speech: SpeechSynthesizer;
  /** RADIO_MESSAGE_TTL_SECONDS and RADIO_QUEUE_LIMIT. */
  ttlSeconds: number;
  queueLimit: number;
  live: LiveStreams;
  observeSynthesis?: (seconds: number) => void;
  /** What the sign-in page offers besides badge and PIN (config: OIDC_*, PASSWORD_SIGN_IN). */
  signInWays: SignInWays;
  /** The enrolled store device a browser is (people's badge and PIN sign-in). */
  storeDevices: Pick<StoreDeviceSignIn, 'deviceOf'>;
  reportGate: ReportGate;
}

/**
 * What a page of the service (the console, the staff app) needs of the session beyond getSession:
 * signed out, the ways to sign in here (this browser's store device, if it is one); signed in, the
 * locations it may see, each with the person's role there, and the store device (its "switch user").
 */
export async function sessionView(deps: Pick<ConsoleRouteDeps, 'db' | 'clock' | 'signInWays' | 'storeDevices'>, request: FastifyRequest) {
  const value = sessionValueOf(request);
  const person = value === null ? null : await resumeSession(deps, value, byPerson(request));
  const storeDevice = await storeDeviceOf(deps, request);
  if (value === null || person === null) {
    return { signed_in: false as const, sign_in: { ...deps.signInWays, store_device: storeDevice } };
  }
  return {
    signed_in: true as const,
    person: { id: person.personId, name: person.name, email: person.email },
    must_change_password: person.mustChangePassword,
    store_device_id: person.storeDeviceId,
    store_device: storeDevice,
    organization_id: person.reach.organizationId,
    locations: (await locationsOf(deps, person)).map((l) => ({ ...l, role: roleAt(person, l.id) })),
    csrf_token: csrfTokenOf(value),
  };
}

function secured(reply: FastifyReply): FastifyReply {
  return reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-store' });
}

export async function consoleRoutes(fastify: FastifyInstance, deps: ConsoleRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const files = loadWebFiles();
  files.set(VALUES_MODULE, valuesModule());

  const page = files.get('index.html');
  if (page === undefined) throw new Error('the console front end (src/console/web/index.html) is missing');
  const sendPage = async (_request: unknown, reply: FastifyReply) =>
    reply
      .headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache', etag: page.etag })
      .type(page.type)
      .send(page.body);
  app.get('/console', { schema: { hide: true } }, sendPage);
  app.get('/console/', { schema: { hide: true } }, sendPage);

  app.get('/console/assets/*', { schema: { hide: true } }, async (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    const file = files.get(name);
    if (file === undefined) return reply.code(404).send({ message: 'no such file', code: 'not_found' });
    return sendWebFile(request, reply.headers(SECURITY_HEADERS), file);
  });

  // What the console's pages need of the session beyond getSession (sessionView). Signing in and
  // out is section 17's (/api/session).
  app.get('/console/api/session', { schema: { hide: true } }, async (request, reply) => secured(reply).send(await sessionView(deps, request)));

  await app.register(consoleApiRoutes, deps);
}
