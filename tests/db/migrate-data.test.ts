// npm run migrate-data: a data directory of the last release (PGlite in DATA_DIR/pglite, its
// migrations, rows in every table) converted into the embedded PostgreSQL server, every row equal,
// the service serving it; refused while a service runs or a database is already there; run again
// after it was killed half-way, it finishes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, test } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { writeBackupFile } from '../../src/db/backup/dump.ts';
import { openPgliteDb } from '../../src/db/backup/pglite.ts';
import { processAlive } from '../../src/db/data-dir-lock.ts';
import { openEmbeddedDb } from '../../src/db/embedded/open.ts';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { resolveSecretToken } from '../../src/http/secret-token.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { cleanupAll, root, startService, tempDir, waitFor } from '../../scripts/lib/processes.ts';

after(cleanupAll);

/** The last release with PGlite had the migrations up to this one. */
const LAST_RELEASE_MIGRATION = 25;
/**
 * The fixture is provisioned by this release's code, which writes the columns of later migrations:
 * each later migration is applied for that, then undone, leaving the last release's schema. A new
 * migration must say here how it is undone (the test fails until it does).
 */
const UNDO_LATER_MIGRATIONS: Record<number, string> = {
  26: 'ALTER TABLE call_buttons DROP COLUMN chat_channel_id; ALTER TABLE cfh_displays DROP COLUMN chat_channel_id',
  27: 'DROP VIEW device_attachments',
  28: `DROP TABLE audit_entries, sign_in_failures, sessions, store_devices, sso_role_mappings, memberships, people;
    ALTER TABLE api_tokens DROP COLUMN service_account_id, DROP COLUMN last_used_at; DROP TABLE service_accounts;
    DROP INDEX locations_id_organization;
    CREATE TABLE console_sessions (id bigserial PRIMARY KEY, session_hash text NOT NULL UNIQUE,
      api_token_id integer NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE, organization_id integer NOT NULL REFERENCES organizations (id),
      staff_name text NOT NULL, created_at timestamptz NOT NULL, last_seen_at timestamptz NOT NULL, ended_at timestamptz);
    CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);`,
  29: 'DROP TABLE sso_flows',
  30: `ALTER TABLE cfh_requests DROP CONSTRAINT cfh_requests_callbutton, DROP CONSTRAINT cfh_requests_display;
    DROP INDEX call_buttons_id_location; DROP INDEX cfh_displays_id_location;`,
  31: 'ALTER TABLE people DROP COLUMN sso_subject',
  32: `DROP SEQUENCE locations_admin_id, lockers_admin_id, cabinets_admin_id, cfh_options_admin_id, cfh_outcomes_admin_id, call_buttons_admin_id,
      cfh_displays_admin_id;
    ALTER TABLE locations DROP COLUMN enabled, DROP COLUMN version, DROP COLUMN managed_by;
    ALTER TABLE lockers DROP COLUMN enabled, DROP COLUMN object_version, DROP COLUMN managed_by;
    ALTER TABLE cfh_options DROP COLUMN enabled, DROP COLUMN version, DROP COLUMN managed_by;
    ALTER TABLE cfh_outcomes DROP COLUMN enabled, DROP COLUMN version, DROP COLUMN managed_by;
    ALTER TABLE call_buttons DROP COLUMN enabled, DROP COLUMN version, DROP COLUMN managed_by;
    ALTER TABLE cfh_displays DROP COLUMN enabled, DROP COLUMN version, DROP COLUMN managed_by;`,
  33: `ALTER TABLE webhook_endpoints ALTER COLUMN id DROP DEFAULT; DROP SEQUENCE webhook_endpoints_id_seq;
    ALTER TABLE webhook_endpoints DROP COLUMN version, DROP COLUMN managed_by, DROP COLUMN enabled;
    ALTER TABLE radio_edges DROP COLUMN version, DROP COLUMN managed_by, DROP COLUMN enabled;
    ALTER TABLE messaging_accounts DROP COLUMN version, DROP COLUMN managed_by, DROP COLUMN enabled;
    DROP INDEX IF EXISTS radio_edges_location;`,
  34: 'ALTER TABLE webhook_endpoints DROP COLUMN format',
  35: `DELETE FROM cfh_request_events WHERE kind = 'arrived';
    ALTER TABLE cfh_request_events DROP CONSTRAINT cfh_request_events_kind_check;
    ALTER TABLE cfh_request_events ADD CONSTRAINT cfh_request_events_kind_check
      CHECK (kind IN ('created', 'claimed', 'on_the_way', 'completed', 'canceled', 'timed_out', 'escalated', 'reminder'));
    ALTER TABLE cfh_requests DROP COLUMN employee_arrived_at;
    ALTER TABLE cfh_displays DROP COLUMN require_scan, DROP COLUMN scan_code_hash;
    ALTER TABLE call_buttons DROP COLUMN require_scan, DROP COLUMN scan_code_hash;
    ALTER TABLE cfh_options DROP COLUMN require_scan, DROP COLUMN scan_code_hash;`,
  36: 'DROP TABLE cfh_report_days, cfh_report_counts',
  37: 'DROP INDEX cfh_requests_open_per_browser, cfh_requests_display_created; ALTER TABLE cfh_requests DROP COLUMN browser_digest; ALTER TABLE cfh_display_presses DROP COLUMN address',
  38: 'DROP INDEX cfh_requests_closed_browser',
};
const TOKEN = 'example-api-token-change-me-00001'; // examples/provision.json's: cfh, radio, webhooks
const AUDIO = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.alloc(200_000, 0x5a)]);

