// Commit signals: a change that queued device messages or wrote events wakes their listeners once
// it commits (on every instance), never before and never when it rolls back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDb, type Db } from '../../src/db/db.ts';
import { testDb, testDatabaseUrl } from '../support/world.ts';

const db = await testDb();

function counter(on: Db, signal: 'events' | 'device_outbox') {
  let count = 0;
  const off = on.commits.on(signal, () => count++);
  return {
    get count() {
      return count;
    },
    off,
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
}

test("a transaction wakes its signal's listeners after it commits, and not when it rolls back", async () => {
  const heard = counter(db, 'device_outbox');
  try {
    await db.tx(async (q) => {
      q.signal('device_outbox');
      await turn();
      await turn();
      assert.equal(heard.count, 0, 'nothing is woken before the commit');
    });
    await until(() => heard.count === 1);
    assert.equal(heard.count, 1);
    await assert.rejects(
      db.tx(async (q) => {
        q.signal('device_outbox');
        throw new Error('the change fails');
      }),
    );
    await turn();
    await turn();
    assert.equal(heard.count, 1, 'a rolled-back change wakes nobody');
  } finally {
    heard.off();
  }
});

test('a one-statement change signals once its statement succeeded, and refuses a second statement', async () => {
  const heard = counter(db, 'events');
  try {
    await db.statement(async (q) => {
      q.signal('events');
      await q.query('SELECT 1');
    });
    await until(() => heard.count === 1);
    assert.equal(heard.count, 1);
    await assert.rejects(
      db.statement(async (q) => {
        await q.query('SELECT 1');
        await q.query('SELECT 2');
      }),
      /one query/,
    );
  } finally {
    heard.off();
  }
});

test('a commit on one instance wakes the listeners of another', async () => {
  const other = await openDb({ url: await testDatabaseUrl(), poolSize: 2 });
  const heard = counter(other, 'events');
  try {
    await other.commits.listening();
    await db.tx(async (q) => {
      q.signal('events');
      await q.query('SELECT 1');
    });
    await until(() => heard.count >= 1);
    assert.ok(heard.count >= 1, 'the other instance was woken');
  } finally {
    heard.off();
    await other.close();
  }
});
