// Voice actions (contract section 12): what an edge device heard on the channel, recorded (R3) with
// a "speech_detected" event, and, on an edge device with voice_actions, acted on: "I'm on it"
// claims, "on my way" marks on the way, the request the phrase names or else the oldest open one
// of the location it can apply to, as the speaker (else "Radio") from the radio. The answer is
// said on the air. Anything malformed, too long, or too late is recorded or refused without
// effect; nothing here throws at the broker.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { announcementText, languageOf, voiceReply } from './announce-rules.ts';
import type { AnnounceDeps } from './announce.ts';
import { prepareAudio, queuePlay, type PlayRequest } from './play.ts';
import { chooseRequest, parseHeard, readPhrase, type Intent } from './voice-rules.ts';
import { insertHeard, listeningEdge, openRequests, retakePending, settleHeard, type ListeningEdge, type OpenRequest } from './voice-store.ts';

/** The Call for Help operations a voice action uses, as compose() builds them from cfh/requests.ts. */
export interface VoiceCfh {
  /** C1 from the radio, as the edge device that heard it: true if this claimed it; false if it was refused (claimed, closed). */
  claim(edge: VoiceEdge, messageId: string, staff: RadioStaff): Promise<boolean>;
  /** C2 from the radio. */
  onTheWay(edge: VoiceEdge, messageId: string, staff: RadioStaff): Promise<boolean>;
}

/** The edge device a voice action was heard on: CFH acts as it, within its location. */
export interface VoiceEdge {
  edgeId: string;
  organizationId: number;
  locationId: number;
}

/** Who acts: the speaker (else "Radio"), known to CFH by the edge device it spoke on. */
export interface RadioStaff {
  name: string;
  userId: string;
  channelId: string;
}

export interface VoiceDeps extends AnnounceDeps {
  db: Db;
  clock: Clock;
  cfh: VoiceCfh;
  log?: { warn(obj: object, msg: string): void };
}

export type HeardOutcome =
  'pending' | 'refused' | 'duplicate' | 'invalid' | 'late' | 'disabled' | 'none' | 'nothing_waiting' | 'taken' | 'closed' | 'claimed' | 'on_the_way';

/** What was heard longer ago than this is too late to act on. */
const LATE_AFTER_MS = 60_000;
/** A heard message still pending this long after the service began acting on it was left by a
 * crash (acting takes a synthesis, at most 10 s, and a claim): the next delivery acts on it. */
const PENDING_LEASE_MS = 30_000;

/** How many requests a phrase tries when others take them first. */
const MAX_CHOICE_ROUNDS = 5;

const staffOf = (edgeId: string, speaker: string | null): RadioStaff => ({
  name: speaker ?? 'Radio',
  // The same speaker on any edge device is the same person to CFH: "on my way" after "I'm on it".
  userId: `radio:${(speaker ?? 'radio').toLowerCase()}`,
  channelId: edgeId,
});

