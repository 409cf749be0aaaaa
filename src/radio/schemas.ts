// TypeBox schemas of the radio operations (R1, R2, the transcripts): validation, the handlers'
// types and the OpenAPI document.
import { Type } from 'typebox';
import { errorResponses, JSON_STORABLE_CHAR, JsonStorableText, nullable, oneOf, withErrorText } from '../http/schemas.ts';
import { MAX_MESSAGING_BODY, MAX_TEXT_LENGTH } from './rules.ts';

/** Text to be spoken (R1, R2, the console's announcement): something to say, and nothing that jsonb
 * or the engines cannot take (no NUL, no lone surrogate). Two patterns, each linear: one pattern
 * saying both would backtrack quadratically on a long text. */
export const SpeakableText = (description: string, maxLength = MAX_TEXT_LENGTH) =>
  Type.String({ minLength: 1, maxLength, pattern: String.raw`\S`, allOf: [{ pattern: `^${JSON_STORABLE_CHAR}*$` }], description });
const EdgeId = JsonStorableText({ minLength: 1, maxLength: 100, description: 'The radio edge device id' });
const MessageId = (description: string) => JsonStorableText({ minLength: 1, maxLength: 100, description });

/** The refusals of R1 and the transcripts (R2 answers some of them differently). */
export const RADIO_ERRORS = errorResponses({
  403: "missing or invalid credential, a token without the radio scope or of another organization, another edge device's key",
  404: 'unknown edge device (told only to a caller with a valid credential)',
  422: { description: 'the body or query is invalid; text over the limit', codes: ['validation_failed', 'text_too_long', 'nothing_to_say'] },
  429: 'too many refused requests from this client; see Retry-After',
  503: {
    description: 'the speech engine is busy or too slow, or the database is unavailable; see Retry-After',
    codes: ['unavailable', 'speech_busy', 'speech_timeout'],
  },
});
/** The refusals of R3 and the audio it links to: another organization's edge device (or message)
 * is answered as one that does not exist (contract section 2). */
export const TIMELINE_ERRORS = {
  ...RADIO_ERRORS,
  ...errorResponses({
    403: "missing or invalid credential, a token without the radio scope, another edge device's key",
    404: 'unknown edge device or message, or one of another organization (or of a location the token is not limited to)',
  }),
};
export const RADIO_BODY_ERRORS = errorResponses({
  400: 'the body cannot be parsed',
  413: 'the body is too large',
  415: 'unsupported content type (send application/json)',
});
export const MESSAGING_ERRORS = errorResponses({
  403: "missing or bad signature, unknown account, an account of another organization than the edge device's",
  404: 'unknown edge device (told only to a correctly signed request)',
  415: 'the body is not application/x-www-form-urlencoded',
});

/** Every refusal of R1 and R2 (contract section 3): their bodies also carry `error`. */
export const PLAY_ERRORS = withErrorText({ ...RADIO_BODY_ERRORS, ...RADIO_ERRORS });
export const MESSAGING_PLAY_ERRORS = withErrorText({ ...RADIO_BODY_ERRORS, ...RADIO_ERRORS, ...MESSAGING_ERRORS });

export const EDGE_SECURITY: Record<string, string[]>[] = [{ edgeApiKey: [] }, { bearerToken: [] }];

export const Played = Type.Object(
  {
    success: Type.Boolean(),
    message_id: Type.String({
      description:
        "Id of the message; the play message and the ack carry it. A repeat (same text within 10 s, or an R2 MessageSid seen before) answers the first one's",
    }),
  },
  { title: 'RadioPlayed' },
);

export const PlayBody = Type.Object(
  {
    edgeId: EdgeId,
    text: SpeakableText(`Text converted to speech (at most ${MAX_TEXT_LENGTH} characters)`),
    actor: JsonStorableText({ minLength: 1, maxLength: 200, description: 'Name of the actor responsible for the audio' }),
    process: Type.Boolean({ default: false, description: "When true, the edge device's voice handlers run over the message" }),
    priority: Type.Optional(oneOf(['normal', 'urgent'], { description: 'urgent: sent before normal messages queued earlier (default normal)' })),
  },
  { title: 'RadioPlayBody' },
);

export const MessagingParams = Type.Object({ edgeId: EdgeId });

