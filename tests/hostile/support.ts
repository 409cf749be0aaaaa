// What the hostile-input and tenancy suites share: the contract's properties of any answer (never
// a 5xx, errors in the contract's shape), a snapshot of one world's stored state (a refused request
// changes nothing), and fast-check arbitraries of malformed requests.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.ts';
import type { Db } from '../../src/db/db.ts';
import type { World } from '../support/world.ts';

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
 * with a string `message` and `code`, plus an `errors` object of string arrays on 422.
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
}

// --- stored state ---

/** Tables that requests write; counted whole, so a write outside the world shows as well. */
const WRITTEN_TABLES = [
  'locker_orders', 'cabinet_commands', 'locker_order_events', 'locker_status_events', 'cfh_requests', 'cfh_request_events',
  'device_outbox', 'jobs', 'lockers', 'cabinets', 'api_tokens', 'radio_messages', 'radio_transcripts',
];

const rows = (name: string, from: string, order = 'id') =>
  `'${name}', (SELECT coalesce(json_agg(row_to_json(t) ORDER BY t.${order}), '[]') FROM (${from}) t)`;

/**
 * Everything stored about one world ($1 organization, $2 locker, $3 edge device): its locker and
 * cabinets, orders and their events, cabinet commands, status reports, CFH requests and events,
 * device messages (without the dispatcher's delivery bookkeeping), jobs, tokens, radio messages;
 * and the row count of every table requests write.
 */
