// Helpers of the radio tests: requests as an edge integration or a messaging provider would send
// them, and the play messages they leave in the device outbox.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { App } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import type { Db } from '../../src/db/db.ts';
import { messagesByIds } from '../../src/devices/store.ts';
import { messageJson } from '../../src/devices/transport.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { freshId, provisionToken, type World } from '../support/world.ts';

export interface OutboxPlay {
  topic: string;
  payload: { message_id: string; text: string; actor: string; mime: string; audio: string; queued_at: string; expires_at: string; priority: string };
  audio: Buffer;
}

/** A queued play as the dispatcher publishes it: its payload with the audio stored apart put in. */
export async function outboxPlay(db: Db, messageId: string): Promise<OutboxPlay | null> {
  const [queued] = await db.query<{ id: number }>('SELECT id FROM device_outbox WHERE message_key = $1', [messageId]);
  const [row] = queued === undefined ? [] : await messagesByIds(db, [queued.id]);
  if (row === undefined) return null;
  const payload = JSON.parse(messageJson(row).toString('utf8')) as OutboxPlay['payload'];
  return { topic: row.topic, payload, audio: Buffer.from(payload.audio, 'base64') };
}

export async function outboxCount(db: Db, edgeId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM device_outbox WHERE topic = $1', [`radio/${edgeId}/play`]);
  return row?.n ?? 0;
}

export function playText(app: App, headers: Record<string, string>, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/webhooks/incoming/generic', headers, payload: body });
}

/** R1 by the edge device's key: the play's message_id (asserting a 200). */
export async function playByEdge(app: App, w: World, body: { text: string; actor: string } & Record<string, unknown>): Promise<string> {
  const res = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, ...body });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ message_id: string }>().message_id;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const edgeKey = (key: string) => ({ 'api-key': key });

/** A token of the world's organization with only these scopes. */
export function tokenWithScopes(db: Db, clock: Clock, world: World, scopes: ('cfh' | 'radio')[], extra: { revoked?: boolean } = {}): Promise<string> {
  return provisionToken(db, clock, world.organizationId, scopes, extra);
}

/** A second edge device in the world's location. */
export async function anotherEdge(
  db: Db,
  clock: Clock,
  world: World,
  voiceHandlers: ('normalize' | 'chime' | 'transcript')[] = [],
): Promise<{ edgeId: string; edgeKey: string }> {
  const edge = { edgeId: `edge-${freshId()}`, edgeKey: crypto.randomBytes(18).toString('base64url') };
  await applyProvisioning(db, clock, {
    radio_edges: [{ edge_id: edge.edgeId, location_id: world.locationId, name: 'Back radio', device_key: edge.edgeKey, voice_handlers: voiceHandlers }],
  });
  return edge;
}

export const SENTENCE = 'Attention shoppers, a cleanup is needed in aisle 5. Thank you.';