/** Rows in the tables provisioning leaves empty, as the service writes them (ids from examples/provision.json). */
const ROWS = `
  INSERT INTO cfh_requests (message_id, organization_id, location_id, option_id, created_at, updated_at, source, custom_text)
    SELECT 'msg-' || i, 1, 10, 5, now() - i * interval '1 minute', now(), 'api', CASE WHEN i = 1 THEN 'Ünïcödé ☕ 😀 "quoted" \\ back' END
    FROM generate_series(1, 300) AS i;
  INSERT INTO cfh_request_events (request_id, kind, at, token_id, request_from) SELECT id, 'created', created_at, 1, 'web_interface' FROM cfh_requests;
  INSERT INTO webhook_endpoint_health (endpoint_id, failures, failing_since) VALUES (1, 3, now());
  INSERT INTO jobs (kind, payload, run_at, dedupe_key) VALUES ('cfh.timeout', '{"request": 1}', now() + interval '1 hour', 'cfh.timeout:1'), ('test.null', 'null', now() + interval '1 hour', NULL);
  INSERT INTO device_presence (kind, device_id, organization_id, location_id, last_seen_at, online) VALUES ('locker', '100', 1, 10, now(), true);
  INSERT INTO locker_orders (order_id, cabinet_id, locker_id, organization_id, location_id, open_code, rearload, created_at, updated_at, pickup_deadline)
    VALUES (9001, 1000, 100, 1, 10, '123456', false, now(), now(), now() + interval '72 hours');
  INSERT INTO locker_order_events (locker_order_id, kind, created_at) SELECT id, 'here', now() FROM locker_orders;
  INSERT INTO locker_status_events (locker_id, type, event, created_at) VALUES (100, 'status', '{"doors": [1, 2], "temperature": 3.75}', now());
  INSERT INTO cabinet_commands (command_id, cabinet_id, locker_id, command, door, source, created_at, run_at) VALUES (gen_random_uuid(), 1000, 100, 'open', 'front', 'staff', now(), now());
  INSERT INTO cfh_display_presses (display_id, client, last_at) VALUES (3, '192.0.2.1', now());
  INSERT INTO console_sessions (session_hash, api_token_id, organization_id, staff_name, created_at, last_seen_at) VALUES ('session-hash-1', 3, 1, 'Zoë', now(), now());
  INSERT INTO radio_messages (message_id, edge_id, organization_id, source, actor, text, spoken_text, processed, handlers, credential, audio_bytes, duration_ms, created_at)
    VALUES ('radio-1', 'store10-radio', 1, 'generic', 'chat-bot', 'Clean-up in aisle 5 ☕', 'Clean up in aisle five', true, '{normalize,chime}', 'token', ${AUDIO.length}, 120, now());
  INSERT INTO radio_transcripts (message_id, edge_id, created_at) VALUES ('radio-1', 'store10-radio', now());
  INSERT INTO radio_heard (edge_id, organization_id, location_id, heard_id, text, received_at, intent, outcome) VALUES ('store10-radio', 1, 10, 'heard-1', 'claim paint', now(), 'claim', 'done');
  INSERT INTO radio_open_requests (request_id, organization_id, location_id, message_id, status, opened_at, updated_at)
    SELECT id, 1, 10, message_id, 'created', now(), now() FROM cfh_requests ORDER BY id LIMIT 5;
`;

