// R1 end to end: two callers ask for speech; a connected edge device (a real MQTT client) receives
// the audio. Measures the time from the request to the audio on the device.
import mqtt from 'mqtt';
import type { Server } from '../harness/server.ts';
import type { BenchWorld } from '../harness/world.ts';

export interface RadioResult {
  rps: number;
  deviceP50: number;
  deviceP95: number;
  errors: number;
}

const TEXTS = [
  'Customer assistance needed in aisle 5, please.',
  'A pickup order is ready at the front lockers.',
  'Cleanup needed near the dairy coolers.',
  'Manager to the service desk, please.',
];

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
}

export async function measureRadio(server: Server, world: BenchWorld, perCaller: number): Promise<RadioResult> {
  const { edgeId, key } = world.edge;
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${server.mqttPort}`, {
    username: `edge:${edgeId}`,
    password: key,
    clientId: `bench-${edgeId}`,
    clean: true,
    reconnectPeriod: 0,
  });
  const arrived = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  client.on('message', (topic, payload) => {
    const message = JSON.parse(payload.toString()) as { message_id: string };
    arrived.set(message.message_id, performance.now());
    waiters.get(message.message_id)?.();
    if (topic.endsWith('/play')) client.publish(`radio/${edgeId}/played`, JSON.stringify({ message_id: message.message_id }), { qos: 1 });
  });
  await client.subscribeAsync(`radio/${edgeId}/play`, { qos: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const caller = async (n: number) => {
    for (let i = 0; i < perCaller; i++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/webhooks/incoming/generic`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': key },
        // Each text its own: the same text on an edge device within 10 s is one announcement.
        body: JSON.stringify({ edgeId, text: `${TEXTS[(n + i) % TEXTS.length]} Number ${n * perCaller + i}.`, actor: 'bench' }),
      });
      if (res.status !== 200) {
        errors++;
        continue;
      }
      const { message_id: id } = (await res.json()) as { message_id: string };
      if (!arrived.has(id)) {
        const ok = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 10_000);
          waiters.set(id, () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        waiters.delete(id);
        if (!ok) {
          errors++;
          continue;
        }
      }
      latencies.push((arrived.get(id) as number) - t0);
    }
  };
  await Promise.all([caller(0), caller(1)]);
  const seconds = (performance.now() - started) / 1000;
  await client.endAsync();
  latencies.sort((a, b) => a - b);
  return { rps: Math.round((latencies.length / seconds) * 10) / 10, deviceP50: percentile(latencies, 50), deviceP95: percentile(latencies, 95), errors };
}
