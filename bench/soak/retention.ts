// npm run soak:retention  [-- --days N]
// Retention under a steady load: the service composed in this process with a manual clock and
// RETENTION_DAYS=1, on a throwaway PostgreSQL database (BENCH_DATABASE_URL) or else the embedded
// PostgreSQL server the service starts in its DATA_DIR. Each simulated day plays R1 announcements
// (with the transcript handler), runs CFH cycles and locker orders, acks every device message as
// the devices would, hands the event log to its subscribers, sweeps retention and vacuums; then
// prints the database's size and the main tables'.
// Once the window has passed, what retention deletes stops growing: only requests and orders
// (kept for the reports) still do, by their small rows.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/clock.ts';
import { compose, type Service } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { freshPostgres } from '../harness/database.ts';

const args = process.argv.slice(2);
const daysIndex = args.indexOf('--days');
const DAYS = daysIndex >= 0 ? Number(args[daysIndex + 1]) : 8;
const HOURS = 12; // trading hours simulated per day
const PER_HOUR = { plays: 4, requests: 6, orders: 6 };
const LOCATION = 1001;
const LOCKER = 100101;
const CABINETS = Array.from({ length: 16 }, (_, i) => LOCKER * 100 + i + 1);
const EDGE = 'soak-radio';
const TABLES = ['device_outbox', 'radio_audio', 'events', 'cfh_request_events', 'cfh_requests', 'locker_orders'];

const token = crypto.randomBytes(18).toString('base64url');
const edgeKey = crypto.randomBytes(18).toString('base64url');
const secret = crypto.randomBytes(18).toString('base64url');
const world = {
  organizations: [{ id: 1, name: 'Soak Grocery' }],
  locations: [{ id: LOCATION, organization_id: 1, name: 'Store', time_zone: 'America/Toronto' }],
  lockers: [
    {
      id: LOCKER,
      location_id: LOCATION,
      name: 'Lockers',
      version: 2,
      rear_loading_available: true,
      timer: 30,
      api_key: crypto.randomBytes(18).toString('base64url'),
      cabinets: CABINETS.map((id, i) => ({ id, key: i + 1, size: 'medium', thermal_mode: 'ambient' })),
    },
  ],
  cfh_options: [
    { id: 5001, organization_id: 1, location_id: LOCATION, text_en: 'Help', text_fr: 'Aide', prompt_en: 'Someone is coming', prompt_fr: "Quelqu'un arrive" },
  ],
  radio_edges: [{ edge_id: EDGE, location_id: LOCATION, name: 'Radio', device_key: edgeKey, voice_handlers: ['transcript'] }],
  api_tokens: [{ name: 'soak', organization_id: 1, scopes: ['cfh', 'radio', 'reports'], token }],
};

