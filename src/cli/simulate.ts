// npm run simulate -- locker <locker_id> --key <api_key> [--mqtt URL] [--http URL]
// npm run simulate -- edge <edge_id> --key <device_key> [--out DIR] [--mqtt URL] [--no-play]
// Device simulators, to try the whole system without hardware. Defaults follow the service's own
// environment (MQTT_PORT / MQTT_URL, PORT), so on the machine running the service no URL is needed.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { startEdgeSimulator } from '../devices/simulators/edge.ts';
import { startLockerSimulator } from '../devices/simulators/locker.ts';
import type { Simulator } from '../devices/simulators/connection.ts';

const USAGE = `usage:
  npm run simulate -- locker <locker_id> --key <api_key> [--mqtt mqtt://host:1883] [--http http://host:3000]
  npm run simulate -- edge <edge_id> --key <device_key> [--out DIR] [--mqtt mqtt://host:1883] [--no-play]`;

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
        'no-play': { type: 'boolean', default: false },
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
    return startEdgeSimulator({ edgeId: id, key: values.key, mqttUrl, outDir, play: !values['no-play'] });
  }
  fail(`unknown device kind "${kind ?? ''}" (locker or edge)`);
}

const simulator = main();
const stop = () => {
  console.log('stopping');
  simulator.close().then(() => process.exit(0), () => process.exit(1));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