/** Where the last release's data directory is made: not one of cleanupAll's (each test ends with it). */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-pglite-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let pristine: string;
let expected: Dump;

interface Dump {
  header: { migrations: unknown[]; tables: string[] };
  rows: Map<string, string[]>;
  end: { counts: Record<string, number>; sequences: unknown };
}

/** A backup file read back: every table's rows, numbers kept as written (JSON.parse would round them). */
function readDump(file: string): Dump {
  const lines = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').split('\n').filter(Boolean);
  const exact = (_key: string, value: unknown, context?: { source?: string }) => (typeof value === 'number' ? `number:${context?.source}` : value);
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(1, -1)) {
    const batch = (JSON.parse as (text: string, reviver: typeof exact) => { table: string; rows: unknown[] })(line, exact);
    rows.set(batch.table, [...(rows.get(batch.table) ?? []), ...batch.rows.map((r) => JSON.stringify(r))]);
  }
  for (const list of rows.values()) list.sort();
  return { header: JSON.parse(lines[0] as string) as Dump['header'], rows, end: JSON.parse(lines.at(-1) as string) as Dump['end'] };
}

function npmRun(script: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; out: string }>((resolve) => child.on('exit', (code) => resolve({ code, out })));
  return { child, exited };
}

/** A copy of the last release's data directory, in a directory the embedded server's user can reach. */
function copyOfPristine(name: string): string {
  const dir = tempDir(name);
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'data');
  fs.cpSync(pristine, dataDir, { recursive: true });
  return dataDir;
}

let secretToken: string;

before(async () => {
  // Made once for the file: PGlite's initdb takes seconds and about 1 GB.
  pristine = path.join(dir, 'data');
  fs.mkdirSync(pristine);
  const pglite = await openPgliteDb(path.join(pristine, 'pglite'));
  try {
    await migrate(pglite);
    for (const example of ['examples/provision.json', 'examples/webhook.json']) {
      await applyProvisioning(pglite, systemClock, JSON.parse(fs.readFileSync(path.join(root, example), 'utf8')));
    }
    for (const m of readMigrations()
      .filter((later) => later.version > LAST_RELEASE_MIGRATION)
      .reverse()) {
      const undo = UNDO_LATER_MIGRATIONS[m.version];
      assert.ok(undo !== undefined, `say in UNDO_LATER_MIGRATIONS how migration ${m.version}_${m.name} is undone`);
      await pglite.query(undo);
      await pglite.query('DELETE FROM schema_migrations WHERE version = $1', [m.version]);
    }
    secretToken = (await resolveSecretToken(pglite, null)).generated as string;
    await pglite.query(ROWS);
    // Events written by transactions of their own: the event readers' places are among them.
    for (let i = 0; i < 30; i++) {
      await pglite.query(
        `INSERT INTO events (type, status, organization_id, location_id, internal_id, details, message, created_at)
         SELECT 'callforhelp', 'created', 1, 10, id::text, jsonb_build_object('message_id', message_id, 'exact', 12345678901234567890.000001, 'nothing', null), 'created', created_at
         FROM cfh_requests WHERE id % 30 = $1`,
        [i],
      );
    }
    await pglite.query(
      "UPDATE event_cursors SET (tx_id, event_id) = (SELECT tx_id, id FROM events ORDER BY tx_id, id OFFSET 150 LIMIT 1) WHERE subscriber = 'webhooks'",
    );
    await pglite.query(
      "INSERT INTO event_cursors (subscriber, tx_id, event_id) SELECT 'radio-announcements', tx_id, id FROM events ORDER BY tx_id DESC, id DESC LIMIT 1",
    );
    await pglite.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, location_key, state, next_attempt_at, retry_since, created_at, updated_at)
       SELECT 1, id, 10, 'pending', now(), now(), now(), now() FROM events ORDER BY tx_id, id LIMIT 150`,
    );
    await pglite.query(
      "INSERT INTO webhook_attempts (delivery_id, at, status_code, duration_ms, error) SELECT id, now(), 500, 12, 'refused' FROM webhook_deliveries LIMIT 10",
    );
    await pglite.query('INSERT INTO radio_audio (message_id, wav, created_at) VALUES ($1, $2, now())', ['radio-1', AUDIO]);
    await pglite.query(
      `INSERT INTO device_outbox (topic, payload, message_key, ack, audio_message_id) VALUES ('edges/store10-radio/play', '{"text": "é"}', 'key-1', 'null', 'radio-1')`,
    );
    const file = path.join(dir, 'expected.backup.gz');
    await writeBackupFile(pglite, file);
    expected = readDump(file);
  } finally {
    await pglite.close();
  }
  const empty = Object.entries(expected.end.counts)
    .filter(([, n]) => n === 0)
    .map(([t]) => t);
  assert.deepEqual(empty, [], "the last release's database has rows in every table");
});

test('the service refuses a data directory of the last release, naming npm run migrate-data, and changes nothing', async () => {
  const dataDir = copyOfPristine('refused');
  const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: '0', MQTT_PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 2);
  assert.match(
    err,
    new RegExp(
      `^storeops: DATA_DIR ${dataDir} holds the embedded database of an earlier release .* \`npm run migrate-data -- ${dataDir}\`, then start again\n$`,
    ),
  );
  assert.deepEqual(fs.readdirSync(dataDir), ['pglite']);
});