function expect(res: { statusCode: number; body: string }, status: number, what: string): void {
  if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode} ${res.body}`);
}

async function hour(service: Service, clock: ManualClock, orderSeq: { n: number }): Promise<void> {
  const { app } = service;
  const bearer = { authorization: `Bearer ${token}` };
  for (let i = 0; i < PER_HOUR.plays; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/webhooks/incoming/generic',
      headers: { 'api-key': edgeKey },
      payload: { edgeId: EDGE, text: `Cleanup on aisle ${orderSeq.n % 20}, thank you.`, actor: 'Manager' },
    });
    expect(res, 200, 'R1');
  }
  for (let i = 0; i < PER_HOUR.requests; i++) {
    const created = await app.inject({
      method: 'POST',
      url: '/api/callforhelp/requests',
      headers: bearer,
      payload: { location_id: LOCATION, option_id: 5001 },
    });
    expect(created, 201, 'C0');
    const messageId = (created.json() as { message_id: string }).message_id;
    const who = { message_id: messageId, channel_id: 'C-floor', claimed_by: 'Ann', claimed_by_user_id: 'U-ann' };
    clock.advance(30_000);
    expect(await app.inject({ method: 'POST', url: '/api/callforhelp/claim', headers: bearer, payload: who }), 200, 'C1');
    expect(await app.inject({ method: 'POST', url: '/api/callforhelp/on_the_way', headers: bearer, payload: who }), 200, 'C2');
    expect(await app.inject({ method: 'POST', url: '/api/callforhelp/complete', headers: bearer, payload: { ...who, customer_status: 'sale' } }), 200, 'C3');
  }
  for (let i = 0; i < PER_HOUR.orders; i++) {
    const cabinet = CABINETS[orderSeq.n % CABINETS.length] as number;
    const created = await app.inject({
      method: 'POST',
      url: `/api/lockers/orders?secret_token=${secret}`,
      payload: { rearload: false, locker_id: LOCKER, cabinet_id: cabinet, order_id: orderSeq.n++, organization_id: 1, location_id: LOCATION },
    });
    expect(created, 201, 'L1');
    expect(await app.inject({ method: 'PUT', url: `/api/lockers/orders/cabinets/${cabinet}?secret_token=${secret}`, payload: {} }), 200, 'L complete');
  }
  // What the devices would have done: taken and acked every message sent to them.
  await service.db.query('UPDATE device_outbox SET published_at = coalesce(published_at, $1), acked_at = $1 WHERE acked_at IS NULL', [clock.now()]);
  await service.events.runPending();
  await service.scheduler.runDue();
  clock.advance(3_600_000 - PER_HOUR.requests * 30_000);
}

async function sizes(service: Service): Promise<Record<string, number>> {
  const [row] = await service.db.query<Record<string, string>>(
    `SELECT pg_database_size(current_database()) AS database, ${TABLES.map((t) => `pg_total_relation_size('${t}') AS ${t}`).join(', ')}`,
  );
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Math.round(Number(v) / 1024)]));
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-retention-soak-'));
  fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
  const provisionFile = path.join(dir, 'world.json');
  fs.writeFileSync(provisionFile, JSON.stringify(world));
  const database = process.env.BENCH_DATABASE_URL ? await freshPostgres(process.env.BENCH_DATABASE_URL, 'storeops_retention_soak') : null;
  const clock = new ManualClock('2026-03-01T13:00:00.000Z');
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    SECRET_TOKEN: secret,
    PROVISION_FILE: provisionFile,
    RETENTION_DAYS: '1',
    MQTT_PORT: '0',
    DATA_DIR: path.join(dir, 'data'),
    ...(database ? { DATABASE_URL: database.url } : {}),
  });
  const service = await compose({ config, clock, manualJobs: true });
  try {
    await service.app.ready();
    console.log(
      `${database ? 'PostgreSQL' : 'embedded PostgreSQL'}, RETENTION_DAYS=1, ${DAYS} days of ${HOURS} hours, each hour ` +
        `${PER_HOUR.plays} R1 plays (transcript), ${PER_HOUR.requests} CFH cycles, ${PER_HOUR.orders} orders; sizes in KB after each day's sweep\n`,
    );
    console.log(['day', 'deleted', 'database', ...TABLES].map((c) => c.padStart(19)).join(''));
    const orderSeq = { n: 1 };
    for (let d = 1; d <= DAYS; d++) {
      for (let h = 0; h < HOURS; h++) await hour(service, clock, orderSeq);
      clock.advance((24 - HOURS) * 3_600_000);
      const deleted = await service.retention.runNow();
      // What autovacuum does within the hour on a real day; a simulated day lasts seconds.
      await service.db.query('VACUUM');
      const s = await sizes(service);
      const gone = Object.values(deleted).reduce((a, b) => a + b, 0);
      console.log([d, gone, s.database, ...TABLES.map((t) => s[t])].map((c) => String(c).padStart(19)).join(''));
    }
  } finally {
    await service.app.close();
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
