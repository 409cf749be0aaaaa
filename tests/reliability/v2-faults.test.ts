// Faults for version 2, each on throwaway servers (the machine's shared PostgreSQL and Mosquitto
// are never restarted): webhook deliveries pending across a PostgreSQL restart; voice actions in
// flight across a broker restart; webhooks and live streams across a SIGKILL of one of two
// instances. Nothing acknowledged is lost; nothing is done twice.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import mqtt from 'mqtt';
import { openSse } from '../support/sse.ts';
import { api, call, SECRET, writeWorld, type RelWorld } from './clients.ts';
import { embeddedUrl } from '../../src/db/embedded/server.ts';
import { freshDatabase, inspect, postgresBinaries, startCluster } from './postgres.ts';
import { atCleanup, cleanupAll, mosquittoBinary, startMosquitto, startService, tempDir, twoInstancesSkip, waitFor } from '../../scripts/lib/processes.ts';

const binaries = postgresBinaries();

/** A webhook receiver outside the service: answers 500 to the first attempt of each event when
 * `failFirst`, else 200; counts the 2xx answers per event uuid. */
async function receiver(opts: { failFirst: boolean }) {
  const attempts = new Map<string, number>();
  const delivered = new Map<string, number>();
  const createdFor = new Map<string, string>(); // message_id -> uuid of its `created` event
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { uuid: string; type: string; status: string; details: { message_id?: string } };
      const n = (attempts.get(body.uuid) ?? 0) + 1;
      attempts.set(body.uuid, n);
      if (opts.failFirst && n === 1) return void res.writeHead(500).end();
      delivered.set(body.uuid, (delivered.get(body.uuid) ?? 0) + 1);
      if (body.type === 'callforhelp' && body.status === 'created' && body.details.message_id !== undefined) createdFor.set(body.details.message_id, body.uuid);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  atCleanup(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, attempts, delivered, createdFor };
}

/** writeWorld plus a webhook endpoint, an edge device with voice actions, and a token of every v2 scope. */
function v2World(dir: string, hookUrl: string): RelWorld & { v2Token: string; edgeId: string; edgeKey: string } {
  const w = writeWorld(dir, 4);
  const extra = { v2Token: crypto.randomBytes(18).toString('base64url'), edgeId: 'edge-rel-1', edgeKey: crypto.randomBytes(18).toString('base64url') };
  const file = JSON.parse(fs.readFileSync(w.file, 'utf8')) as Record<string, unknown[]>;
  file.webhooks = [{ id: 1, organization_id: 1, location_id: w.locationId, url: hookUrl, secret: 'a-receiver-secret', events: ['callforhelp'] }];
  file.radio_edges = [
    { edge_id: extra.edgeId, location_id: w.locationId, name: 'Floor radio', device_key: extra.edgeKey, voice_actions: true, announce_cfh: [] },
  ];
  file.api_tokens = [...(file.api_tokens ?? []), { name: 'v2', organization_id: 1, scopes: ['cfh', 'radio', 'webhooks'], token: extra.v2Token }];
  fs.writeFileSync(w.file, JSON.stringify(file));
  return { ...w, ...extra };
}

const uniqueTwice = (m: Map<string, number>) => [...m].filter(([, n]) => n > 1).map(([uuid]) => uuid);

