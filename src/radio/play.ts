// Playing text on an edge device (R1, R2): who may, then one path for both once the caller is
// allowed: voice handlers on the text, synthesis, the chime mixed into the samples, the WAV encoded
// once, then in one transaction the message with its audio (and transcript if kept) and the play
// message in the device outbox, which carries a reference to the audio rather than a copy.
import crypto from 'node:crypto';
import { tokenOf, type Actor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/db.ts';
import { enqueueJob } from '../jobs/queue.ts';
import { isoMicros } from '../db/timestamps.ts';
import { discardBeyondLimit, enqueueDeviceMessage } from '../devices/outbox.ts';
import { edgePlayTopic, playMessage } from '../devices/wire.ts';
import { AppError } from '../http/errors.ts';
import { edgeForActor, signedMessagingAccount, type SignedForm } from './access.ts';
import { withChime } from './chime.ts';
import { handlersFor, MAX_TEXT_LENGTH, spokenTextOf } from './rules.ts';
import { findDuplicate, insertRadioEvents, lockEdgeQueue } from './queue-store.ts';
import { SpeechBusyError, SpeechInputError, SpeechTimeoutError, type SpeechSamples, type SpeechSynthesizer } from './speech/speech.ts';
import { durationMs, encodeWav } from './speech/wav.ts';
import { findEdge, insertPlay, type Credential, type Edge, type PlaySource, type VoiceHandler } from './store.ts';

/** The job that gives up a play not played by its expires_at. */
export const RADIO_EXPIRE_JOB = 'radio.expire';

export interface PlayRequest {
  edge: Edge;
  source: PlaySource;
  /** As received: recorded whole, and compared for duplicates. */
  text: string;
  /** What the voice handlers and the engine get (R2: the first 500 characters); default: text. */
  speak?: string;
  actor: string;
  process: boolean;
  credential: Credential;
  apiTokenId: number | null;
  messaging: { accountSid: string; from: string; to: string } | null;
  priority?: 'normal' | 'urgent';
  messageSid?: string | null;
  /** Language of the text ("en", "fr"); default English. */
  language?: string;
  cfh?: { requestId: number; status: string } | null;
}

/** A play's answer: its message_id, or the first one's when it repeats it (duplicate or replay). */
export interface Queued {
  messageId: string;
  duplicate: boolean;
}

export interface PlayDeps {
  db: Db;
  clock: Clock;
  speech: SpeechSynthesizer;
  /** Told how long each synthesis took (the speech synthesis histogram of /metrics). */
  observeSynthesis?: (seconds: number) => void;
  /** RADIO_MESSAGE_TTL_SECONDS and RADIO_QUEUE_LIMIT. */
  ttlSeconds: number;
  queueLimit: number;
}

/** The speech engine's refusals as the contract's errors; anything else is the service's fault. */
export function speechError(err: unknown): unknown {
  if (err instanceof SpeechBusyError) {
    return new AppError(503, 'speech_busy', 'the speech engine is busy, try again shortly', { headers: { 'retry-after': String(err.retryAfterSeconds) } });
  }
  if (err instanceof SpeechTimeoutError) {
    return new AppError(503, 'speech_timeout', 'the speech engine did not finish in time, try again shortly', { headers: { 'retry-after': '2' } });
  }
  if (err instanceof SpeechInputError) {
    return new AppError(422, err.reason === 'too_long' ? 'text_too_long' : 'unspeakable_text', err.message, { errors: { text: [err.message] } });
  }
  return err;
}

/** R1: the edge device's own key or a token of its organization with the radio scope. */
export async function playText(
  deps: PlayDeps,
  actor: Actor,
  body: { edgeId: string; text: string; actor: string; process: boolean; priority?: 'normal' | 'urgent' | undefined },
): Promise<Queued> {
  const edge = await edgeForActor(deps.db, actor, body.edgeId);
  return playOnEdge(deps, {
    edge,
    source: 'generic',
    text: body.text,
    actor: body.actor,
    process: body.process,
    priority: body.priority ?? 'normal',
    credential: actor.kind === 'device' ? 'edge_key' : 'token',
    apiTokenId: tokenOf(actor),
    messaging: null,
  });
}

/** R2: a text message, signed by the provider for an account of the edge device's organization. */
export async function playMessaging(
  deps: PlayDeps,
  edgeId: string,
  form: SignedForm & { fields: { AccountSid: string; Body: string; From: string; To: string; MessageSid?: string | undefined } },
): Promise<Queued> {
  const { fields } = form;
  const account = await signedMessagingAccount(deps.db, form, fields.AccountSid);
  const edge = await findEdge(deps.db, edgeId);
  if (edge === null) throw new AppError(404, 'not_found', 'edge device not found');
  if (edge.organizationId !== account.organizationId) throw new AppError(403, 'forbidden', "the account is not of this edge device's organization");
  return playOnEdge(deps, {
    // R2 speaks the first MAX_TEXT_LENGTH characters (whole code points) and records the whole text.
    edge,
    source: 'messaging',
    text: fields.Body,
    speak: Array.from(fields.Body).slice(0, MAX_TEXT_LENGTH).join(''),
    actor: fields.From,
    process: true,
    messageSid: fields.MessageSid ?? null,
    credential: 'messaging_signature',
    apiTokenId: null,
    messaging: { accountSid: account.accountSid, from: fields.From, to: fields.To },
  });
}

/** Voice handlers, synthesis, chime: the audio of a play, encoded once. */
export async function prepareAudio(
  deps: Pick<PlayDeps, 'speech' | 'observeSynthesis'>,
  request: PlayRequest,
): Promise<{ spokenText: string; handlers: VoiceHandler[]; wav: Buffer; durationMs: number }> {
  const handlers = handlersFor(request.edge, request.process);
  // No synthesis is longer than R1 accepts, whoever asks for it (an answer, an announcement).
  const spokenText = Array.from(spokenTextOf(request.speak ?? request.text, handlers))
    .slice(0, MAX_TEXT_LENGTH)
    .join('');
  let speech: SpeechSamples;
  const started = performance.now();
  try {
    speech = await deps.speech.synthesizeSamples(spokenText, request.language ?? 'en', `org:${request.edge.organizationId}`);
  } catch (err) {
    throw speechError(err);
  } finally {
    deps.observeSynthesis?.((performance.now() - started) / 1000);
  }
  const samples = handlers.includes('chime') ? withChime(speech.samples, speech.sampleRate) : speech.samples;
  return { spokenText, handlers, wav: encodeWav(samples, speech.sampleRate), durationMs: durationMs(samples, speech.sampleRate) };
}

/**
 * In the caller's transaction: the play queued for the edge device, unless it repeats one (the same
 * text within seconds, or an R2 MessageSid seen before: the first message_id, and a "duplicate"
 * event); then the edge device's queue kept within its bound ("dropped" events) and the message's
 * expiry asked for (a job at expires_at, which gives it up with an "expired" event if unplayed).
 */
export async function queuePlay(
  q: Tx,
  deps: Pick<PlayDeps, 'ttlSeconds' | 'queueLimit'>,
  request: PlayRequest,
  audio: { spokenText: string; handlers: VoiceHandler[]; wav: Buffer; durationMs: number },
  now: Date,
): Promise<Queued> {
  const edgeId = request.edge.edgeId;
  const repeated = await answerRepeat(q, request, now);
  if (repeated !== null) return repeated;
  const messageId = crypto.randomUUID();
  const priority = request.priority ?? 'normal';
  const expiresAt = new Date(now.getTime() + deps.ttlSeconds * 1000);
  await insertPlay(q, {
    messageId,
    edge: request.edge,
    source: request.source,
    actor: request.actor,
    text: request.text,
    spokenText: audio.spokenText,
    processed: request.process,
    handlers: audio.handlers,
    credential: request.credential,
    apiTokenId: request.apiTokenId,
    messaging: request.messaging,
    wav: audio.wav,
    durationMs: audio.durationMs,
    keepTranscript: audio.handlers.includes('transcript'),
    createdAt: now,
    priority,
    expiresAt,
    messageSid: request.messageSid ?? null,
    truncated: request.speak !== undefined && request.speak !== request.text,
    cfh: request.cfh ?? null,
  });
  await enqueueDeviceMessage(
    q,
    {
      topic: edgePlayTopic(edgeId),
      payload: playMessage({
        messageId,
        spokenText: audio.spokenText,
        actor: request.actor,
        queuedAt: isoMicros(now),
        expiresAt: isoMicros(expiresAt),
        priority,
      }),
      key: messageId,
      audioMessageId: messageId,
      expiresAt,
      priority: priority === 'urgent' ? 1 : 0,
    },
    now,
  );
  // Beyond the bound the oldest normal plays go first (urgent ones only when none is normal).
  const dropped = await discardBeyondLimit(q, edgePlayTopic(edgeId), deps.queueLimit, now);
  await insertRadioEvents(q, 'dropped', dropped, now, { reason: 'queue_full' });
  await enqueueJob(q, RADIO_EXPIRE_JOB, { message_id: messageId }, expiresAt);
  return { messageId, duplicate: false };
}

/** Under the edge's queue lock: the first message_id when this play repeats one (and its
 * "duplicate" event), else null. The lock is held to the end of the caller's transaction. */
async function answerRepeat(q: Tx, request: PlayRequest, now: Date): Promise<Queued | null> {
  await lockEdgeQueue(q, request.edge.edgeId);
  const repeated = await findDuplicate(q, request.edge.edgeId, request.text, request.messageSid ?? null, now);
  if (repeated === null) return null;
  await insertRadioEvents(q, 'duplicate', [repeated.messageId], now, { reason: repeated.reason });
  return { messageId: repeated.messageId, duplicate: true };
}

export async function playOnEdge(deps: PlayDeps, request: PlayRequest): Promise<Queued> {
  // A repeat is answered before any synthesis, confirmed under the queue's lock at the same
  // instant; one that stopped being a repeat meanwhile is spoken like any other play.
  const now = deps.clock.now();
  const early = await findDuplicate(deps.db, request.edge.edgeId, request.text, request.messageSid ?? null, now);
  if (early !== null) {
    const repeated = await deps.db.tx((q) => answerRepeat(q, request, now));
    if (repeated !== null) return repeated;
  }
  const audio = await prepareAudio(deps, request);
  return deps.db.tx((q) => queuePlay(q, deps, request, audio, deps.clock.now()));
}
