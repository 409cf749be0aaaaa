// What the version 2 soak (bench/soak/v2.ts) runs besides HTTP clients: lockers and radio edge
// devices on the shared broker (acking what they get, dropping a play past its expires_at), a
// webhook receiver that checks signatures, and Server-Sent Event streams kept open and reopened.
import crypto from 'node:crypto';
import http from 'node:http';
import mqtt, { type MqttClient } from 'mqtt';

export interface Tally {
  count(what: string, n?: number): void;
  unexpected(what: string, detail: string): void;
}

/** A version 2 locker: acks every command, and reports its doors closed after an open (L7 comes from the driver). */
export async function lockerDevice(
  brokerUrl: string,
  lockerId: number,
  apiKey: string,
  tally: Tally,
  onCommand: (cabinetKey: number, command: string) => void,
): Promise<MqttClient> {
  const client = mqtt.connect(brokerUrl, {
    clientId: `soak-locker-${lockerId}-${crypto.randomBytes(3).toString('hex')}`,
    clean: false,
    protocolVersion: 4,
    username: `locker:${lockerId}`,
    password: apiKey,
    reconnectPeriod: 500,
  });
  client.on('error', (err) => tally.unexpected('locker mqtt', err.message));
  client.on('message', (_topic, payload) => {
    const body = JSON.parse(payload.toString('utf8')) as { command_id: string; cabinet_key: number; command: string };
    tally.count('mqtt locker command');
    client.publish(`lockers/${lockerId}/acks`, JSON.stringify({ command_id: body.command_id, status: 'ok' }), { qos: 1 });
    onCommand(body.cabinet_key, body.command);
  });
  await new Promise<void>((resolve) => client.on('connect', () => client.subscribe(`lockers/${lockerId}/commands`, { qos: 1 }, () => resolve())));
  return client;
}

export interface Edge {
  client: MqttClient;
  heard(text: string, speaker: string): void;
}

/** A radio edge: acks each play as played, or as expired when it arrives past its expires_at. */
export async function edgeDevice(brokerUrl: string, edgeId: string, deviceKey: string, tally: Tally): Promise<Edge> {
  const client = mqtt.connect(brokerUrl, {
    clientId: `soak-edge-${edgeId}-${crypto.randomBytes(3).toString('hex')}`,
    clean: false,
    protocolVersion: 4,
    username: `edge:${edgeId}`,
    password: deviceKey,
    reconnectPeriod: 500,
  });
  client.on('error', (err) => tally.unexpected('edge mqtt', err.message));
  client.on('message', (_topic, payload) => {
    const body = JSON.parse(payload.toString('utf8')) as { message_id: string; expires_at: string; audio?: string };
    const late = Date.parse(body.expires_at) < Date.now();
    tally.count(late ? 'mqtt play expired on arrival' : 'mqtt play');
    client.publish(`radio/${edgeId}/played`, JSON.stringify({ message_id: body.message_id, status: late ? 'expired' : 'played' }), { qos: 1 });
  });
  await new Promise<void>((resolve) => client.on('connect', () => client.subscribe(`radio/${edgeId}/play`, { qos: 1 }, () => resolve())));
  return {
    client,
    heard(text, speaker) {
      tally.count('mqtt heard');
      client.publish(`radio/${edgeId}/heard`, JSON.stringify({ heard_id: crypto.randomUUID(), text, speaker, heard_at: new Date().toISOString() }), { qos: 1 });
    },
  };
}

/** A webhook receiver on a free port: 200 for a valid signature within 60 s, else 401 (counted). */
export async function webhookReceiver(secret: string, tally: Tally): Promise<{ url: string; close: () => Promise<void> }> {
  const seen = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = String(req.headers['x-timestamp'] ?? '');
      const want = crypto
        .createHmac('sha256', secret)
        .update(ts + body)
        .digest('hex');
      const ok = want === req.headers['x-signature'] && Math.abs(Date.now() / 1000 - Number(ts)) <= 60;
      if (!ok) tally.unexpected('webhook signature', body.slice(0, 200));
      const uuid = String(req.headers['x-event-id']);
      tally.count(seen.has(uuid) ? 'webhook duplicate' : 'webhook delivered');
      seen.add(uuid);
      if (seen.size > 50_000) seen.clear();
      res.writeHead(ok ? 200 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An SSE stream held open for `holdMs` then closed and opened again, until stop() is called; counts
 * events, and a stream that fails to open (any status but 200) as unexpected.
 */
export function keepStream(
  name: string,
  open: () => { url: string; headers: Record<string, string> } | null,
  holdMs: number,
  tally: Tally,
): { stop: () => void } {
  let stopped = false;
  let current: AbortController | null = null;
  const loop = async () => {
    while (!stopped) {
      const target = open();
      if (target === null) {
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      current = new AbortController();
      const timer = setTimeout(() => current?.abort(), holdMs);
      try {
        const res = await fetch(target.url, { headers: { accept: 'text/event-stream', ...target.headers }, signal: current.signal });
        if (res.status !== 200) {
          tally.unexpected(`${name} stream`, `${res.status} ${(await res.text()).slice(0, 200)}`);
        } else {
          tally.count(`sse ${name} opened`);
          const decoder = new TextDecoder();
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            const events = decoder.decode(chunk, { stream: true }).match(/^event: /gm)?.length ?? 0;
            if (events > 0) tally.count(`sse ${name} events`, events);
          }
        }
      } catch (err) {
        const e = err as Error;
        if (e.name !== 'AbortError' && !stopped) tally.unexpected(`${name} stream`, e.message);
      } finally {
        clearTimeout(timer);
      }
    }
  };
  void loop();
  return {
    stop: () => {
      stopped = true;
      current?.abort();
    },
  };
}
