// Radio (R1, R2 and the transcripts): text to speech, played on a store's radio edge device.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Deps } from '../app.ts';
import { AppError, invalid } from '../http/errors.ts';
import { radioCaller, signedMessagingAccount } from './access.ts';
import { playOnEdge } from './play.ts';
import { authorizeEdgeUse, MAX_TEXT_LENGTH } from './rules.ts';
import type { FormFields } from './signature.ts';
import { findEdge, listTranscripts, transcriptAudio, type Edge } from './store.ts';

const ErrorBody = Type.Object({
  message: Type.String(),
  code: Type.String(),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});
const Played = Type.Object({
  success: Type.Boolean(),
  message_id: Type.String({ description: 'Id of the message; the play message and the ack carry it' }),
});
/** Text the database and the device's JSON can hold: no NUL (PostgreSQL text refuses it) and no lone
 * surrogate (jsonb refuses its escape); Ajv reads patterns as Unicode, so a surrogate pair is one
 * character and passes. A refusal is a 422, not an error of the query. */
const STORABLE_CHAR = String.raw`[^\u0000\uD800-\uDFFF]`;
const Storable = (options: { minLength: number; maxLength: number; description: string }) =>
  Type.String({ ...options, pattern: `^${STORABLE_CHAR}*$` });
// Two patterns, each linear: one pattern saying both would backtrack quadratically on a long text.
const SpeakableText = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH, pattern: String.raw`\S`, allOf: [{ pattern: `^${STORABLE_CHAR}*$` }], description });
const EdgeId = Storable({ minLength: 1, maxLength: 100, description: 'The radio edge device id' });

const described = (description: string) => ({ ...ErrorBody, description });
const errors = {
  403: described('missing or invalid credential, a token without the radio scope or of another organization, another edge device\'s key'),
  404: described('unknown edge device (told only to a caller with a valid credential)'),
  422: described('the body or query is invalid; text over the limit'),
  429: described('too many refused requests from this client; see Retry-After'),
  503: described('the speech engine is busy or too slow, or the database is unavailable; see Retry-After'),
};
const bodyErrors = {
  400: described('the body cannot be parsed'),
  413: described('the body is too large'),
  415: described('unsupported content type (send application/json)'),
};

const PlayBody = Type.Object({
  edgeId: EdgeId,
  text: SpeakableText(`Text converted to speech (at most ${MAX_TEXT_LENGTH} characters)`),
  actor: Storable({ minLength: 1, maxLength: 200, description: 'Name of the actor responsible for the audio' }),
  process: Type.Boolean({ default: false, description: "When true, the edge device's voice handlers run over the message" }),
});

const MessagingBody = Type.Object(
  {
    AccountSid: Storable({ minLength: 34, maxLength: 34, description: 'The provider account (34 characters)' }),
    Body: SpeakableText('The message text, spoken'),
    From: Storable({ minLength: 1, maxLength: 100, description: 'Sender phone number' }),
    To: Storable({ minLength: 1, maxLength: 100, description: 'Recipient phone number' }),
  },
  { description: 'The provider sends more fields; all of them are signed, and ignored otherwise' },
);

const Transcript = Type.Object({
  message_id: Type.String(),
  edge_id: Type.String(),
  source: Type.Union([Type.Literal('generic'), Type.Literal('messaging')], { description: 'generic: R1; messaging: R2' }),
  actor: Type.String(),
  text: Type.String({ description: 'The text as received' }),
  spoken_text: Type.String({ description: 'The text as spoken, after the voice handlers' }),
  handlers: Type.Array(Type.String()),
  from: Type.Union([Type.String(), Type.Null()]),
  to: Type.Union([Type.String(), Type.Null()]),
  account_sid: Type.Union([Type.String(), Type.Null()]),
  mime: Type.Literal('audio/wav'),
  audio_bytes: Type.Integer(),
  duration_ms: Type.Integer(),
  audio_url: Type.String({ description: 'Path of the WAV (same credentials)' }),
  created_at: Type.String(),
});

const edgeSecurity: Record<string, string[]>[] = [{ edgeApiKey: [] }, { bearerToken: [] }];

declare module 'fastify' {
  interface FastifyRequest {
    radioCaller: import('./rules.ts').RadioCaller | null;
  }
}

