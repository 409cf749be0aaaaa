// Playing text on an edge device (R1, R2): who may, then one path for both once the caller is
// allowed: voice handlers on the text, synthesis, the chime mixed into the samples, the WAV encoded
// once, then in one transaction the message with its audio (and transcript if kept) and the play
// message in the device outbox, which carries a reference to the audio rather than a copy.
import crypto from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { isoMicros } from '../db/timestamps.ts';
import { enqueueDeviceMessage } from '../devices/outbox.ts';
import { edgePlayTopic, playMessage } from '../devices/wire.ts';
import { AppError } from '../http/errors.ts';
import { edgeForCaller, signedMessagingAccount, type SignedForm } from './access.ts';
import { withChime } from './chime.ts';
import { handlersFor, spokenTextOf, type RadioCaller } from './rules.ts';
import { SpeechBusyError, SpeechInputError, SpeechTimeoutError, type SpeechSamples, type SpeechSynthesizer } from './speech/speech.ts';
import { durationMs, encodeWav } from './speech/wav.ts';
import { findEdge, insertPlay, type Credential, type Edge } from './store.ts';

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
  /** Told how long each synthesis took (the speech synthesis histogram of /metrics). */
  observeSynthesis?: (seconds: number) => void;
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
  caller: RadioCaller,
  body: { edgeId: string; text: string; actor: string; process: boolean },
): Promise<{ messageId: string }> {
  const edge = await edgeForCaller(deps.db, caller, body.edgeId);
  return playOnEdge(deps, {
    edge, source: 'generic', text: body.text, actor: body.actor, process: body.process,
    credential: caller.kind === 'token' ? 'token' : 'edge_key',
    apiTokenId: caller.kind === 'token' ? caller.principal.tokenId : null,
    messaging: null,
  });
}

/** R2: a text message, signed by the provider for an account of the edge device's organization. */
export async function playMessaging(
  deps: PlayDeps,
  edgeId: string,
  form: SignedForm & { fields: { AccountSid: string; Body: string; From: string; To: string } },
): Promise<{ messageId: string }> {
  const { fields } = form;
  const account = await signedMessagingAccount(deps.db, form, fields.AccountSid);
  const edge = await findEdge(deps.db, edgeId);
  if (edge === null) throw new AppError(404, 'not_found', 'edge device not found');
  if (edge.organizationId !== account.organizationId) throw new AppError(403, 'forbidden', "the account is not of this edge device's organization");
  return playOnEdge(deps, {
    edge, source: 'messaging', text: fields.Body, actor: fields.From, process: true,
    credential: 'messaging_signature', apiTokenId: null,
    messaging: { accountSid: account.accountSid, from: fields.From, to: fields.To },
  });
}

export async function playOnEdge(deps: PlayDeps, request: PlayRequest): Promise<{ messageId: string }> {
  const handlers = handlersFor(request.edge, request.process);
  const spokenText = spokenTextOf(request.text, handlers);
  let speech: SpeechSamples;
  const started = performance.now();
  try {
    speech = await deps.speech.synthesizeSamples(spokenText);
  } catch (err) {
    throw speechError(err);
  } finally {
    deps.observeSynthesis?.((performance.now() - started) / 1000);
  }
  const samples = handlers.includes('chime') ? withChime(speech.samples, speech.sampleRate) : speech.samples;
  const wav = encodeWav(samples, speech.sampleRate);

  const messageId = crypto.randomUUID();
  const now = deps.clock.now();
  await deps.db.tx(async (q) => {
    await insertPlay(q, {
      messageId, edge: request.edge, source: request.source, actor: request.actor, text: request.text, spokenText,
      processed: request.process, handlers, credential: request.credential, apiTokenId: request.apiTokenId,
      messaging: request.messaging, wav, durationMs: durationMs(samples, speech.sampleRate),
      keepTranscript: handlers.includes('transcript'), createdAt: now,
    });
    await enqueueDeviceMessage(q, {
      topic: edgePlayTopic(request.edge.edgeId),
      payload: playMessage({ messageId, spokenText, actor: request.actor, queuedAt: isoMicros(now) }),
      key: messageId,
      audioMessageId: messageId,
    }, now);
  });
  return { messageId };
}
