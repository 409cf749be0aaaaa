// The one path of R1 and R2 once the caller is allowed: voice handlers, synthesis, then in one
// transaction the message row, the transcript (if kept) and the play message in the device outbox.
import crypto from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { enqueueDeviceMessage } from '../devices/outbox.ts';
import { AppError } from '../http/errors.ts';
import { withChime } from './chime.ts';
import { edgePlayTopic, playMessage } from '../devices/wire.ts';
import { isoMicros } from '../db/timestamps.ts';
import { handlersFor, spokenTextOf } from './rules.ts';
import { SpeechBusyError, SpeechInputError, SpeechTimeoutError, type SpeechSynthesizer } from './speech/speech.ts';
import { durationMsOfWav } from './speech/wav.ts';
import { insertMessage, insertTranscript, type Credential, type Edge } from './store.ts';

export interface PlayRequest {
  edge: Edge;
  source: 'generic' | 'messaging';
  text: string;
  actor: string;
  process: boolean;
  credential: Credential;
  apiTokenId: number | null;
  messaging: { accountSid: string; from: string; to: string } | null;
}

export interface PlayDeps {
  db: Db;
  clock: Clock;
  speech: SpeechSynthesizer;
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

export async function playOnEdge(deps: PlayDeps, request: PlayRequest): Promise<{ messageId: string }> {
  const handlers = handlersFor(request.edge, request.process);
  const spokenText = spokenTextOf(request.text, handlers);
  let wav: Buffer;
  try {
    wav = await deps.speech.synthesize(spokenText);
  } catch (err) {
    throw speechError(err);
  }
  if (handlers.includes('chime')) wav = withChime(wav);

  const messageId = crypto.randomUUID();
  const now = deps.clock.now();
  await deps.db.tx(async (q) => {
    await insertMessage(q, {
      messageId, edge: request.edge, source: request.source, actor: request.actor, text: request.text, spokenText,
      processed: request.process, handlers, credential: request.credential, apiTokenId: request.apiTokenId,
      messaging: request.messaging, audioBytes: wav.length, durationMs: durationMsOfWav(wav), createdAt: now,
    });
    if (handlers.includes('transcript')) await insertTranscript(q, messageId, request.edge.edgeId, wav, now);
    await enqueueDeviceMessage(q, { topic: edgePlayTopic(request.edge.edgeId), payload: { ...playMessage({ messageId, spokenText, actor: request.actor, wav, queuedAt: isoMicros(now) }) }, key: messageId }, now);
  });
  return { messageId };
}
