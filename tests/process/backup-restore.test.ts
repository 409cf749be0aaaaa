// npm run backup while the service writes, npm run restore into an empty DATA_DIR, and a service
// started there: every request answered before the backup started is there, the copy is one
// snapshot, and the restored service goes on (new events reach the webhooks' reader).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, test } from 'node:test';
import { openEmbeddedDb } from '../../src/db/embedded/open.ts';
import { cleanupAll, dataDirIn, npmRun, startService, tempDir, waitFor } from '../../scripts/lib/processes.ts';

after(cleanupAll);

const TOKEN = 'backup-test-api-token-0123456789';
/** A store with Call for Help and a webhook endpoint (nobody listens: its deliveries stay pending),
 * and no radio edge: every request would be spoken, and the speech engines would hold the writes back. */
const PROVISIONING = {
  organizations: [{ id: 1, name: 'Backup test' }],
  locations: [{ id: 10, organization_id: 1, name: 'Store 10', store_number: '010', cfh_timeout_seconds: 300 }],
  cfh_options: [
    { id: 5, organization_id: 1, location_id: 10, text_en: 'Help', text_fr: 'Aide', prompt_en: 'Someone is coming', prompt_fr: "Quelqu'un arrive" },
  ],
  webhooks: [{ id: 1, organization_id: 1, url: 'http://127.0.0.1:9/', secret: 'backup-test-webhook-secret-0123456', events: ['callforhelp'] }],
  api_tokens: [{ name: 'test', organization_id: 1, scopes: ['cfh'], token: TOKEN }],
};
const SECRET = 'backup-test-secret-token-0123456789';
/** More event-writing transactions than a new server has used ids (about 1,000 after its start):
 * the restore must move the new server past the backup's numbering of them. */
const BEFORE = 1200;

async function createRequest(url: string): Promise<string | null> {
  const res = await fetch(`${url}/api/callforhelp/requests`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ location_id: 10, option_id: 5 }),
  });
  return res.status === 201 ? ((await res.json()) as { message_id: string }).message_id : null;
}

// Shared by the backup test and the restore test (each has a time limit of its own).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-backup-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
/** Each request answered, and whether the backup had started when it was. */
const answered: { id: string; beforeBackup: boolean }[] = [];
let made: string | null = null;

test('npm run backup while the service writes 8 requests at a time', async (t) => {
  t.after(cleanupAll);
  const provisioning = path.join(dir, 'provision.json');
  fs.writeFileSync(provisioning, JSON.stringify(PROVISIONING));
  const first = await startService('first', {
    DATA_DIR: dataDirIn(dir, 'first'),
    SECRET_TOKEN: SECRET,
    PROVISION_FILE: provisioning,
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });

  // Writers that keep going until told: each request's message id, and whether the backup had started when it was answered.
  let backupStarted = false;
  let writing = true;
  const writers = Array.from({ length: 8 }, async () => {
    while (writing) {
      const id = await createRequest(first.url);
      if (id !== null) answered.push({ id, beforeBackup: !backupStarted });
    }
  });
  await waitFor('the first requests', () => answered.length >= BEFORE, { tries: 1200, everyMs: 50 });

  const file = path.join(dir, 'store.backup.gz');
  backupStarted = true;
  const atStart = answered.length;
  const started = Date.now();
  const backup = await npmRun('backup', [file], { DATA_DIR: first.env.DATA_DIR as string });
  const backupMs = Date.now() - started;
  const duringBackup = answered.length - atStart;
  writing = false;
  await Promise.all(writers);
  assert.equal(backup.code, 0, backup.out);
  assert.match(backup.out, /^storeops: backed up \d+ rows in \d+ tables \(.*cfh_requests \d+.*\) to .*store\.backup\.gz \([\d.]+ MB, [\d.]+ s\)\n$/);
  assert.ok(duringBackup > 0, 'the service answered requests while the backup ran');
  t.diagnostic(`backup: ${backupMs} ms with npm, ${fs.statSync(file).size} bytes; ${atStart} requests before it, ${duringBackup} during it`);
  assert.equal(fs.readdirSync(dir).filter((n) => n.includes('partial')).length, 0);
  assert.equal(await first.stop(), 0, first.output().slice(-3000));
  made = file;
});