const SNAPSHOT_SQL = ((): string => {
  const parts = [
    rows('locker', 'SELECT id, organization_id, location_id, name, version, rear_loading_available, timer, api_key, api_key_hash, ip, firmware, last_seen_at, created_at, updated_at FROM lockers WHERE id = $2'),
    rows('cabinets', 'SELECT * FROM cabinets WHERE locker_id = $2'),
    rows('orders', 'SELECT * FROM locker_orders WHERE organization_id = $1 OR locker_id = $2'),
    rows('order_events', 'SELECT e.* FROM locker_order_events e JOIN locker_orders o ON o.id = e.locker_order_id WHERE o.organization_id = $1 OR o.locker_id = $2'),
    rows('commands', 'SELECT * FROM cabinet_commands WHERE locker_id = $2'),
    rows('status_events', 'SELECT * FROM locker_status_events WHERE locker_id = $2'),
    rows('cfh_requests', 'SELECT * FROM cfh_requests WHERE organization_id = $1'),
    rows('cfh_events', 'SELECT e.* FROM cfh_request_events e JOIN cfh_requests r ON r.id = e.request_id WHERE r.organization_id = $1'),
    // A play message carries its audio: its size stands for it (read without detoasting), since the
    // snapshot is taken around every request.
    rows('outbox', `SELECT id, topic, CASE WHEN topic LIKE 'radio/%' THEN to_jsonb(pg_column_size(payload)) ELSE payload END AS payload,
      message_key, created_at FROM device_outbox
      WHERE topic IN ('lockers/' || $2::text || '/commands', 'radio/' || $3::text || '/play')`),
    rows('jobs', `SELECT id, kind, payload, run_at, dedupe_key, attempts, done_at, failed FROM jobs
      WHERE payload->>'cabinet_id' IN (SELECT id::text FROM cabinets WHERE locker_id = $2)
         OR payload->>'command_id' IN (SELECT command_id::text FROM cabinet_commands WHERE locker_id = $2)
         OR payload->>'request_id' IN (SELECT id::text FROM cfh_requests WHERE organization_id = $1)
         OR payload::text LIKE '%' || $3::text || '%'`),
    rows('tokens', 'SELECT id, name, organization_id, scopes, token_hash, expires_at, revoked_at, updated_at FROM api_tokens WHERE organization_id = $1'),
    rows('radio_messages', 'SELECT * FROM radio_messages WHERE organization_id = $1 OR edge_id = $3'),
    rows('radio_transcripts', 'SELECT id, message_id, edge_id, octet_length(audio) AS audio_bytes, created_at FROM radio_transcripts WHERE edge_id = $3'),
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
        if (after[i] !== before[i]) assert.fail(`a refused request (${res.statusCode}) changed stored state: ${what}\n${firstDifference(before[i] ?? '', after[i] ?? '')}`);
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

// --- arbitraries ---

/** A string of 1 MiB, and one just under the body limit once quoted in a small object. */
export const MIB = 1024 * 1024;
const ONE_MIB = 'x'.repeat(MIB);
const NEAR_LIMIT = 'y'.repeat(MIB - 512);
const LONG = [ONE_MIB, NEAR_LIMIT, 'a'.repeat(70_000), '\u0000'.repeat(70_000), 'é'.repeat(70_000), '\uD800'.repeat(70_000), '🙂'.repeat(70_000)];

const awkwardStrings = [
  '', ' ', '\t', '\u0000', 'a\u0000b', '\u0000'.repeat(64), '\uD800', 'a\uDFFFb', '\uFEFF', '\u202Eevil', '\r\n', 'é', 'e\u0301', '𝕏𝕐',
  '你好', 'ﷺ', '%00', '%', '%zz', '../../etc/passwd', '\\', '"', "'", "'; DROP TABLE cabinets; --", '${x}', '{{7*7}}', '<script>',
  'null', 'true', 'false', '0', '-1', '1e309', 'NaN', 'Infinity', '__proto__', 'constructor', 'open', 'agree', 'close ', 'OPEN',
  'x'.repeat(64), 'x'.repeat(65), 'x'.repeat(100), 'x'.repeat(101), 'x'.repeat(200), 'x'.repeat(201), 'x'.repeat(601), 'x'.repeat(1001),
];

/** Any code point, lone surrogates and NUL included (fast-check's own "binary" unit costs a second
 * of set-up per process). */
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c));

/** Strings an honest client never sends: control characters, lone surrogates, unicode, huge. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...awkwardStrings) },
  { weight: 3, arbitrary: fc.string({ unit: anyCodePoint, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(...LONG) },
);

/** Numbers at and past every boundary a field could have. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 1.5, -1.5, 0.1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 1e308, -1e308, 5e-324, 604_800, 604_801, 86_400),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.maxSafeInteger(),
);

/** Values that have broken a database layer somewhere: NUL (text cannot hold it), lone surrogates
 * (jsonb refuses their escapes), NUL in an object key. */
export const POISON: readonly unknown[] = ['a\u0000b', 'a\uDC00b', { 'k\u0000': 1 }, { k: ['\uD800'] }, ['\u0000']];
export const poisonValue: fc.Arbitrary<unknown> = fc.constantFrom(...POISON);

/** JSON-ish values of every type, including nested containers. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.oneof(hostileNumber, fc.string({ maxLength: 8 }), fc.constant(null)), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Raw JSON text no JSON.stringify produces (or produces only for other values): out-of-range and
 * unusual number literals, escapes, deep nesting, and a few that are not JSON at all. */
export const rawJsonToken: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '1e999', '-1e999', '123456789012345678901234567890', '1.0', '-0', '0.1e1', '1E2', '1e-400', '2147483648', '9007199254740993',
    '"\\u0000"', '"\\ud800"', '"\\udfff\\ud800"', '"\\u0041\\u0000"', '"\\/"', '{}', '[]', '[[]]', '{"":{}}', '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    // not JSON: the whole body is refused with 400
    'NaN', 'Infinity', '0x10', '01', '+1', '.5', "'a'", 'undefined', '"\\x41"', '[1,]', '{"a":1,}', '"\u0001"',
  ),
  fc.constantFrom(100, 1000, 10_000, 100_000).chain((depth) =>
    fc.constantFrom('[' .repeat(depth) + ']'.repeat(depth), '{"a":'.repeat(depth) + '1' + '}'.repeat(depth), '[{"a":'.repeat(depth) + 'null' + '}]'.repeat(depth)),
  ),
);

