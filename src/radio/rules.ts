// Rules of the radio that are not HTTP: limits, which voice handlers run and in what order, who
// may play on an edge device, and the play message an edge device receives.
import { AppError } from '../http/errors.ts';
import { mayReach, type Actor } from '../access/actor.ts';
import { normalizeForSpeech } from './normalize.ts';
import type { Edge, VoiceHandler } from './store.ts';

/** Longest text R1 accepts and R2 speaks (contract section 12): about 35 seconds of speech. */
export const MAX_TEXT_LENGTH = 500;
/** Longest R2 Body recorded (the provider's own limit for a text message is 1,600). */
export const MAX_MESSAGING_BODY = 10_000;
/** Longest text after the handlers (normalizing "$3.50" makes it longer). */
export const MAX_SPOKEN_LENGTH = 2_000;

/** Handlers that run for a message, in their fixed order: text, then audio, then keeping. */
export function handlersFor(edge: Edge, process: boolean): VoiceHandler[] {
  if (!process) return [];
  const order: VoiceHandler[] = ['normalize', 'chime', 'transcript'];
  return order.filter((h) => edge.voiceHandlers.includes(h));
}

/** The text the engine speaks. */
export function spokenTextOf(text: string, handlers: readonly VoiceHandler[]): string {
  const spoken = handlers.includes('normalize') ? normalizeForSpeech(text) : text.trim();
  if (spoken === '') throw new AppError(422, 'nothing_to_say', 'the text has nothing to say', { errors: { text: ['has nothing to say'] } });
  if (spoken.length > MAX_SPOKEN_LENGTH) {
    throw new AppError(422, 'text_too_long', `the text is too long to speak (over ${MAX_SPOKEN_LENGTH} characters once normalized)`, {
      errors: { text: [`is too long once normalized (${spoken.length} characters, at most ${MAX_SPOKEN_LENGTH})`] },
    });
  }
  return spoken;
}

const forbidden = (message: string) => new AppError(403, 'forbidden', message);

/**
 * Decides whether the actor (an edge device with its key, or a token with the radio scope) may use
 * the edge device `edgeId` (R1 and the transcripts). The credential itself was checked before (a
 * missing or invalid one is 403 whatever the edge id). An edge device's key is good for that edge
 * device only, and its holder learns nothing about others: another edge id, known or not, is 403.
 * A token learns whether an edge id exists (404) only once it is a valid token with the radio
 * scope. An edge device out of its reach is 403 to R1 (contract section 2 says so of R1); an
 * operation that gives `missing` answers it as it answers an edge device that does not exist (R3
 * and its audio: section 2's 404, existence not leaked).
 */
export function authorizeEdgeUse(actor: Actor, edgeId: string, edge: Edge | null, missing?: () => AppError): Edge {
  if (actor.kind === 'device') {
    if (actor.device !== 'edge_device' || actor.deviceId !== edgeId || edge === null) throw forbidden('this api-key belongs to another edge device');
    return edge;
  }
  if (actor.kind === 'customer') throw forbidden("an edge device's api-key or a bearer token is required");
  if (edge === null) throw missing?.() ?? new AppError(404, 'not_found', 'edge device not found');
  if (!mayReach(actor, edge)) throw missing?.() ?? forbidden("the token is not of this edge device's organization");
  return edge;
}
