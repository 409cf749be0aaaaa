// The contract's promises for any answer, held by the hostile-input and tenancy suites: never a
// 5xx, errors in the contract's shape, and a refused request changes nothing stored (a snapshot of
// one world's stored state, taken around each request). The arbitraries are in ./arbitraries.ts.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.ts';
import type { Db } from '../../src/db/db.ts';
import type { World } from './world.ts';

// HOSTILE_SEED=<the seed fast-check printed> replays a failure (every property then starts from it).
if (process.env.HOSTILE_SEED) fc.configureGlobal({ seed: Number(process.env.HOSTILE_SEED) });

/** Runs per property; HOSTILE_RUNS_SCALE=10 makes a long hunt of the same suites. */
export function runs(n: number): number {
  const scale = Number(process.env.HOSTILE_RUNS_SCALE ?? '1');
  return Math.max(1, Math.round(n * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

export interface Probe {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS';
  url: string;
  headers?: Record<string, string | string[]>;
  /** A string or Buffer is sent as it is; undefined: no body. */
  payload?: string | Buffer;
}

export function send(app: App, probe: Probe): Promise<LightMyRequestResponse> {
  return app.inject({ method: probe.method, url: probe.url, headers: probe.headers ?? {}, ...(probe.payload === undefined ? {} : { payload: probe.payload }) });
}

/** A short description of a probe for an assertion message (bodies can be a MiB). */
export function describe(probe: Probe): string {
  const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}... (${s.length} chars)` : s);
  const body = probe.payload === undefined ? '(none)' : clip(typeof probe.payload === 'string' ? probe.payload : `<${probe.payload.length} bytes>`);
  return `${probe.method} ${clip(probe.url)} headers=${clip(JSON.stringify(probe.headers ?? {}))} body=${body}`;
}

/**
 * The contract's promises for any answer: no 5xx (the database is up), and every error is JSON
 * with a string `message` and `code`, plus an `errors` object of string arrays on 422, and on R1
 * and R2 `error` with the message's text (a URL refused before it reaches a route excepted).
 */
export function assertContractAnswer(res: LightMyRequestResponse, what: string): void {
  const context = `${what}\n-> ${res.statusCode} ${res.body.slice(0, 500)}`;
  assert.ok(res.statusCode < 500, `no input produces a 5xx: ${context}`);
  if (res.statusCode < 400) return;
  assert.match(String(res.headers['content-type'] ?? ''), /^application\/json/, `an error is JSON: ${context}`);
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    assert.fail(`an error body parses as JSON: ${context}`);
  }
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `an error body is an object: ${context}`);
  const { message, code, errors } = body as Record<string, unknown>;
  assert.equal(typeof message, 'string', `message is a string: ${context}`);
  assert.equal(typeof code, 'string', `code is a string: ${context}`);
  assert.match(code as string, /^[a-z][a-z0-9_]*$/, `code is a snake_case word: ${context}`);
  assert.doesNotMatch(message as string, /\n\s+at /, `no stack trace: ${context}`);
  if (res.statusCode === 422) {
    assert.ok(errors !== null && typeof errors === 'object' && !Array.isArray(errors), `a 422 has an errors object: ${context}`);
    for (const [field, list] of Object.entries(errors as Record<string, unknown>)) {
      assert.ok(Array.isArray(list) && list.length > 0 && list.every((m) => typeof m === 'string'), `errors.${field} is a list of strings: ${context}`);
    }
  }
  if (res.statusCode === 429) assert.match(String(res.headers['retry-after'] ?? ''), /^\d+$/, `a 429 says when to retry: ${context}`);
  // Section 3: R1 and R2 (and R2's alias) also carry `error`, the message's text; no other operation
  // does. An empty edge id is still R2's route (its 422 names edgeId).
  const radioPlay = res.raw.req.method === 'POST' && /^\/webhooks\/incoming\/(generic(\?|$)|(messaging|twilio)\/[^/?]*(\?|$))/.test(res.raw.req.url ?? '');
  const error = (body as Record<string, unknown>).error;
  if (radioPlay && res.statusCode !== 414 && !(res.statusCode === 400 && code === 'bad_url'))
    assert.equal(error, message, `R1 and R2 carry error = message: ${context}`);
  if (!radioPlay) assert.equal(error, undefined, `only R1 and R2 carry error: ${context}`);
}

// --- stored state ---

/** Tables that requests write; counted whole, so a write outside the world shows as well. */
const WRITTEN_TABLES = [
  'locker_orders',
  'cabinet_commands',
  'locker_order_events',
  'locker_status_events',
  'cfh_requests',
  'cfh_request_events',
  'device_outbox',
  'jobs',
  'lockers',
  'cabinets',
  'api_tokens',
  'radio_messages',
  'radio_transcripts',
  'radio_audio',
  'events',
];

const rows = (name: string, from: string, order = 'id') => `'${name}', (SELECT coalesce(json_agg(row_to_json(t) ORDER BY t.${order}), '[]') FROM (${from}) t)`;

/**
 * Everything stored about one world ($1 organization, $2 locker, $3 edge device): its locker and
 * cabinets, orders and their events, cabinet commands, status reports, CFH requests and events,
 * device messages (without the dispatcher's delivery bookkeeping), jobs, tokens, radio messages;
 * and the row count of every table requests write.
 */
const SNAPSHOT_SQL = ((): string => {
  const parts = [
    rows(
      'locker',
      'SELECT id, organization_id, location_id, name, version, rear_loading_available, timer, api_key, api_key_hash, ip, firmware, last_seen_at, created_at, updated_at FROM lockers WHERE id = $2',
    ),
    rows('cabinets', 'SELECT * FROM cabinets WHERE locker_id = $2'),
    rows('orders', 'SELECT * FROM locker_orders WHERE organization_id = $1 OR locker_id = $2'),
    rows(
      'order_events',
      'SELECT e.* FROM locker_order_events e JOIN locker_orders o ON o.id = e.locker_order_id WHERE o.organization_id = $1 OR o.locker_id = $2',
    ),
    rows('commands', 'SELECT * FROM cabinet_commands WHERE locker_id = $2'),
    rows('status_events', 'SELECT * FROM locker_status_events WHERE locker_id = $2'),
    rows('cfh_requests', 'SELECT * FROM cfh_requests WHERE organization_id = $1'),
    rows('cfh_events', 'SELECT e.* FROM cfh_request_events e JOIN cfh_requests r ON r.id = e.request_id WHERE r.organization_id = $1'),
    rows('events', 'SELECT id, uuid, type, status, location_id, internal_id, details, message, created_at FROM events WHERE organization_id = $1'),
    // A play message carries its audio: its size stands for it (read without detoasting), since the
    // snapshot is taken around every request.
    rows(
      'outbox',
      `SELECT id, topic, CASE WHEN topic LIKE 'radio/%' THEN to_jsonb(pg_column_size(payload)) ELSE payload END AS payload,
      message_key, created_at FROM device_outbox
      WHERE topic IN ('lockers/' || $2::text || '/commands', 'radio/' || $3::text || '/play')`,
    ),
    rows(
      'jobs',
      `SELECT id, kind, payload, run_at, dedupe_key, attempts, done_at, failed FROM jobs
      WHERE payload->>'cabinet_id' IN (SELECT id::text FROM cabinets WHERE locker_id = $2)
         OR payload->>'command_id' IN (SELECT command_id::text FROM cabinet_commands WHERE locker_id = $2)
         OR payload->>'request_id' IN (SELECT id::text FROM cfh_requests WHERE organization_id = $1)
         OR payload::text LIKE '%' || $3::text || '%'`,
    ),
    rows('tokens', 'SELECT id, name, organization_id, scopes, token_hash, expires_at, revoked_at, updated_at FROM api_tokens WHERE organization_id = $1'),
    rows('radio_messages', 'SELECT * FROM radio_messages WHERE organization_id = $1 OR edge_id = $3'),
    rows(
      'radio_transcripts',
      `SELECT t.id, t.message_id, t.edge_id, octet_length(a.wav) AS audio_bytes, t.created_at
      FROM radio_transcripts t LEFT JOIN radio_audio a ON a.message_id = t.message_id WHERE t.edge_id = $3`,
    ),
    `'counts', json_build_object(${WRITTEN_TABLES.map((t) => `'${t}', (SELECT count(*) FROM ${t})`).join(', ')})`,
  ];
  return `SELECT json_build_object(${parts.join(',\n')})::text AS state`;
})();

/** The stored state of a world, as one JSON text (one round trip). */
export async function snapshot(db: Db, world: Pick<World, 'organizationId' | 'lockerId' | 'edgeId'>): Promise<string> {
  const [row] = await db.query<{ state: string }>(SNAPSHOT_SQL, [world.organizationId, world.lockerId, world.edgeId]);
  assert.ok(row !== undefined);
  return row.state;
}

/** The stored state of a world alone, without the row counts of whole tables (which another
 * world's accepted request changes). */
export async function ownState(db: Db, world: Pick<World, 'organizationId' | 'lockerId' | 'edgeId'>): Promise<string> {
  const state = JSON.parse(await snapshot(db, world)) as Record<string, unknown>;
  delete state.counts;
  return JSON.stringify(state);
}

type WorldRef = Pick<World, 'organizationId' | 'lockerId' | 'edgeId'>;

/** Sends a probe and holds its answer to the contract: no 5xx, errors in shape, and a refused
 * request (4xx) leaves every given world as it was. Returns the answer. */
export async function probeRefusesCleanly(app: App, db: Db, worlds: readonly WorldRef[], probe: Probe): Promise<LightMyRequestResponse> {
  return refusalGuard(app, db, worlds)(probe);
}

/**
 * probeRefusesCleanly for a sequence of probes: the state after a refused probe is the state
 * before the next one (nothing else writes the snapshotted rows), so a run of refusals costs one
 * snapshot per probe instead of two. Only an accepted probe makes it look again.
 */
export function refusalGuard(app: App, db: Db, worlds: readonly WorldRef[]): (probe: Probe) => Promise<LightMyRequestResponse> {
  let known: string[] | null = null;
  const states = () => Promise.all(worlds.map((w) => snapshot(db, w)));
  return async (probe) => {
    const before = known ?? (await states());
    known = null;
    const res = await send(app, probe);
    const what = describe(probe);
    assertContractAnswer(res, what);
    if (res.statusCode >= 400) {
      const after = await states();
      worlds.forEach((_, i) => {
        if (after[i] !== before[i])
          assert.fail(`a refused request (${res.statusCode}) changed stored state: ${what}\n${firstDifference(before[i] ?? '', after[i] ?? '')}`);
      });
      known = after;
    }
    return res;
  };
}

function firstDifference(a: string, b: string): string {
  const left = JSON.parse(a) as Record<string, unknown>;
  const right = JSON.parse(b) as Record<string, unknown>;
  for (const key of Object.keys(left)) {
    const l = JSON.stringify(left[key]);
    const r = JSON.stringify(right[key]);
    if (l !== r) return `${key}:\n  before ${l.slice(0, 800)}\n  after  ${r.slice(0, 800)}`;
  }
  return '(no difference found)';
}

/** Holds every probe to the contract (no 5xx, errors in shape, a refusal changes nothing). */
export async function holdEach(app: App, db: Db, worlds: readonly WorldRef[], probes: readonly Probe[]): Promise<void> {
  const guard = refusalGuard(app, db, worlds);
  for (const probe of probes) await guard(probe);
}

/** Runs a property over probes, holding each answer to the contract; returns how often each status came. */
export async function holdProperty(
  app: App,
  db: Db,
  worlds: readonly WorldRef[],
  probes: fc.Arbitrary<Probe>,
  numRuns: number,
  examples: readonly Probe[] = [],
): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  const guard = refusalGuard(app, db, worlds);
  await fc.assert(
    fc.asyncProperty(probes, async (probe) => {
      const res = await guard(probe);
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }),
    // Examples run first (counted in numRuns): the paths `reached` asks for, whatever the draw.
    { numRuns, examples: examples.map((probe) => [probe] as [Probe]) },
  );
  return statuses;
}

/** A suite that only ever saw its own 4xx proves little: the valid path must be reached too. */
export function reached(statuses: Map<number, number>, ...wanted: number[]): void {
  for (const status of wanted) assert.ok(statuses.has(status), `status ${status} was reached: ${JSON.stringify([...statuses])}`);
}