const RAW = '\u0001raw\u0001';
const PLACEHOLDER = JSON.stringify(RAW);

export type BodyCase = { contentType: string | null; payload: string | Buffer | undefined };

const json = (payload: string | Buffer): BodyCase => ({ contentType: 'application/json', payload });

/** A change to a valid body: the field (a dotted path: "cabinets.0.key") and what to do to it. */
const fieldEdit = (fields: readonly string[]) =>
  fc.record({
    field: fields.length > 0 ? fc.constantFrom(...fields) : fc.constant('x'),
    edit: fc.oneof(
      { weight: 1, arbitrary: fc.constant({ kind: 'delete' as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'null' as const }) },
      { weight: 4, arbitrary: hostileValue.map((value) => ({ kind: 'set' as const, value })) },
      { weight: 2, arbitrary: poisonValue.map((value) => ({ kind: 'set' as const, value })) },
      { weight: 2, arbitrary: rawJsonToken.map((raw) => ({ kind: 'raw' as const, raw })) },
    ),
  });

type Edit = { kind: 'delete' } | { kind: 'null' } | { kind: 'set'; value: unknown } | { kind: 'raw'; raw: string };

/** Applies an edit at a dotted path, making the containers on the way when they are missing. */
function applyEdit(body: Record<string, unknown>, path: string, edit: Edit): void {
  const keys = path.split('.');
  let node: Record<string, unknown> = body;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1] ?? path;
  if (edit.kind === 'delete') delete node[last];
  else if (edit.kind === 'raw') node[last] = RAW;
  else node[last] = edit.kind === 'null' ? null : edit.value;
}

/** A valid body with edits, as JSON text (raw edits spliced in where their placeholder is). */
export function editedBody(valid: Record<string, unknown>, edits: readonly { field: string; edit: Edit }[], extra: Record<string, unknown> = {}): string {
  const body: Record<string, unknown> = { ...extra, ...structuredClone(valid) };
  const raws: string[] = [];
  for (const { field, edit } of edits) {
    applyEdit(body, field, edit);
    if (edit.kind === 'raw') raws.push(edit.raw);
  }
  let text = JSON.stringify(body);
  // Each placeholder still in the body takes the next raw token (an edit may have been overwritten).
  for (const raw of raws) text = text.replace(PLACEHOLDER, raw);
  return text.split(PLACEHOLDER).join('null');
}

const contentTypes = [
  'text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/octet-stream', 'application/json; charset=utf-16',
  'application/json; charset=latin1', 'APPLICATION/JSON', 'application/json;charset="utf-8"', 'application/vnd.api+json',
  'application/json-patch+json', 'application/json, text/plain', 'application/jsonx', 'json', '*/*', ';', 'application/x-www-form-urlencoded; charset=utf-16',
];

/**
 * Bodies for an operation whose valid bodies are `valid`: valid bodies with fields removed, nulled
 * or of the wrong type (`fields` are dotted paths, nested ones included), unknown fields added, raw
 * number literals and deep nesting in a field, other JSON values at the top, text that is not
 * JSON, bytes that are not UTF-8, wrong content types and charsets, too large, and no body at all.
 */