export const MessagingBody = Type.Object(
  {
    AccountSid: JsonStorableText({ minLength: 34, maxLength: 34, description: 'The provider account (34 characters)' }),
    Body: SpeakableText(`The message text: its first ${MAX_TEXT_LENGTH} characters are spoken, the whole is recorded`, MAX_MESSAGING_BODY),
    MessageSid: Type.Optional(
      JsonStorableText({ minLength: 1, maxLength: 100, description: "The provider's id of the message: a second webhook with it is a replay" }),
    ),
    From: JsonStorableText({ minLength: 1, maxLength: 100, description: 'Sender phone number' }),
    To: JsonStorableText({ minLength: 1, maxLength: 100, description: 'Recipient phone number' }),
  },
  { description: 'The provider sends more fields; all of them are signed, and ignored otherwise', title: 'RadioMessagingForm' },
);

export const Transcript = Type.Object(
  {
    message_id: Type.String(),
    edge_id: Type.String(),
    source: oneOf(['generic', 'messaging'], { description: 'generic: R1; messaging: R2' }),
    actor: Type.String(),
    text: Type.String({ description: 'The text as received' }),
    spoken_text: Type.String({ description: 'The text as spoken, after the voice handlers' }),
    handlers: Type.Array(Type.String()),
    from: nullable(Type.String()),
    to: nullable(Type.String()),
    account_sid: nullable(Type.String()),
    mime: Type.Literal('audio/wav'),
    audio_bytes: Type.Integer(),
    duration_ms: Type.Integer(),
    audio_url: Type.String({ description: 'Path of the WAV (same credentials)' }),
    created_at: Type.String(),
  },
  { title: 'Transcript' },
);

export const TranscriptList = Type.Object({ transcripts: Type.Array(Transcript), next_before: nullable(Type.String()) }, { title: 'TranscriptList' });

export const TranscriptsParams = Type.Object({ edgeId: EdgeId });

export const TranscriptsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  before: Type.Optional(MessageId('The last message_id of the previous page')),
});

export const TranscriptAudioParams = Type.Object({ edgeId: EdgeId, messageId: MessageId('The message_id of the transcript') });

/** The WAV itself, not JSON. */
export const WavResponse = { description: 'The WAV', content: { 'audio/wav': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } } };

// R3: what an edge device played and heard.

export const TimelineQuery = Type.Object(
  {
    edge_id: EdgeId,
    from: Type.Optional(Type.String({ maxLength: 40, description: 'Earliest time (inclusive), ISO 8601, e.g. 2026-01-15T09:00:00Z' })),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'Latest time (inclusive), ISO 8601' })),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'next_cursor of the previous page' })),
  },
  { title: 'RadioTranscriptsQuery' },
);

export const TimelineEntry = Type.Object(
  {
    kind: oneOf(['played', 'heard']),
    id: Type.String({ description: 'played: the message_id; heard: the heard_id the edge device gave' }),
    edge_id: Type.String(),
    at: Type.String({ description: 'played: when it was queued; heard: when the service received it (UTC, six fractional digits)' }),
    text: Type.String({ description: 'played: the text as received (R2: whole); heard: what the edge device recognized' }),
    spoken_text: nullable(Type.String({ description: 'played: what was spoken' })),
    source: nullable(oneOf(['generic', 'messaging', 'announcement', 'confirmation'])),
    actor: nullable(Type.String()),
    priority: nullable(oneOf(['normal', 'urgent'])),
    expires_at: nullable(Type.String()),
    status: Type.String({
      description:
        'played: queued, played, expired or dropped; heard: what came of it (claimed, on_the_way, nothing_waiting, none, refused, closed, disabled, invalid)',
    }),
    duration_ms: nullable(Type.Integer()),
    audio_url: nullable(Type.String({ description: 'played: the WAV (same credentials), while it is kept' })),
    speaker: nullable(Type.String()),
    heard_at: nullable(Type.String({ description: 'heard: when the edge device heard it, as it said' })),
    intent: nullable(oneOf(['claim', 'on_the_way', 'none'])),
    cfh_request_id: nullable(Type.Integer()),
    reply_message_id: nullable(Type.String({ description: 'heard: the confirmation played on the air' })),
  },
  { title: 'RadioTranscriptEntry' },
);

export const Timeline = Type.Object(
  {
    transcripts: Type.Array(TimelineEntry),
    next_cursor: nullable(Type.String({ description: 'The cursor of the next page; null on the last one' })),
  },
  { title: 'RadioTranscripts' },
);

export const MessageAudioParams = Type.Object({ message_id: MessageId('The message_id of a played message') }, { title: 'RadioMessageAudioParams' });
