// npm run simulate -- locker <locker_id> --key <api_key> [--mqtt URL] [--http URL]
// npm run simulate -- edge <edge_id> --key <device_key> [--out DIR] [--mqtt URL] [--no-play] [--say TEXT --speaker NAME]
// npm run simulate -- webhooks --port N --secret S [--host H]
// Device simulators, to try the whole system without hardware. Defaults follow the service's own
// environment (MQTT_PORT / MQTT_URL, PORT), so on the machine running the service no URL is needed.
// The webhooks receiver prints the store events a webhook endpoint is sent, checked as a receiver should.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { startEdgeSimulator } from '../devices/simulators/edge.ts';
import { startLockerSimulator } from '../devices/simulators/locker.ts';
import { startWebhookReceiver } from '../devices/simulators/webhooks.ts';
import type { Simulator } from '../devices/simulators/connection.ts';

const USAGE = `usage:
  npm run simulate -- locker <locker_id> --key <api_key> [--mqtt mqtt://host:1883] [--http http://host:3000]
  npm run simulate -- edge <edge_id> --key <device_key> [--out DIR] [--mqtt mqtt://host:1883] [--no-play] [--say "I'm on it" [--speaker Sam]]
  npm run simulate -- webhooks --port <port> --secret <endpoint secret> [--host 127.0.0.1]`;

function fail(message: string): never {
  console.error(`simulate: ${message}\n${USAGE}`);
  process.exit(2);
}

function defaults(): { mqtt: string; http: string } {
  try {
    const config = loadConfig(process.env);
    let mqtt = `mqtt://localhost:${config.mqttPort}`;
    if (config.mqttUrl !== null) {
      // The service's broker, without the service's own credentials.
      const url = new URL(config.mqttUrl);
      url.username = '';
      url.password = '';
      mqtt = url.toString();
    }
    return { mqtt, http: `http://localhost:${config.port}` };
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
}

function main(): Simulator {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        key: { type: 'string' },
        mqtt: { type: 'string' },
        http: { type: 'string' },
        out: { type: 'string' },
        port: { type: 'string' },
        secret: { type: 'string' },
        host: { type: 'string' },
        'no-play': { type: 'boolean', default: false },
        say: { type: 'string', multiple: true },
        speaker: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    fail((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const [kind, id, ...rest] = positionals;
  if (rest.length > 0) fail(`unexpected ${rest.join(' ')}`);
  if (kind === 'webhooks') {
    if (id !== undefined) fail(`unexpected ${id}`);
    if (values.port === undefined || !/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) fail('--port must be a port number');
    if (values.secret === undefined || values.secret === '') fail("--secret is required (the endpoint's secret from the provisioning file)");
    console.log('webhook receiver: the service must be allowed to reach it (WEBHOOK_ALLOW_PRIVATE=true for this machine)');
    const receiver = startWebhookReceiver({ port: Number(values.port), secret: values.secret, ...(values.host === undefined ? {} : { host: values.host }) });
    receiver.ready.catch((err: unknown) => fail(`cannot listen: ${(err as Error).message}`));
    return receiver;
  }
  if (id === undefined) fail('which device?');
  if (values.key === undefined || values.key === '') fail('--key is required (the locker api_key or the edge device key)');
  const { mqtt, http } = defaults();
  const mqttUrl = values.mqtt ?? mqtt;

  if (kind === 'locker') {
    if (!/^[1-9][0-9]{0,9}$/.test(id)) fail(`locker id must be a positive integer, got "${id}"`);
    const httpUrl = values.http ?? http;
    console.log(`locker simulator: locker ${id}, broker ${mqttUrl}, status updates to ${httpUrl}`);
    return startLockerSimulator({ lockerId: Number(id), key: values.key, mqttUrl, httpUrl });
  }
  if (kind === 'edge') {
    const outDir = path.resolve(values.out ?? path.join(os.tmpdir(), 'storeops-radio', id));
    console.log(`edge simulator: edge device ${id}, broker ${mqttUrl}`);
    return startEdgeSimulator({
      edgeId: id,
      key: values.key,
      mqttUrl,
      outDir,
      play: !values['no-play'],
      say: values.say ?? [],
      ...(values.speaker === undefined ? {} : { speaker: values.speaker }),
    });
  }
  fail(`unknown device kind "${kind ?? ''}" (locker, edge or webhooks)`);
}

const simulator = main();
const stop = () => {
  console.log('stopping');
  // A connection still retrying an unreachable broker must not keep a stopped simulator alive.
  setTimeout(() => process.exit(0), 3_000).unref();
  simulator.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