export function bodyCases(valid: fc.Arbitrary<Record<string, unknown>>, fields: readonly string[]): fc.Arbitrary<BodyCase> {
  const topFields = [...new Set(fields.map((f) => f.split('.')[0] ?? f))];
  const unknownName = fc.string({ maxLength: 12 }).filter((k) => !topFields.includes(k));
  const edited = fc.tuple(valid, fc.array(fieldEdit(fields), { minLength: 1, maxLength: 3 }), fc.dictionary(unknownName, hostileValue, { maxKeys: 2 }))
    .map(([v, edits, extra]) => json(editedBody(v, edits, extra)));
  const extraOnly = fc.tuple(valid, fc.dictionary(unknownName, hostileValue, { minKeys: 1, maxKeys: 4 }))
    .map(([v, extra]) => json(JSON.stringify({ ...extra, ...v })));
  const raw = fc.tuple(valid, fc.constantFrom(...fields, 'unknown_field'), rawJsonToken)
    .map(([v, field, raw]) => json(editedBody(v, [{ field, edit: { kind: 'raw', raw } }])));
  const topLevel = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom<unknown>([], 'x', 0, true, null), valid.map((v) => [v]))
    .map((value) => json(JSON.stringify(value)));
  const notJson = fc.oneof(
    fc.string({ unit: anyCodePoint, maxLength: 60 }),
    fc.constantFrom('{', '}', '{"a":', '[1,2', '\uFEFF{}', 'null null', '{}{}', ' ', '\n'),
    valid.map((v) => `\uFEFF${JSON.stringify(v)}`),
    valid.map((v) => `${JSON.stringify(v)}x`),
  ).map((text) => json(text));
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    valid.map((v) => Buffer.from(JSON.stringify(v), 'utf16le')),
    fc.constant(Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80]), Buffer.from('"}')])),
  ).map((b) => json(b));
  const wrongType = fc.tuple(valid, fc.constantFrom(...contentTypes)).map(([v, contentType]) => ({ contentType, payload: JSON.stringify(v) }));
  const form = valid.map((v) => ({
    contentType: 'application/x-www-form-urlencoded',
    payload: new URLSearchParams(Object.entries(v).map(([k, x]): [string, string] => [k, typeof x === 'string' ? x : JSON.stringify(x)])).toString(),
  }));
  const empty = fc.oneof(
    fc.constantFrom<BodyCase>(
      { contentType: 'application/json', payload: '' },
      { contentType: 'application/json', payload: undefined },
      { contentType: null, payload: undefined },
    ),
    valid.map((v): BodyCase => ({ contentType: null, payload: JSON.stringify(v) })),
    valid.map((v): BodyCase => ({ contentType: '', payload: JSON.stringify(v) })),
  );
  const huge = fc.tuple(valid, fc.constantFrom(MIB + 1, 2 * MIB)).map(([v, n]) => json(JSON.stringify({ ...v, pad: 'z'.repeat(n) })));
  return fc.oneof(
    // Valid bodies as they are: the business rules behind validation are reached too.
    { weight: 8, arbitrary: valid.map((v) => json(JSON.stringify(v))) },
    { weight: 10, arbitrary: edited },
    { weight: 2, arbitrary: extraOnly },
    { weight: 4, arbitrary: raw },
    { weight: 2, arbitrary: topLevel },
    { weight: 2, arbitrary: notJson },
    { weight: 1, arbitrary: bytes },
    { weight: 2, arbitrary: wrongType },
    { weight: 1, arbitrary: form },
    { weight: 2, arbitrary: empty },
    { weight: 1, arbitrary: huge },
  );
}

/** Valid bodies with unknown fields added: the contract ignores unknown fields. Keys that could
 * poison a prototype (`__proto__`, `constructor`) are left out at any depth: Fastify refuses those
 * bodies with 400 on purpose (docs/security.md). */
export function withUnknownFields(valid: fc.Arbitrary<Record<string, unknown>>, known: readonly string[]): fc.Arbitrary<string> {
  const name = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !known.includes(k));
  return fc.tuple(valid, fc.dictionary(name, hostileValue.filter((v) => typeof v !== 'string' || v.length < 10_000), { minKeys: 1, maxKeys: 4 }))
    .map(([v, extra]) => JSON.stringify({ ...extra, ...v }))
    .filter((text) => !/"(__proto__|constructor)"/.test(text));
}