function isForm(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

export async function radioRoutes(fastify: FastifyInstance, deps: Deps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.decorateRequest('radioCaller', null);

  // Credentials are checked before the body is validated: a caller without one gets 403, never a
  // hint about the body or the edge device.
  const authenticate = async (request: FastifyRequest) => {
    request.radioCaller = await radioCaller(deps.db, fastify.apiTokens, request);
  };
  const edgeFor = async (request: FastifyRequest, edgeId: string): Promise<Edge> => {
    const caller = request.radioCaller;
    if (caller === null) throw new AppError(403, 'forbidden', 'a credential is required');
    return authorizeEdgeUse(caller, edgeId, caller.kind === 'token' ? await findEdge(deps.db, edgeId) : null);
  };

  app.post('/webhooks/incoming/generic', {
    onRequest: authenticate,
    schema: {
      operationId: 'playRadioText',
      tags: ['radio'],
      summary: 'Play text as audio on a radio edge device',
      description:
        "Credential: the edge device's own key in `api-key`, or a bearer token with the `radio` scope of the edge device's organization. " +
        'Missing or invalid credential, a token without the scope or of another organization, another edge device\'s key: 403. ' +
        `Unknown edge device: 404. Text over ${MAX_TEXT_LENGTH} characters: 422. Speech engine busy or too slow: 503 with Retry-After.`,
      security: edgeSecurity,
      body: PlayBody,
      response: { 200: Played, ...bodyErrors, ...errors },
    },
  }, async (request) => {
    const body = request.body as Static<typeof PlayBody>;
    const edge = await edgeFor(request, body.edgeId);
    const caller = request.radioCaller;
    const { messageId } = await playOnEdge(deps, {
      edge, source: 'generic', text: body.text, actor: body.actor, process: body.process,
      credential: caller?.kind === 'token' ? 'token' : 'edge_key',
      apiTokenId: caller?.kind === 'token' ? caller.principal.tokenId : null,
      messaging: null,
    });
    return { success: true, message_id: messageId };
  });

  app.post('/webhooks/incoming/messaging/:edgeId', {
    schema: {
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
      params: Type.Object({ edgeId: EdgeId }),
      body: MessagingBody,
      response: {
        200: Played,
        ...bodyErrors,
        ...errors,
        403: described("missing or bad signature, unknown account, an account of another organization than the edge device's"),
        404: described('unknown edge device (told only to a correctly signed request)'),
        415: described('the body is not application/x-www-form-urlencoded'),
      },
    },
  }, async (request) => {
    if (!isForm(request)) throw new AppError(415, 'unsupported_media_type', 'the body must be application/x-www-form-urlencoded');
    const { edgeId } = request.params as { edgeId: string };
    const fields = request.body as FormFields & Static<typeof MessagingBody>;
    const account = await signedMessagingAccount(deps.db, deps.config.publicBaseUrl, request, fields, fields.AccountSid);
    const edge = await findEdge(deps.db, edgeId);
    if (edge === null) throw new AppError(404, 'not_found', 'edge device not found');
    if (edge.organizationId !== account.organizationId) throw new AppError(403, 'forbidden', "the account is not of this edge device's organization");
    const { messageId } = await playOnEdge(deps, {
      edge, source: 'messaging', text: fields.Body, actor: fields.From, process: true,
      credential: 'messaging_signature', apiTokenId: null,
      messaging: { accountSid: account.accountSid, from: fields.From, to: fields.To },
    });
    return { success: true, message_id: messageId };
  });

  app.get('/api/radio/edges/:edgeId/transcripts', {
    onRequest: authenticate,
    schema: {
      operationId: 'listRadioTranscripts',
      tags: ['radio'],
      summary: 'Transcripts kept for an edge device (voice handler "transcript"), newest first',
      description: 'Same credentials as playRadioText. Page with `before` = the last message_id of the previous page.',
      security: edgeSecurity,
      params: Type.Object({ edgeId: EdgeId }),
      querystring: Type.Object({
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
        before: Type.Optional(Storable({ minLength: 1, maxLength: 100, description: 'The last message_id of the previous page' })),
      }),
      response: { 200: Type.Object({ transcripts: Type.Array(Transcript), next_before: Type.Union([Type.String(), Type.Null()]) }), ...errors },
    },
  }, async (request) => {
    const { edgeId } = request.params as { edgeId: string };
    const { limit, before } = request.query as { limit: number; before?: string };
    const edge = await edgeFor(request, edgeId);
    const rows = await listTranscripts(deps.db, edge.edgeId, limit, before ?? null);
    if (rows === null) throw invalid('before', 'is not a message_id of this edge device\'s transcripts');
    const transcripts = rows.map((r) => ({
      message_id: r.message_id, edge_id: r.edge_id, source: r.source, actor: r.actor, text: r.text, spoken_text: r.spoken_text,
      handlers: r.handlers, from: r.from_number, to: r.to_number, account_sid: r.account_sid, mime: 'audio/wav' as const,
      audio_bytes: r.audio_bytes, duration_ms: r.duration_ms, created_at: r.created_at,
      audio_url: `/api/radio/edges/${encodeURIComponent(r.edge_id)}/transcripts/${encodeURIComponent(r.message_id)}/audio`,
    }));
    return { transcripts, next_before: rows.length === limit ? (rows.at(-1)?.message_id ?? null) : null };
  });

  app.get('/api/radio/edges/:edgeId/transcripts/:messageId/audio', {
    onRequest: authenticate,
    schema: {
      operationId: 'getRadioTranscriptAudio',
      tags: ['radio'],
      summary: 'The WAV of a transcript (16-bit PCM mono, 22,050 Hz)',
      description: 'Same credentials as playRadioText.',
      security: edgeSecurity,
      params: Type.Object({ edgeId: EdgeId, messageId: Storable({ minLength: 1, maxLength: 100, description: 'The message_id of the transcript' }) }),
      response: { 200: { description: 'The WAV', content: { 'audio/wav': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } } }, ...errors },
    },
  }, async (request, reply) => {
    const { edgeId, messageId } = request.params as { edgeId: string; messageId: string };
    const edge = await edgeFor(request, edgeId);
    const audio = await transcriptAudio(deps.db, edge.edgeId, messageId);
    if (audio === null) throw new AppError(404, 'not_found', 'transcript not found');
    return reply.type('audio/wav').send(audio);
  });
}