test(
  'PostgreSQL restarted with webhook deliveries pending: each is delivered once after it is back',
  { skip: 'reason' in binaries && `cannot start a private PostgreSQL: ${binaries.reason}`, timeout: 180_000 },
  async (t) => {
    t.after(cleanupAll);
    const cluster = await startCluster();
    const hook = await receiver({ failFirst: true });
    const w = v2World(tempDir('v2pg'), hook.url);
    const service = await startService('S', { DATABASE_URL: cluster.url, SECRET_TOKEN: SECRET, PROVISION_FILE: w.file, WEBHOOK_ALLOW_PRIVATE: 'true' });
    const S = api(service.url, w);
    const acknowledged: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await S.createRequest();
      assert.equal(res.status, 201);
      acknowledged.push(res.body.message_id as string);
    }
    // Every first attempt failed: each delivery now waits for its retry (about 10 s away).
    await waitFor('a first, failed attempt of each event', () => hook.attempts.size >= 8 && hook.delivered.size === 0, { tries: 300 });
    await cluster.stop();
    const down = await S.createRequest();
    assert.equal(down.status, 503, 'not acknowledged while the database is down');
    await new Promise((r) => setTimeout(r, 2_000));
    await cluster.start();
    await waitFor('readiness after the restart', async () => (await S.ready()).status === 200, { tries: 100, everyMs: 200 });
    for (let i = 0; i < 4; i++) {
      const res = await S.createRequest();
      assert.equal(res.status, 201);
      acknowledged.push(res.body.message_id as string);
    }
    await waitFor('every acknowledged request delivered', () => acknowledged.every((id) => hook.createdFor.has(id)), { tries: 600 });
    assert.ok(service.running(), 'the same process recovered by itself');
    assert.deepEqual(uniqueTwice(hook.delivered), [], 'no event was delivered (answered 2xx) twice');
    const listed = await call(service.url, 'GET', '/api/webhooks/1/deliveries', { token: w.v2Token });
    assert.equal(listed.status, 200);
    const states = (listed.body as unknown as { state: string }[]).map((d) => d.state);
    assert.ok(states.length >= acknowledged.length);
    assert.deepEqual(
      states.filter((s) => s !== 'delivered'),
      [],
      'W1 shows every delivery delivered',
    );
  },
);

test(
  'the broker restarted with voice actions in flight: each phrase heard is recorded and acted on once',
  { skip: mosquittoBinary() === null && 'needs mosquitto', timeout: 180_000 },
  async (t) => {
    t.after(cleanupAll);
    const broker = await startMosquitto();
    const hook = await receiver({ failFirst: false });
    const w = v2World(tempDir('v2mqtt'), hook.url);
    const dataDir = tempDir('v2mqtt-data');
    const service = await startService('S', {
      DATA_DIR: dataDir,
      MQTT_URL: broker.url,
      MQTT_CLIENT_ID: 'storeops-v2-faults',
      SECRET_TOKEN: SECRET,
      PROVISION_FILE: w.file,
    });
    const S = api(service.url, w);
    const requests: string[] = [];
    for (let i = 0; i < 6; i++) requests.push((await S.createRequest()).body.message_id as string);
    // What the radio knows of open requests follows the event log: the phrases are said once it
    // knows all six, as staff hear a request announced before they answer it. (The first requests,
    // made the moment the service was ready, were once missed: its subscriber placed its cursor later.)
    const db = inspect(embeddedUrl(dataDir));
    await waitFor(
      'the radio to know the six requests',
      async () => {
        const { rows } = await db.query('SELECT count(*)::int AS n FROM radio_open_requests WHERE message_id = ANY ($1)', [requests]);
        return rows[0].n === 6;
      },
      { tries: 600 },
    );
    // An edge device as firmware is: persistent session, QoS 1, reconnects by itself, keeps what it
    // could not send yet.
    const edge = mqtt.connect(broker.url, { clientId: 'edge-rel-1', clean: false, username: `edge:${w.edgeId}`, password: w.edgeKey, reconnectPeriod: 200 });
    atCleanup(async () => void edge.end(true));
    await new Promise((r) => edge.once('connect', r));
    const phrase = (speaker: string) => ({ heard_id: crypto.randomUUID(), text: "I'm on it", speaker, heard_at: new Date().toISOString() });
    const said = Array.from({ length: 6 }, (_, i) => phrase(`Staff ${i}`));
    const publish = (p: object) => edge.publishAsync(`radio/${w.edgeId}/heard`, JSON.stringify(p), { qos: 1 });
    const inFlight = said.slice(0, 3).map(publish);
    await broker.stop();
    // Said while the broker is away: kept by the device and sent when it is back; one sent twice.
    const later = [...said.slice(3), said[3] as object].map(publish);
    await new Promise((r) => setTimeout(r, 1_000));
    await broker.start();
    await Promise.all([...inFlight, ...later].map((p) => p.catch(() => undefined)));

    const heard = async () => {
      const res = await call(service.url, 'GET', `/api/radio/transcripts?edge_id=${w.edgeId}&limit=100`, { token: w.v2Token });
      return ((res.body.transcripts ?? []) as { kind: string; id: string; status: string; cfh_request_id: number | null }[]).filter((e) => e.kind === 'heard');
    };
    await waitFor(
      'every phrase recorded and acted on',
      async () => {
        const list = await heard();
        return said.every((p) => list.some((e) => e.id === p.heard_id && e.status !== 'pending'));
      },
      { tries: 600 },
    );
    const list = await heard();
    assert.equal(list.length, said.length, 'each phrase recorded once, the copy sent twice included');
    assert.deepEqual(
      list.map((e) => e.status).sort(),
      said.map(() => 'claimed'),
      'each phrase claimed a request',
    );
    assert.equal(new Set(list.map((e) => e.cfh_request_id)).size, said.length, 'each a different request: nothing claimed twice');
    const claimed = await Promise.all(requests.map(async (id) => (await S.track(id)).body));
    assert.equal(claimed.filter((v) => (v.cfh_request as { is_claimed?: boolean } | undefined)?.is_claimed === true).length, 6);
  },
);