export function withBody(probe: Omit<Probe, 'payload'>, body: BodyCase): Probe {
  const headers = { ...(probe.headers ?? {}) };
  if (body.contentType !== null) headers['content-type'] = body.contentType;
  return { ...probe, headers, payload: body.payload };
}

/** A path segment as it appears in the URL (already encoded): ids at and past every limit,
 * negative, fractional, unicode, NUL, percent-encoding that does not decode, 1 MiB. */
export function pathSegment(good: readonly string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: good.length > 0 ? 12 : 0, arbitrary: good.length > 0 ? fc.constantFrom(...good) : fc.constant('1') },
    { weight: 3, arbitrary: hostileNumber.map((n) => encodeURIComponent(String(n))) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '0', '-1', '1.5', '1e3', '0x10', '+1', ' 1', '1 ', '%201', '00001', '99999999999999999999999', '2147483648', '-2147483649',
        '%00', 'a%00b', '%', '%zz', '%E2%82', '%C0%80', '%FF', '%2F', '%2e%2e', '..', '.', '%25', '%u0041', 'null', 'undefined',
        '%F0%9D%95%8F', encodeURIComponent('你好'), 'x'.repeat(100), 'x'.repeat(101), 'x'.repeat(MIB),
      ),
    },
    { weight: 2, arbitrary: hostileString.filter((s) => s.length < 2000).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '?'))) },
  );
}

/** A query value as it appears in the URL (already encoded). */
export const queryValue: fc.Arbitrary<string> = pathSegment();

/** Extra query parameters: unknown names, repeated names, odd encodings. */
export const extraQuery: fc.Arbitrary<string> = fc.oneof(
  fc.constant(''),
  fc.constantFrom('&x=1', '&secret_token=', '&&', '&=', '&%00=%00', '&a[b]=c', '&__proto__=1', '&message_id=', `&pad=${'p'.repeat(MIB)}`),
  fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([k, v]) => `&${encodeURIComponent(k)}=${encodeURIComponent(v)}`),
);

/** Raw JSON that has broken a parser, a validator or a database somewhere: deep nesting, numbers
 * past every range (NUL and lone surrogates are in POISON: JSON.stringify escapes them). */
export const RAW_POISON: readonly string[] = ['{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), '1e999', '123456789012345678901234567890', '-0', '2147483648'];

/** Every poison at every field of a valid body, as JSON texts: the exhaustive companion of the
 * random properties, so the known-dangerous cases never depend on luck. */
export function poisonBodies(valid: Record<string, unknown>, fields: readonly string[]): string[] {
  const bodies: string[] = [];
  for (const field of [...fields, 'unknown_field', 'unknown.nested']) {
    for (const value of POISON) bodies.push(editedBody(valid, [{ field, edit: { kind: 'set', value } }]));
    for (const raw of RAW_POISON) bodies.push(editedBody(valid, [{ field, edit: { kind: 'raw', raw } }]));
  }
  return bodies;
}

/** Holds every probe to the contract (no 5xx, errors in shape, a refusal changes nothing). */
export async function holdEach(app: App, db: Db, worlds: readonly WorldRef[], probes: readonly Probe[]): Promise<void> {
  const guard = refusalGuard(app, db, worlds);
  for (const probe of probes) await guard(probe);
}

/** Runs a property over probes, holding each answer to the contract; returns how often each status came. */
export async function holdProperty(app: App, db: Db, worlds: readonly WorldRef[], probes: fc.Arbitrary<Probe>, numRuns: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  const guard = refusalGuard(app, db, worlds);
  await fc.assert(
    fc.asyncProperty(probes, async (probe) => {
      const res = await guard(probe);
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }),
    { numRuns },
  );
  return statuses;
}

/** A suite that only ever saw its own 4xx proves little: the valid path must be reached too. */
export function reached(statuses: Map<number, number>, ...wanted: number[]): void {
  for (const status of wanted) assert.ok(statuses.has(status), `status ${status} was reached: ${JSON.stringify([...statuses])}`);
}
