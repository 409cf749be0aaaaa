// The harness's teardown: what a test builds for itself is closed when that test ends, not at the
// file's end (the tests of a file run one after another, so the next test sees it closed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshDb, testApp } from './world.ts';

let appClosed = false;
let dbClosed = false;

test('an app and a database built for a test', async (t) => {
  const ctx = await testApp({ t, extend: (app) => app.addHook('onClose', async () => void (appClosed = true)) });
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  const db = await freshDb({ t });
  const close = db.close.bind(db);
  db.close = async () => {
    await close();
    dbClosed = true;
  };
  assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
});

test('are closed when that test ends', () => {
  assert.equal(appClosed, true);
  assert.equal(dbClosed, true);
});