test('migrate-data converts every row of every table; the service serves them', async (t) => {
  t.after(cleanupAll);
  const dataDir = copyOfPristine('converted');
  const { code, out } = await npmRun('migrate-data', [dataDir]).exited;
  assert.equal(code, 0, out);
  assert.match(
    out,
    /storeops: converted \d+ rows in \d+ tables \(.*\) from .*pglite into the embedded PostgreSQL server in .*postgres \([\d.]+ s\); the earlier database is kept in .*pglite\.converted-[-\dTZ]+: delete it once satisfied\n$/,
  );
  t.diagnostic(out.trim().split('\n').at(-1) as string);
  const names = fs.readdirSync(dataDir).sort();
  assert.deepEqual(
    names.filter((n) => !n.startsWith('pglite.converted-')),
    ['postgres', 'postgres.log'],
  );
  assert.equal(names.filter((n) => n.startsWith('pglite.converted-')).length, 1, 'the PGlite directory is kept');

  const db = await openEmbeddedDb(dataDir);
  const file = path.join(path.dirname(dataDir), 'converted.backup.gz');
  try {
    await writeBackupFile(db, file);
  } finally {
    await db.close();
  }
  const actual = readDump(file);
  assert.deepEqual(actual.header.migrations, expected.header.migrations);
  assert.deepEqual(actual.header.tables, expected.header.tables);
  assert.deepEqual(actual.end.counts, expected.end.counts);
  assert.deepEqual(actual.end.sequences, expected.end.sequences);
  for (const table of expected.header.tables) assert.deepEqual(actual.rows.get(table), expected.rows.get(table), `every row of ${table}`);

  const service = await startService('converted', { DATA_DIR: dataDir });
  assert.doesNotMatch(service.output(), /SECRET_TOKEN was not set/, 'the secret token generated on PGlite is the one in force');
  const lockers = await fetch(`${service.url}/api/lockers/locations/10?secret_token=${secretToken}`);
  assert.equal(lockers.status, 200);
  const tracked = await fetch(`${service.url}/api/callforhelp/v1/tracking?message_id=msg-1`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(tracked.status, 200);
  const transcripts = await fetch(`${service.url}/api/radio/transcripts?edge_id=store10-radio`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(transcripts.status, 200);
  assert.match(await transcripts.text(), /Clean-up in aisle 5 ☕/);
  const audio = await fetch(`${service.url}/api/radio/messages/radio-1/audio`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(audio.status, 200);
  assert.ok(Buffer.from(await audio.arrayBuffer()).equals(AUDIO), 'the audio comes back byte for byte');
  assert.equal(await service.stop(), 0, service.output());
});

test('migrate-data refuses while the service runs, or without a database of the last release', async (t) => {
  t.after(cleanupAll);
  const dataDir = copyOfPristine('running');
  fs.writeFileSync(path.join(dataDir, 'storeops.lock'), String(process.pid)); // a live process holds it
  const running = await npmRun('migrate-data', [dataDir]).exited;
  assert.equal(running.code, 1);
  assert.match(
    running.out,
    new RegExp(`^storeops: migrate-data failed: the service \\(storeops process ${process.pid}\\) is running on ${dataDir}: stop it, then convert\n$`),
  );

  const empty = path.dirname(dataDir);
  const nothing = await npmRun('migrate-data', [empty]).exited;
  assert.equal(nothing.code, 1);
  assert.match(nothing.out, /holds no database of an earlier release \(no .*pglite\/PG_VERSION\): nothing to convert\n$/);
  const usage = await npmRun('migrate-data', []).exited;
  assert.equal(usage.code, 2);
  assert.match(usage.out, /^usage: npm run migrate-data -- DATA_DIR\n$/);
});

test('migrate-data killed half-way is run again: it stops the server the killed run left and converts', async (t) => {
  t.after(cleanupAll);
  const dataDir = copyOfPristine('killed');
  // Killed (with its process group) once its new server runs: that server is left running.
  const killed = npmRun('migrate-data', [dataDir]);
  const pidFile = path.join(dataDir, 'postgres.staging', 'postgres', 'postmaster.pid');
  await waitFor("the conversion's server", () => fs.existsSync(pidFile), { tries: 1200, everyMs: 50 });
  const leftover = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  const converter = Number(fs.readFileSync(path.join(dataDir, 'storeops.lock'), 'utf8').split(' ')[0]); // pid, then its start time
  process.kill(-(killed.child.pid as number), 'SIGKILL');
  await killed.exited;
  await waitFor('the killed conversion to be gone', () => !processAlive(converter));
  assert.ok(processAlive(leftover));
  assert.ok(!fs.existsSync(path.join(dataDir, 'postgres')) && fs.existsSync(path.join(dataDir, 'pglite', 'PG_VERSION')), 'nothing is in place yet');

  const rerun = await npmRun('migrate-data', [dataDir]).exited;
  assert.equal(rerun.code, 0, rerun.out);
  assert.match(rerun.out, /storeops: converted \d+ rows/);
  assert.ok(!processAlive(leftover), "the killed run's server was stopped");
  assert.ok(!fs.existsSync(path.join(dataDir, 'postgres.staging')));

  const done = await npmRun('migrate-data', [dataDir]).exited;
  assert.equal(done.code, 1);
  assert.match(done.out, /was converted already \(the earlier database is kept in .*pglite\.converted-.*\); start the service\n$/);
});

test('migrate-data killed between its two renames finishes; a database of this release beside is never overwritten', async (t) => {
  t.after(cleanupAll);
  const dataDir = copyOfPristine('renames');
  // The server in place, marked as the conversion's, and the PGlite directory not renamed yet.
  fs.mkdirSync(path.join(dataDir, 'postgres'));
  fs.writeFileSync(path.join(dataDir, 'postgres', 'PG_VERSION'), '18\n');
  fs.writeFileSync(path.join(dataDir, 'postgres', 'storeops-converted-from-pglite'), 'marker\n');
  const finish = await npmRun('migrate-data', [dataDir]).exited;
  assert.equal(finish.code, 0, finish.out);
  assert.match(finish.out, /^storeops: finished an interrupted conversion of .*; the earlier database is kept in .*pglite\.converted-/);
  assert.ok(!fs.existsSync(path.join(dataDir, 'pglite')));
  assert.deepEqual(fs.readdirSync(path.join(dataDir, 'postgres')), ['PG_VERSION']);

  const kept = fs.readdirSync(dataDir).find((n) => n.startsWith('pglite.converted-')) as string;
  fs.renameSync(path.join(dataDir, kept), path.join(dataDir, 'pglite'));
  const both = await npmRun('migrate-data', [dataDir]).exited;
  assert.equal(both.code, 1);
  assert.match(both.out, /postgres already holds a database, and .*pglite one of an earlier release; nothing was changed: move one of them away\n$/);
  assert.ok(fs.existsSync(path.join(dataDir, 'pglite', 'PG_VERSION')));
});
