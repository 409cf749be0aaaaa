// Clients generated from docs/openapi.json by two generators compile under tsc --strict, and the
// generated client calls a secret_token operation of a running service without tricks.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorld, TEST_SECRET, testApp } from '../support/world.ts';

const root = path.resolve(import.meta.dirname, '../..');
const documentFile = path.join(root, 'docs/openapi.json');

function run(args: string[], cwd: string): void {
  const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1' } });
  assert.equal(result.status, 0, `${args.join(' ')}\n${result.stdout}${result.stderr}`);
}

test('openapi-typescript and @hey-api/openapi-ts clients compile under tsc --strict and call getLocationLockers', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-clients-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));

  run([path.join(root, 'node_modules/openapi-typescript/bin/cli.js'), documentFile, '-o', path.join(dir, 'schema.d.ts')], dir);
  run(
    [
      path.join(root, 'node_modules/@hey-api/openapi-ts/bin/run.js'),
      '-i',
      documentFile,
      '-o',
      path.join(dir, 'hey'),
      '-c',
      '@hey-api/client-fetch',
      '--no-log-file',
      '--silent',
    ],
    dir,
  );

  // What a client's author writes: typed calls, with secret_token as the query parameter it is.
  fs.writeFileSync(
    path.join(dir, 'use.ts'),
    `
import type { paths, components } from './schema.js';
import { createClient } from './hey/client/index.js';
import { getLocationLockers, createLockerOrder } from './hey/sdk.gen.js';
import type { Locker, CreateLockerOrderConflictError } from './hey/types.gen.js';

type Query = paths['/api/lockers/locations/{location_id}']['get']['parameters']['query'];
export const query: Query = { secret_token: 'a-secret-of-16-chars' };
export type Listed = components['schemas']['Locker'];
export const conflict: CreateLockerOrderConflictError['code'] = 'cabinet_occupied';

export async function listLockers(baseUrl: string, secret: string, locationId: number): Promise<Locker[]> {
  const client = createClient({ baseUrl });
  const { data, error } = await getLocationLockers({ client, path: { location_id: locationId }, query: { secret_token: secret } });
  if (error !== undefined || data === undefined) throw new Error('refused: ' + JSON.stringify(error));
  return data;
}

export async function wrongSecret(baseUrl: string, locationId: number): Promise<number> {
  const client = createClient({ baseUrl });
  const { response } = await getLocationLockers({ client, path: { location_id: locationId }, query: { secret_token: 'not-the-secret-token' } });
  return response.status;
}
export const unused = createLockerOrder;
`,
  );
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        outDir: 'out',
        skipLibCheck: false,
        types: [],
        noUnusedLocals: false,
      },
      include: ['use.ts', 'schema.d.ts', 'hey/**/*.ts'],
    }),
  );
  run([path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);

  const ctx = await testApp({ t });
  const world = await makeWorld(ctx.db, ctx.clock);
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const client = (await import(path.join(dir, 'out/use.js'))) as {
    listLockers: (baseUrl: string, secret: string, locationId: number) => Promise<Array<{ id: number; cabinets: unknown[] }>>;
    wrongSecret: (baseUrl: string, locationId: number) => Promise<number>;
  };
  const lockers = await client.listLockers(address, TEST_SECRET, world.locationId);
  assert.ok(lockers.some((l) => l.id === world.lockerId && l.cabinets.length > 0));
  assert.equal(await client.wrongSecret(address, world.locationId), 401);
});