/** A message on radio/<edgeId>/heard (the broker let only that edge device publish there). */
export async function handleHeard(deps: VoiceDeps, edgeId: string, payload: Buffer): Promise<HeardOutcome> {
  const heard = parseHeard(payload);
  if (heard === null) {
    deps.log?.warn({ edgeId }, 'ignored a heard message that is not JSON with a heard_id');
    return 'refused';
  }
  const edge = await listeningEdge(deps.db, edgeId);
  if (edge === null) return 'refused';
  const read = heard.problem === null ? readPhrase(heard.text) : { intent: 'none' as Intent, named: '' };
  const now = deps.clock.now();
  // Said long ago (an edge device that was away sends what it heard then): recorded, not acted on,
  // or it would claim whatever request is oldest now.
  const late = heard.heardAt !== null && now.getTime() - heard.heardAt.getTime() > LATE_AFTER_MS;
  const first: HeardOutcome =
    heard.problem !== null ? 'invalid' : !edge.voiceActions ? 'disabled' : read.intent === 'none' ? 'none' : late ? 'late' : 'pending';
  const recorded = await deps.db.tx((q) => insertHeard(q, { edge, ...heard, intent: read.intent, outcome: first }, now));
  if (!recorded) {
    // Brought again (QoS 1). Recorded and settled: a duplicate. Still pending long after it was
    // recorded: the service stopped while acting on it; act on it now, or record it as late.
    if (!(await deps.db.statement((q) => retakePending(q, edgeId, heard.heardId, now, PENDING_LEASE_MS)))) return 'duplicate';
    if (first !== 'pending') {
      await deps.db.statement((q) => settleHeard(q, edgeId, heard.heardId, first, null, null));
      return first;
    }
  } else if (first !== 'pending') {
    return first;
  }

  const language = languageOf(edge.language);
  // Staff answering together ("I'm on it", "I'm on it") are heard at once: each picks the oldest
  // open request, and the one that loses it to another picks again among the rest, so two phrases
  // never both go to one request while another waits. A few rounds at most; then it was taken.
  const lost = new Set<string>();
  let target: OpenRequest | null = null;
  let done = false;
  for (let round = 0; round < MAX_CHOICE_ROUNDS && !done; round++) {
    const open = (await openRequests(deps.db, edge.locationId)).filter((r) => !lost.has(r.message_id));
    const choice = chooseRequest(open, read, heard.speaker);
    if (choice === null) break;
    target = choice;
    try {
      const staff = staffOf(edge.edgeId, heard.speaker);
      done = read.intent === 'claim' ? await deps.cfh.claim(edge, choice.message_id, staff) : await deps.cfh.onTheWay(edge, choice.message_id, staff);
    } catch (err) {
      // Closed and gone, or refused by CFH's own rules: without effect.
      deps.log?.warn({ err, edgeId, requestId: choice.request_id }, 'a voice action could not act on its request');
      return reply(deps, edge, heard.heardId, 'closed', choice, voiceReply('nothing_waiting', language, choice.name ?? choice.option_text ?? ''));
    }
    if (!done) lost.add(choice.message_id);
  }
  if (target === null) return reply(deps, edge, heard.heardId, 'nothing_waiting', null, voiceReply('nothing_waiting', language, read.named));
  const place = target.name ?? target.option_text ?? '';
  if (!done) return reply(deps, edge, heard.heardId, 'taken', target, voiceReply('taken', language, place));
  const status = read.intent === 'claim' ? 'claimed' : 'on_the_way';
  const text = announcementText({ status, name: target.name, optionText: target.option_text, optionPrompt: null, claimedBy: heard.speaker }, language);
  return reply(deps, edge, heard.heardId, status, target, text ?? place);
}

/** Says the answer on the edge device and records what came of the heard message. */
async function reply(
  deps: VoiceDeps,
  edge: ListeningEdge,
  heardId: string,
  outcome: HeardOutcome,
  target: OpenRequest | null,
  text: string,
): Promise<HeardOutcome> {
  const request: PlayRequest = {
    edge: { edgeId: edge.edgeId, organizationId: edge.organizationId, locationId: edge.locationId, voiceHandlers: edge.voiceHandlers },
    source: 'confirmation',
    text,
    actor: 'Radio',
    process: true,
    credential: 'service',
    apiTokenId: null,
    messaging: null,
    language: languageOf(edge.language),
  };
  let replyId: string | null = null;
  try {
    const audio = await prepareAudio(deps, request);
    replyId = (await deps.db.tx((q) => queuePlay(q, deps, request, audio, deps.clock.now()))).messageId;
  } catch (err) {
    // The action stands; only its confirmation is missing (speech busy, say).
    deps.log?.warn({ err, edgeId: edge.edgeId }, 'could not say the answer to a voice action');
  }
  await deps.db.statement((q) => settleHeard(q, edge.edgeId, heardId, outcome, target?.request_id ?? null, replyId));
  return outcome;
}