test('restored into an empty DATA_DIR: every request answered before the backup started, one snapshot, and the service goes on', async (t) => {
  t.after(cleanupAll);
  assert.ok(made !== null, 'the backup test made a file');
  const file = made;

  const second = dataDirIn(dir, 'second');
  const restore = await npmRun('restore', [file], { DATA_DIR: second });
  assert.equal(restore.code, 0, restore.out);
  assert.match(restore.out, /storeops: restored \d+ rows in \d+ tables .* into .*second\n$/);
  assert.deepEqual(fs.readdirSync(second).sort(), ['postgres', 'postgres.log'], 'nothing of the restore but the server and its log');

  const again = await npmRun('restore', [file], { DATA_DIR: second });
  assert.equal(again.code, 1);
  assert.match(again.out, /^storeops: restore failed: DATA_DIR .*second already holds a database .*; nothing was changed: restore only into an empty DATA_DIR/);

  const restored = await startService('restored', { DATA_DIR: second, SECRET_TOKEN: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true' });
  const db = await openEmbeddedDb(second, { attach: true });
  t.after(() => db.close());
  const ids = new Set((await db.query<{ message_id: string }>('SELECT message_id FROM cfh_requests')).map((r) => r.message_id));
  const before = answered.filter((a) => a.beforeBackup);
  assert.deepEqual(
    before.filter((a) => !ids.has(a.id)),
    [],
    'every request answered before the backup started is restored',
  );
  assert.ok(ids.size <= answered.length && [...ids].every((id) => answered.some((a) => a.id === id)), 'nothing else');
  // One snapshot: each request with the events its transaction wrote, although the tables were read one after another.
  const [consistent] = await db.query<{ requests: number; created: number; logged: number }>(
    `SELECT (SELECT count(*) FROM cfh_requests) AS requests,
       (SELECT count(*) FROM cfh_request_events WHERE kind = 'created') AS created,
       (SELECT count(*) FROM events WHERE type = 'callforhelp' AND status = 'created') AS logged`,
  );
  assert.deepEqual(consistent, { requests: ids.size, created: ids.size, logged: ids.size });
  for (const { id } of before.slice(0, 100)) {
    const res = await fetch(`${restored.url}/api/callforhelp/v1/tracking?message_id=${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200, `request ${id} answers after the restore`);
  }

  const [numbered] = await db.query<{ n: number }>('SELECT count(DISTINCT tx_id) AS n FROM events');
  assert.ok((numbered?.n ?? 0) > 1000, `the backup numbers more transactions (${numbered?.n}) than a new server has used`);
  const id = await createRequest(restored.url);
  assert.ok(id !== null);
  await waitFor("the new request's webhook delivery", async () => {
    const rows = await db.query(
      `SELECT 1 FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN cfh_requests r ON e.internal_id = r.id::text
       WHERE r.message_id = $1 AND e.status = 'created'`,
      [id],
    );
    return rows.length === 1;
  });
  assert.equal(await restored.stop(), 0, restored.output().slice(-3000));
});

test('backup and restore refuse, in one line, what they cannot do, and make nothing', async (t) => {
  t.after(cleanupAll);
  const dir = tempDir('refusals');
  const taken = path.join(dir, 'taken.gz');
  fs.writeFileSync(taken, 'precious');
  const env = { DATA_DIR: dataDirIn(dir, 'data') };

  const nowhere = await npmRun('backup', [path.join(dir, 'x.gz')], env);
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.out, /^storeops: backup failed: DATA_DIR .*data holds no database \(no .*data\/postgres\): set DATA_DIR to the service's\n$/);
  assert.equal(fs.existsSync(env.DATA_DIR), false, 'no server was made there');

  const overwrite = await npmRun('backup', [taken], env);
  assert.equal(overwrite.code, 1);
  assert.match(overwrite.out, /^storeops: backup failed: .*taken\.gz already exists: choose another name/);
  assert.equal(fs.readFileSync(taken, 'utf8'), 'precious');

  const external = await npmRun('backup', [path.join(dir, 'x.gz')], { ...env, DATABASE_URL: 'postgresql://u@127.0.0.1:1/db' });
  assert.equal(external.code, 2);
  assert.match(external.out, /^storeops: configuration error: DATABASE_URL: .*pg_dump -Fc \(docs\/operations\.md, Backups\)\n$/);
  const externalRestore = await npmRun('restore', [taken], { ...env, DATABASE_URL: 'postgresql://u@127.0.0.1:1/db' });
  assert.equal(externalRestore.code, 2);
  assert.match(externalRestore.out, /pg_restore/);

  const newer = path.join(dir, 'newer.gz');
  const header = {
    format: 'storeops-backup',
    version: 1,
    made_at: new Date().toISOString(),
    migrations: [
      { version: 1, name: 'foundation' },
      { version: 999, name: 'from_the_future' },
    ],
    tables: [],
  };
  fs.writeFileSync(newer, zlib.gzipSync(`${JSON.stringify(header)}\n{"end":true,"counts":{}}\n`));
  const future = await npmRun('restore', [newer], env);
  assert.equal(future.code, 1);
  assert.match(
    future.out,
    /^storeops: restore failed: .*newer\.gz was made by a newer release of storeops \(its migration 999_from_the_future is unknown to this one\)/,
  );

  const notBackup = await npmRun('restore', [taken], env);
  assert.equal(notBackup.code, 1);
  assert.match(notBackup.out, /^storeops: restore failed: .*taken\.gz is not a storeops backup or is damaged/);
  assert.equal(fs.existsSync(env.DATA_DIR), false, 'no DATA_DIR was made');

  const usage = await npmRun('restore', [], env);
  assert.equal(usage.code, 2);
  assert.match(usage.out, /^usage: npm run restore -- FILE/);
});
