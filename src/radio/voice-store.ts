// SQL of voice actions: what an edge device heard (radio_heard), and the open CFH requests of each
// location as the event log tells them (radio_open_requests).
import type { Queryable, Tx } from '../db/db.ts';
import type { EventRow } from '../events/log.ts';
import { insertEventsReturningFrom } from '../events/log.ts';

const CLOSED = ['completed', 'cancelled', 'timed_out'];

/** The event log's "radio-requests" subscriber: each request's latest status, gone once it closes. */
export async function followRequests(q: Tx, events: readonly EventRow[]): Promise<void> {
  const latest = new Map<string, EventRow>();
  for (const e of events) {
    if (e.type === 'callforhelp' && e.location_id !== null && e.internal_id !== null && /^\d+$/.test(e.internal_id) && e.status !== 'reminder') {
      latest.set(e.internal_id, e);
    }
  }
  if (latest.size === 0) return;
  const list = [...latest.values()];
  const text = (e: EventRow, key: string) => (typeof e.details[key] === 'string' ? (e.details[key] as string) : null);
  await q.query(
    `WITH changes AS (
       SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
         AS c(request_id, organization_id, location_id, message_id, status, name, option_text, claimed_by, at)
     ), closed AS (
       DELETE FROM radio_open_requests WHERE request_id IN (SELECT request_id FROM changes WHERE status = ANY ($10::text[]))
     )
     INSERT INTO radio_open_requests (request_id, organization_id, location_id, message_id, status, name, option_text, claimed_by, opened_at, updated_at)
     SELECT request_id, organization_id, location_id, message_id, status, name, option_text, claimed_by, at, at FROM changes
     WHERE status <> ALL ($10::text[]) AND message_id IS NOT NULL
     ON CONFLICT (request_id) DO UPDATE SET status = EXCLUDED.status, claimed_by = EXCLUDED.claimed_by,
       name = COALESCE(EXCLUDED.name, radio_open_requests.name), option_text = COALESCE(EXCLUDED.option_text, radio_open_requests.option_text),
       updated_at = EXCLUDED.updated_at`,
    [
      list.map((e) => e.internal_id),
      list.map((e) => e.organization_id),
      list.map((e) => e.location_id),
      list.map((e) => text(e, 'message_id')),
      list.map((e) => e.status),
      list.map((e) => text(e, 'name')),
      list.map((e) => text(e, 'option_text')),
      list.map((e) => text(e, 'claimed_by')),
      list.map((e) => e.created_at),
      CLOSED,
    ],
  );
}

export interface OpenRequest {
  request_id: number;
  message_id: string;
  status: string;
  name: string | null;
  option_text: string | null;
  claimed_by: string | null;
}

/** The location's open requests, oldest first. */
export async function openRequests(q: Queryable, locationId: number): Promise<OpenRequest[]> {
  return q.query<OpenRequest>(
    `SELECT request_id, message_id, status, name, option_text, claimed_by FROM radio_open_requests
     WHERE location_id = $1 ORDER BY opened_at, request_id LIMIT 200`,
    [locationId],
  );
}

/** An edge device as voice actions need it. */
export interface ListeningEdge {
  edgeId: string;
  organizationId: number;
  locationId: number;
  voiceHandlers: string[];
  voiceActions: boolean;
  language: string | null;
}

export async function listeningEdge(q: Queryable, edgeId: string): Promise<ListeningEdge | null> {
  const [row] = await q.query<{
    edge_id: string;
    organization_id: number;
    location_id: number;
    voice_handlers: string[];
    voice_actions: boolean;
    language: string | null;
  }>(
    `SELECT r.edge_id, r.organization_id, r.location_id, r.voice_handlers, r.voice_actions, l.language
     FROM radio_edges r JOIN locations l ON l.id = r.location_id WHERE r.edge_id = $1 AND r.enabled`,
    [edgeId],
  );
  return row === undefined
    ? null
    : {
        edgeId: row.edge_id,
        organizationId: row.organization_id,
        locationId: row.location_id,
        voiceHandlers: row.voice_handlers,
        voiceActions: row.voice_actions,
        language: row.language,
      };
}

export interface HeardRecord {
  edge: ListeningEdge;
  heardId: string;
  text: string;
  speaker: string | null;
  heardAt: Date | null;
  intent: string;
  outcome: string;
}

/**
 * Records what was heard and its "speech_detected" event, in one statement; false when this
 * heard_id of the edge device was recorded before (QoS 1 brings a message again).
 */
export async function insertHeard(q: Tx, h: HeardRecord, now: Date): Promise<boolean> {
  const rows = await q.query(
    `WITH heard AS (
       INSERT INTO radio_heard (edge_id, organization_id, location_id, heard_id, text, speaker, heard_at, received_at, intent, outcome, acting_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10 = 'pending' THEN $8::timestamptz END)
       ON CONFLICT (edge_id, heard_id) DO NOTHING
       RETURNING edge_id, organization_id, location_id, heard_id, text, speaker, intent
     )
     ${insertEventsReturningFrom(
       `SELECT 'radio', 'speech_detected', h.organization_id, h.location_id, h.heard_id,
          jsonb_build_object('edge_id', h.edge_id, 'text', h.text, 'message_id', NULL::text, 'heard_id', h.heard_id, 'speaker', h.speaker,
            'intent', h.intent),
          format('Heard on %s: %s', e.name, h.text), $8::timestamptz
        FROM heard h JOIN radio_edges e ON e.edge_id = h.edge_id`,
     )}`,
    [h.edge.edgeId, h.edge.organizationId, h.edge.locationId, h.heardId, h.text, h.speaker, h.heardAt, now, h.intent, h.outcome],
  );
  if (rows.length > 0) q.signal('events');
  return rows.length > 0;
}

/**
 * A heard message recorded before and still "pending" (the service stopped while acting on it):
 * taken over to act on now, unless another delivery started acting on it within `leaseMs`.
 */
export async function retakePending(q: Queryable, edgeId: string, heardId: string, now: Date, leaseMs: number): Promise<boolean> {
  const rows = await q.query(
    `UPDATE radio_heard SET acting_at = $3
     WHERE edge_id = $1 AND heard_id = $2 AND outcome = 'pending' AND (acting_at IS NULL OR acting_at <= $4)
     RETURNING 1`,
    [edgeId, heardId, now, new Date(now.getTime() - leaseMs)],
  );
  return rows.length > 0;
}

/** What came of a heard message. */
export async function settleHeard(
  q: Queryable,
  edgeId: string,
  heardId: string,
  outcome: string,
  requestId: number | null,
  replyMessageId: string | null,
): Promise<void> {
  await q.query('UPDATE radio_heard SET outcome = $3, cfh_request_id = $4, reply_message_id = $5 WHERE edge_id = $1 AND heard_id = $2', [
    edgeId,
    heardId,
    outcome,
    requestId,
    replyMessageId,
  ]);
}
