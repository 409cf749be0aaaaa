// The OpenAPI document as a client's author meets it: the committed copy is what the service serves,
// it lints clean, and every operation has what a client generator needs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { formatDocument, OPENAPI_FILE } from '../../src/cli/openapi.ts';
import { testApp } from '../support/world.ts';

const root = path.resolve(import.meta.dirname, '../..');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Operation {
  method: string;
  path: string;
  op: Json;
}

async function servedDocument(t: test.TestContext): Promise<Json> {
  const ctx = await testApp({ t });
  const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  return res.json() as Json;
}

function operations(doc: Json): Operation[] {
  return Object.entries(doc.paths as Json).flatMap(([p, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => ['get', 'put', 'post', 'delete', 'patch'].includes(m))
      .map(([method, op]) => ({ method, path: p, op: op as Json })),
  );
}

const resolve = (doc: Json, schema: Json): Json =>
  typeof schema?.$ref === 'string' ? doc.components.schemas[String(schema.$ref).split('/').at(-1) as string] : schema;

test('docs/openapi.json is exactly the document the service serves', async (t) => {
  const served = formatDocument(await servedDocument(t));
  const committed = fs.existsSync(OPENAPI_FILE) ? fs.readFileSync(OPENAPI_FILE, 'utf8') : '';
  assert.ok(committed === served, 'docs/openapi.json differs from what GET /openapi.json serves: regenerate it with `npm run openapi` and commit it');
});

test('redocly lint (recommended rules) finds no error and no warning in docs/openapi.json', () => {
  const result = spawnSync(process.execPath, [path.join(root, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', 'docs/openapi.json', '--format=stylish'], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  const output = `${result.stdout}${result.stderr}`;
  assert.equal(result.status, 0, output);
  assert.doesNotMatch(output, /\bwarning\b/i, output);
  assert.match(output, /valid/);
});

test('every operation has a summary, tags, security, an example and named schemas', async (t) => {
  const doc = await servedDocument(t);
  const ops = operations(doc);
  assert.ok(ops.length >= 20);
  for (const { method, path: p, op } of ops) {
    const where = `${method.toUpperCase()} ${p}`;
    assert.ok(typeof op.operationId === 'string', `${where}: operationId`);
    assert.ok(typeof op.summary === 'string' && op.summary.length > 0, `${where}: summary`);
    assert.ok(Array.isArray(op.tags) && op.tags.length > 0, `${where}: tags`);
    assert.ok(Array.isArray(op.security), `${where}: security (an empty list when open)`);
    let examples = 0;
    for (const [status, response] of Object.entries(op.responses as Json)) {
      for (const [type, media] of Object.entries((response as Json).content ?? {})) {
        if (!/json/.test(type)) continue;
        const m = media as Json;
        const schema = m.schema.type === 'array' ? m.schema.items : m.schema;
        assert.ok(typeof schema.$ref === 'string', `${where} ${status}: a named component, not an inline schema`);
        if (m.example !== undefined) examples++;
        if (!status.startsWith('2')) {
          const code = resolve(doc, m.schema).properties.code;
          assert.ok(Array.isArray(code.enum) && code.enum.length > 0, `${where} ${status}: code is an enum`);
        }
      }
    }
    const body = op.requestBody?.content?.['application/json'];
    if (body) assert.ok(typeof body.schema.$ref === 'string', `${where}: the body is a named component`);
    assert.ok(examples > 0 || Object.values(op.responses as Json).every((r) => !(r as Json).content?.['application/json']), `${where}: an example`);
  }
});

test('the secret_token operations declare it as a required query parameter beside the security scheme', async (t) => {
  const doc = await servedDocument(t);
  const ids = [
    'getLocationLockers',
    'createLockerOrder',
    'commandCabinet',
    'completeCabinetOrder',
    'commandByOpenCode',
    'completeOrderByOpenCode',
    'cancelLockerOrder',
    'renewOpenCode',
  ];
  for (const id of ids) {
    const found = operations(doc).find((o) => o.op.operationId === id);
    assert.ok(found, id);
    assert.deepEqual(found.op.security, [{ secretToken: [] }], id);
    const param = (found.op.parameters as Json[]).find((p) => p.name === 'secret_token');
    assert.ok(param && param.in === 'query' && param.required === true, `${id}: secret_token is a required query parameter`);
  }
});

test('/readyz documents its 503 and /healthz its 200', async (t) => {
  const doc = await servedDocument(t);
  assert.ok(doc.paths['/readyz'].get.responses['503'], '/readyz 503');
  assert.ok(doc.paths['/healthz'].get.responses['200'], '/healthz 200');
});

test('every error code the source throws is documented under its status', async (t) => {
  const doc = await servedDocument(t);
  const documented = new Map<string, Set<string>>();
  for (const { op } of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses as Json)) {
      const schema = (response as Json).content?.['application/json']?.schema;
      const codes = schema ? resolve(doc, schema)?.properties?.code?.enum : undefined;
      if (Array.isArray(codes)) for (const c of codes) (documented.get(status) ?? documented.set(status, new Set()).get(status))?.add(c);
    }
  }
  const thrown: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        for (const m of fs.readFileSync(full, 'utf8').matchAll(/AppError\(\s*(\d{3}),\s*'([a-z_]+)'/g)) thrown.push(`${m[1]} ${m[2]}`);
      }
    }
  };
  walk(path.join(root, 'src'));
  assert.ok(thrown.length > 10);
  const missing = [...new Set(thrown)].filter((t) => {
    const [status, code] = t.split(' ') as [string, string];
    return !documented.get(status)?.has(code);
  });
  assert.deepEqual(
    missing,
    [],
    'codes thrown in src/ but in no operation of the document: add them to the route (errorResponse(description, codes)) or to ERROR_CODES in src/http/errors.ts',
  );
});