test(
  'webhooks and live streams across a SIGKILL of one of two instances: every acknowledged change is delivered and streamed, none delivered twice',
  { skip: twoInstancesSkip(), timeout: 240_000 },
  async (t) => {
    t.after(cleanupAll);
    const url = await freshDatabase(process.env.TEST_DATABASE_URL as string);
    const broker = await startMosquitto();
    const hook = await receiver({ failFirst: false });
    const w = v2World(tempDir('v2crash'), hook.url);
    const env = (id: string) => ({
      DATABASE_URL: url,
      MQTT_URL: broker.url,
      MQTT_CLIENT_ID: id,
      SECRET_TOKEN: SECRET,
      PROVISION_FILE: w.file,
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    const b = await startService('B', env('storeops-b'));
    let a = await startService('A', env('storeops-a'));
    const streamUrl = (base: string) => `${base}/api/callforhelp/requests/stream?location_id=${w.locationId}`;
    const onB = await openSse(t, streamUrl(b.url), { authorization: `Bearer ${w.v2Token}` });
    assert.equal(onB.status, 200);
    const streamed = new Set<string>();
    void (async () => {
      for (;;) {
        try {
          const e = await onB.next(undefined, 120_000);
          const data = JSON.parse(e.data) as { message_id?: string };
          if (data.message_id !== undefined) streamed.add(data.message_id);
        } catch {
          return;
        }
      }
    })();
    const acknowledged: string[] = [];
    const create = async (base: string) => {
      const res = await call(base, 'POST', '/api/callforhelp/requests', { token: w.token, body: { location_id: w.locationId, option_id: w.optionId } });
      if (res.status === 201) acknowledged.push(res.body.message_id as string);
      return res.status;
    };
    // Load on both; A is killed while requests to it are in flight.
    const burst = (base: string, n: number) => Promise.all(Array.from({ length: n }, () => create(base)));
    await Promise.all([burst(a.url, 10), burst(b.url, 10)]);
    const dying = burst(a.url, 10);
    await a.crash();
    await dying;
    await burst(b.url, 10);
    a = await startService('A', a.env);
    const onA = await openSse(t, streamUrl(a.url), { authorization: `Bearer ${w.v2Token}` });
    assert.equal(onA.status, 200);
    await Promise.all([burst(a.url, 5), burst(b.url, 5)]);
    t.diagnostic(`acknowledged ${acknowledged.length} requests; uuids delivered ${hook.delivered.size}`);

    // A run A claimed is given back when its claims run out, 60 s after its claim or last renewal
    // (docs/webhooks.md); until then, the store's later deliveries wait.
    await waitFor('every acknowledged request delivered', () => acknowledged.every((id) => hook.createdFor.has(id)), { tries: 1_500 });
    await waitFor('every acknowledged request streamed on B', () => acknowledged.every((id) => streamed.has(id)), { tries: 300 });
    const twice = uniqueTwice(hook.delivered);
    t.diagnostic(`events delivered twice (an attempt in flight when A was killed may be): ${twice.length}`);
    assert.ok(twice.length <= 10, `at most the attempts A had in flight were repeated: ${twice.length}`);
    // The restarted A's stream hears what B does.
    const status = await create(b.url);
    assert.equal(status, 201);
    const last = acknowledged.at(-1) as string;
    for (;;) {
      const e = await onA.next(undefined, 20_000);
      if ((JSON.parse(e.data) as { message_id?: string }).message_id === last) break;
    }
  },
);
