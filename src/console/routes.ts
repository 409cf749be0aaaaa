// The console over HTTP (contract section 15): its page and front-end files, signing in and out,
// and (api-routes.ts) the reads, actions and live stream its pages use. Every route here is the
// console's own, for its pages; they are hidden from the OpenAPI document except the live stream.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import type { SpeechSynthesizer } from '../radio/speech/speech.ts';
import { StorableText } from '../http/schemas.ts';
import { consoleApiRoutes } from './api-routes.ts';
import { byPerson, csrfCheck, sameOrigin, sessionActorOf, sessionAuth, sessionCookie, sessionCookieHeader } from './guard.ts';
import type { LiveStreams } from '../live/streams.ts';
import { sessionTag } from './live.ts';
import { locationsOf } from './pages.ts';
import { csrfTokenOf, resumeSession, signIn, signOut } from './sessions.ts';
import { sendWebFile } from '../http/web-files.ts';
import { loadWebFiles, SECURITY_HEADERS } from './static.ts';
import { VALUES_MODULE, valuesModule } from './values.ts';

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
}

const SignIn = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 512 }),
  name: StorableText({ minLength: 1, maxLength: 80, description: 'who is signing in: the name that claims and completes requests' }),
});

function secured(reply: FastifyReply): FastifyReply {
  return reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-store' });
}

export async function consoleRoutes(fastify: FastifyInstance, deps: ConsoleRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const files = loadWebFiles();
  files.set(VALUES_MODULE, valuesModule());
  const secure = new URL(deps.publicBaseUrl).protocol === 'https:';

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

  const origin = sameOrigin(deps.publicBaseUrl);

  app.post('/console/api/session', { onRequest: origin, schema: { hide: true, body: SignIn } }, async (request, reply) => {
    const session = await signIn(deps, request.body.token, request.body.name.trim() || 'Staff');
    return secured(reply).header('set-cookie', sessionCookieHeader(session, secure)).send({ signed_in: true });
  });

  // Asking whether one is signed in is not a refused credential: it answers 200 either way, so a
  // page load never counts towards the brute-force guard.
  app.get('/console/api/session', { schema: { hide: true } }, async (request, reply) => {
    const cookie = sessionCookie(request);
    const identity = cookie === null ? null : await resumeSession(deps, cookie, byPerson(request));
    if (cookie === null || identity === null) return secured(reply).send({ signed_in: false });
    return secured(reply).send({
      signed_in: true,
      staff_name: identity.staffName,
      organization_id: identity.reach.organizationId,
      locations: await locationsOf(deps, identity),
      csrf_token: csrfTokenOf(cookie),
    });
  });

  app.post('/console/api/session/end', { onRequest: [origin, sessionAuth(deps), csrfCheck()], schema: { hide: true } }, async (request, reply) => {
    await signOut(deps, sessionCookie(request) ?? '');
    // This instance's streams of the session end now; another instance's at their next check.
    deps.live.endTagged(sessionTag(sessionActorOf(request).sessionId));
    return secured(reply).header('set-cookie', sessionCookieHeader(null, secure)).send({ signed_in: false });
  });

  await app.register(consoleApiRoutes, { ...deps, origin });
}
