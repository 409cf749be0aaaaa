// Radio (R1, R2 and the transcripts): text to speech, played on a store's radio edge device.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import type { Actor } from '../access/actor.ts';
import type { ApiTokens } from '../http/auth.ts';
import { AppError } from '../http/errors.ts';
import { messagingSignatureOf, radioActor } from './access.ts';
import { playMessaging, playText, type PlayDeps } from './play.ts';
import { MAX_TEXT_LENGTH } from './rules.ts';
import {
  EDGE_SECURITY,
  MESSAGING_PLAY_ERRORS,
  MessagingBody,
  MessagingParams,
  Played,
  PlayBody,
  PLAY_ERRORS,
  RADIO_ERRORS,
  TranscriptAudioParams,
  MessageAudioParams,
  Timeline,
  TIMELINE_ERRORS,
  TimelineQuery,
  TranscriptList,
  TranscriptsParams,
  TranscriptsQuery,
  WavResponse,
} from './schemas.ts';
import { playedWav, radioTimeline, transcriptPage, transcriptWav } from './transcripts.ts';
import { playedView, timelineView, transcriptListView } from './views.ts';

export interface RadioRouteDeps extends PlayDeps {
  /** PUBLIC_BASE_URL: the provider signs the public URL of R2, not the one the service sees. */
  publicBaseUrl: string;
  apiTokens: ApiTokens;
}

