// TypeBox schemas of the radio operations (R1, R2, the transcripts): validation, the handlers'
// types and the OpenAPI document.
import { Type } from 'typebox';
import { errorResponses, JSON_STORABLE_CHAR, JsonStorableText, nullable, oneOf } from '../http/schemas.ts';
import { MAX_TEXT_LENGTH } from './rules.ts';

// Two patterns, each linear: one pattern saying both would backtrack quadratically on a long text.
const SpeakableText = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH, pattern: String.raw`\S`, allOf: [{ pattern: `^${JSON_STORABLE_CHAR}*$` }], description });
const EdgeId = JsonStorableText({ minLength: 1, maxLength: 100, description: 'The radio edge device id' });
const MessageId = (description: string) => JsonStorableText({ minLength: 1, maxLength: 100, description });

/** The refusals of R1 and the transcripts (R2 answers some of them differently). */
export const RADIO_ERRORS = errorResponses({
  403: 'missing or invalid credential, a token without the radio scope or of another organization, another edge device\'s key',
  404: 'unknown edge device (told only to a caller with a valid credential)',
  422: { description: 'the body or query is invalid; text over the limit', codes: ['validation_failed', 'text_too_long', 'nothing_to_say'] },
  429: 'too many refused requests from this client; see Retry-After',
  503: { description: 'the speech engine is busy or too slow, or the database is unavailable; see Retry-After', codes: ['unavailable', 'speech_busy', 'speech_timeout'] },
});
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

export const EDGE_SECURITY: Record<string, string[]>[] = [{ edgeApiKey: [] }, { bearerToken: [] }];

export const Played = Type.Object({
  success: Type.Boolean(),
  message_id: Type.String({ description: 'Id of the message; the play message and the ack carry it' }),
}, { title: 'Played' });

export const PlayBody = Type.Object({
  edgeId: EdgeId,
  text: SpeakableText(`Text converted to speech (at most ${MAX_TEXT_LENGTH} characters)`),
  actor: JsonStorableText({ minLength: 1, maxLength: 200, description: 'Name of the actor responsible for the audio' }),
  process: Type.Boolean({ default: false, description: "When true, the edge device's voice handlers run over the message" }),
});

export const MessagingParams = Type.Object({ edgeId: EdgeId });

export const MessagingBody = Type.Object(
  {
    AccountSid: JsonStorableText({ minLength: 34, maxLength: 34, description: 'The provider account (34 characters)' }),
    Body: SpeakableText('The message text, spoken'),
    From: JsonStorableText({ minLength: 1, maxLength: 100, description: 'Sender phone number' }),
    To: JsonStorableText({ minLength: 1, maxLength: 100, description: 'Recipient phone number' }),
  },
  { description: 'The provider sends more fields; all of them are signed, and ignored otherwise' },
);

export const Transcript = Type.Object({
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
}, { title: 'Transcript' });

export const TranscriptList = Type.Object({ transcripts: Type.Array(Transcript), next_before: nullable(Type.String()) }, { title: 'TranscriptList' });

export const TranscriptsParams = Type.Object({ edgeId: EdgeId });

export const TranscriptsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  before: Type.Optional(MessageId('The last message_id of the previous page')),
});

export const TranscriptAudioParams = Type.Object({ edgeId: EdgeId, messageId: MessageId('The message_id of the transcript') });

/** The WAV itself, not JSON. */
export const WavResponse = { description: 'The WAV', content: { 'audio/wav': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } } };
