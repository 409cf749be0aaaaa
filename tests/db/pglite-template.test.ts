// A new embedded database is a copy of the shipped template, not PGlite's initdb (which peaked the
// first start at over 1 GB); the template must be of the installed PGlite.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDb } from '../../src/db/db.ts';
import { extractTar, installedPgliteVersion, seedPgliteDataDir, templateVersion } from '../../src/db/pglite-template.ts';

test('the shipped template was made by the installed PGlite', () => {
  assert.equal(
    templateVersion(), installedPgliteVersion(),
    'src/db/pglite-template/ is of another PGlite: remake it with `npm run pglite-template` and commit it (otherwise a first start runs initdb, over 1 GB)',
  );
});

test('a new data directory is seeded from the template and opens as a database; an existing one is left alone', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-template-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  assert.equal(seedPgliteDataDir(path.join(dir, 'pglite')), true);
  assert.ok(fs.existsSync(path.join(dir, 'pglite', 'PG_VERSION')));
  assert.deepEqual(fs.readdirSync(dir).sort(), ['pglite'], 'no staging directory left behind');
  const db = await openDb({ kind: 'pglite', dataDir: dir });
  await db.query('CREATE TABLE seeded (id int)');
  await db.query('INSERT INTO seeded VALUES (1)');
  await db.close();
  assert.equal(seedPgliteDataDir(path.join(dir, 'pglite')), false, 'a database already there is never replaced');
  const again = await openDb({ kind: 'pglite', dataDir: dir });
  assert.deepEqual(await again.query('SELECT id FROM seeded'), [{ id: 1 }]);
  await again.close();
});

test('a template entry that would land outside the directory is refused', () => {
  const header = Buffer.alloc(512);
  header.write('../escape', 0, 'latin1');
  header.write('0000000\0', 124, 'latin1');
  header.write('0', 156, 'latin1');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-template-'));
  try {
    assert.throws(() => extractTar(Buffer.concat([header, Buffer.alloc(1024)]), dir), /outside its directory/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
