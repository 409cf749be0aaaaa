// fast-check arbitraries of what an honest client never sends: hostile strings, numbers and JSON
// values, malformed bodies of every kind around a valid one, path segments and query values, and
// the known poisons at every field. Shared by the hostile-input and tenancy suites.
import fc from 'fast-check';
import type { Probe } from './contract.ts';

/** A string of 1 MiB, and one just under the body limit once quoted in a small object. */
export const MIB = 1024 * 1024;
const ONE_MIB = 'x'.repeat(MIB);
const NEAR_LIMIT = 'y'.repeat(MIB - 512);
const LONG = [ONE_MIB, NEAR_LIMIT, 'a'.repeat(70_000), '\u0000'.repeat(70_000), 'é'.repeat(70_000), '\uD800'.repeat(70_000), '🙂'.repeat(70_000)];

const awkwardStrings = [
  '',
  ' ',
  '\t',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(64),
  '\uD800',
  'a\uDFFFb',
  '\uFEFF',
  '\u202Eevil',
  '\r\n',
  'é',
  'e\u0301',
  '𝕏𝕐',
  '你好',
  'ﷺ',
  '%00',
  '%',
  '%zz',
  '../../etc/passwd',
  '\\',
  '"',
  "'",
  "'; DROP TABLE cabinets; --",
  '${x}',
  '{{7*7}}',
  '<script>',
  'null',
  'true',
  'false',
  '0',
  '-1',
  '1e309',
  'NaN',
  'Infinity',
  '__proto__',
  'constructor',
  'open',
  'agree',
  'close ',
  'OPEN',
  'x'.repeat(64),
  'x'.repeat(65),
  'x'.repeat(100),
  'x'.repeat(101),
  'x'.repeat(200),
  'x'.repeat(201),
  'x'.repeat(601),
  'x'.repeat(1001),
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
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    1.5,
    -1.5,
    0.1,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 32,
    2 ** 53 - 1,
    2 ** 53,
    2 ** 53 + 2,
    2 ** 63,
    1e308,
    -1e308,
    5e-324,
    604_800,
    604_801,
    86_400,
  ),
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
    '1e999',
    '-1e999',
    '123456789012345678901234567890',
    '1.0',
    '-0',
    '0.1e1',
    '1E2',
    '1e-400',
    '2147483648',
    '9007199254740993',
    '"\\u0000"',
    '"\\ud800"',
    '"\\udfff\\ud800"',
    '"\\u0041\\u0000"',
    '"\\/"',
    '{}',
    '[]',
    '[[]]',
    '{"":{}}',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    // not JSON: the whole body is refused with 400
    'NaN',
    'Infinity',
    '0x10',
    '01',
    '+1',
    '.5',
    "'a'",
    'undefined',
    '"\\x41"',
    '[1,]',
    '{"a":1,}',
    '"\u0001"',
  ),
  fc
    .constantFrom(100, 1000, 10_000, 100_000)
    .chain((depth) =>
      fc.constantFrom(
        '['.repeat(depth) + ']'.repeat(depth),
        '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
        '[{"a":'.repeat(depth) + 'null' + '}]'.repeat(depth),
      ),
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
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/json;charset="utf-8"',
  'application/vnd.api+json',
  'application/json-patch+json',
  'application/json, text/plain',
  'application/jsonx',
  'json',
  '*/*',
  ';',
  'application/x-www-form-urlencoded; charset=utf-16',
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
  const edited = fc
    .tuple(valid, fc.array(fieldEdit(fields), { minLength: 1, maxLength: 3 }), fc.dictionary(unknownName, hostileValue, { maxKeys: 2 }))
    .map(([v, edits, extra]) => json(editedBody(v, edits, extra)));
  const extraOnly = fc
    .tuple(valid, fc.dictionary(unknownName, hostileValue, { minKeys: 1, maxKeys: 4 }))
    .map(([v, extra]) => json(JSON.stringify({ ...extra, ...v })));
  const raw = fc
    .tuple(valid, fc.constantFrom(...fields, 'unknown_field'), rawJsonToken)
    .map(([v, field, raw]) => json(editedBody(v, [{ field, edit: { kind: 'raw', raw } }])));
  const topLevel = fc
    .oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom<unknown>([], 'x', 0, true, null),
      valid.map((v) => [v]),
    )
    .map((value) => json(JSON.stringify(value)));
  const notJson = fc
    .oneof(
      fc.string({ unit: anyCodePoint, maxLength: 60 }),
      fc.constantFrom('{', '}', '{"a":', '[1,2', '\uFEFF{}', 'null null', '{}{}', ' ', '\n'),
      valid.map((v) => `\uFEFF${JSON.stringify(v)}`),
      valid.map((v) => `${JSON.stringify(v)}x`),
    )
    .map((text) => json(text));
  const bytes = fc
    .oneof(
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      valid.map((v) => Buffer.from(JSON.stringify(v), 'utf16le')),
      fc.constant(Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80]), Buffer.from('"}')])),
    )
    .map((b) => json(b));
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
  return fc
    .tuple(
      valid,
      fc.dictionary(
        name,
        hostileValue.filter((v) => typeof v !== 'string' || v.length < 10_000),
        { minKeys: 1, maxKeys: 4 },
      ),
    )
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
        '0',
        '-1',
        '1.5',
        '1e3',
        '0x10',
        '+1',
        ' 1',
        '1 ',
        '%201',
        '00001',
        '99999999999999999999999',
        '2147483648',
        '-2147483649',
        '%00',
        'a%00b',
        '%',
        '%zz',
        '%E2%82',
        '%C0%80',
        '%FF',
        '%2F',
        '%2e%2e',
        '..',
        '.',
        '%25',
        '%u0041',
        'null',
        'undefined',
        '%F0%9D%95%8F',
        encodeURIComponent('你好'),
        'x'.repeat(100),
        'x'.repeat(101),
        'x'.repeat(MIB),
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