function isForm(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** The actor the onRequest hook found; a route without the hook has none. */
function actorOf(request: FastifyRequest): Actor {
  if (request.actor === null) throw new AppError(403, 'forbidden', 'a credential is required');
  return request.actor;
}

export async function radioRoutes(fastify: FastifyInstance, deps: RadioRouteDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  // Credentials are checked before the body is validated: a caller without one gets 403, never a
  // hint about the body or the edge device.
  const authenticate = async (request: FastifyRequest) => {
    request.actor = await radioActor(deps.db, deps.apiTokens, request);
  };

  // R1 and R2's refusals also carry `error` (contract section 3): the handler fills it for routes so
  // configured, and their error responses (PLAY_ERRORS) declare it.
  const config = { errorText: true };

  app.post(
    '/webhooks/incoming/generic',
    {
      onRequest: authenticate,
      config,
      schema: {
        operationId: 'playRadioText',
        tags: ['radio'],
        summary: 'Play text as audio on a radio edge device',
        description:
          "Credential: the edge device's own key in `api-key`, or a bearer token with the `radio` scope of the edge device's organization. " +
          "Missing or invalid credential, a token without the scope or of another organization, another edge device's key: 403. " +
          `Unknown edge device: 404. Text over ${MAX_TEXT_LENGTH} characters: 422. Speech engine busy or too slow: 503 with Retry-After.`,
        security: EDGE_SECURITY,
        body: PlayBody,
        response: { 200: Played, ...PLAY_ERRORS },
      },
    },
    async (request) => {
      const { messageId } = await playText(deps, actorOf(request), request.body);
      return playedView(messageId);
    },
  );

  const messagingSchema = {
    operationId: 'playRadioWebhookMessage',
    tags: ['radio'],
    summary: "Play a text message from a messaging provider's webhook",
    description:
      'Form body (application/x-www-form-urlencoded). Signature in `X-Messaging-Signature` (or `X-Twilio-Signature`): base64 of HMAC-SHA1 keyed with the ' +
      "account's auth token, over PUBLIC_BASE_URL + path + query followed by every form field sorted by name, as name then value. " +
      "Unknown account, an account of another organization than the edge device's, missing or bad signature: 403. Unknown edge device: 404. " +
      'Missing fields: 422. Another content type: 415.',
    security: [{ messagingSignature: [] }],
    consumes: ['application/x-www-form-urlencoded'],
    params: MessagingParams,
    body: MessagingBody,
    response: { 200: Played, ...MESSAGING_PLAY_ERRORS },
  };
  const playMessagingRoute = async (request: FastifyRequest<{ Params: Static<typeof MessagingParams>; Body: Static<typeof MessagingBody> }>) => {
    if (!isForm(request)) throw new AppError(415, 'unsupported_media_type', 'the body must be application/x-www-form-urlencoded');
    // request.url is the path and query exactly as sent, which is what the provider signed: on the
    // alias too, since a provider number configured with it signs the alias's URL.
    const { messageId } = await playMessaging(deps, request.params.edgeId, {
      url: deps.publicBaseUrl + request.url,
      fields: request.body,
      signature: messagingSignatureOf(request),
    });
    return playedView(messageId);
  };
  app.post('/webhooks/incoming/messaging/:edgeId', { config, schema: messagingSchema }, playMessagingRoute);
  // Contract section 1: the URL provider numbers are already configured with; the same operation,
  // left out of the document so that R2 is listed once.
  app.post('/webhooks/incoming/twilio/:edgeId', { config, schema: { ...messagingSchema, hide: true } }, playMessagingRoute);

  app.get(
    '/api/radio/transcripts',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'listRadioTranscripts',
        tags: ['radio'],
        summary: 'What an edge device played and heard, newest first',
        description:
          'R3. Same credentials as playRadioText, but an edge device of another organization (or of a location the token is not limited to) ' +
          'is 404, as one that does not exist. Every played message ' +
          '(R1, R2, announcements, confirmations: with its status queued, played, expired or dropped, and its audio while kept) and every ' +
          'message heard on radio/<edge_id>/heard (with what came of it), within `from`/`to` when given. Pages of `limit`; the next ' +
          'page is `cursor` = `next_cursor`.',
        security: EDGE_SECURITY,
        querystring: TimelineQuery,
        response: { 200: Timeline, ...TIMELINE_ERRORS },
      },
    },
    async (request) => timelineView(await radioTimeline(deps, actorOf(request), request.query)),
  );

  app.get(
    '/api/radio/messages/:message_id/audio',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'getRadioMessageAudio',
        tags: ['radio'],
        summary: 'The WAV of a played message (16-bit PCM mono, 16 kHz), while it is kept',
        description:
          "Same credentials as listRadioTranscripts. Another edge device's key: 403. Unknown, its audio past retention, or a message of " +
          "an edge device of another organization (or location) than the token's: 404.",
        security: EDGE_SECURITY,
        params: MessageAudioParams,
        response: { 200: WavResponse, ...TIMELINE_ERRORS },
      },
    },
    async (request, reply) => {
      const wav = await playedWav(deps, actorOf(request), request.params.message_id);
      return reply.type('audio/wav').send(wav);
    },
  );

  // Before R3: the transcripts of edge devices with the "transcript" voice handler, per edge device.
  // Kept for the clients written against it; listRadioTranscripts lists everything played and heard.
  app.get(
    '/api/radio/edges/:edgeId/transcripts',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'listRadioEdgeTranscripts',
        tags: ['radio'],
        summary: 'Transcripts kept for an edge device (voice handler "transcript"), newest first (superseded by listRadioTranscripts)',
        description: 'Same credentials as playRadioText. Page with `before` = the last message_id of the previous page.',
        security: EDGE_SECURITY,
        params: TranscriptsParams,
        querystring: TranscriptsQuery,
        response: { 200: TranscriptList, ...RADIO_ERRORS },
      },
    },
    async (request) => {
      return transcriptListView(await transcriptPage(deps, actorOf(request), request.params.edgeId, request.query));
    },
  );

  app.get(
    '/api/radio/edges/:edgeId/transcripts/:messageId/audio',
    {
      onRequest: authenticate,
      schema: {
        operationId: 'getRadioTranscriptAudio',
        tags: ['radio'],
        summary: 'The WAV of a transcript (16-bit PCM mono, 16 kHz)',
        description: 'Same credentials as playRadioText.',
        security: EDGE_SECURITY,
        params: TranscriptAudioParams,
        response: { 200: WavResponse, ...RADIO_ERRORS },
      },
    },
    async (request, reply) => {
      const wav = await transcriptWav(deps, actorOf(request), request.params.edgeId, request.params.messageId);
      return reply.type('audio/wav').send(wav);
    },
  );
}
