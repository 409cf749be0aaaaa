// npm run bench:profile -- SCENARIO...: one service process under --cpu-prof while chosen scenarios
// run against it; the .cpuprofile lands in bench/out/ (open it in Chrome DevTools).
import autocannon, { type Options } from 'autocannon';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scenarios } from './scenarios.ts';
import { embeddedUrl } from '../harness/embedded-layout.ts';
import { benchSession } from '../harness/people.ts';
import { seed } from '../harness/seed.ts';
import { serviceNodeFlags, startServer } from '../harness/server.ts';
import { makeBenchWorld } from '../harness/world.ts';

const root = path.resolve(import.meta.dirname, '../..');
const wanted = process.argv.slice(2).map((s) => s.toLowerCase());
const chosen = scenarios.filter((s) => wanted.length === 0 || wanted.some((w) => s.name.toLowerCase().startsWith(w)));
const out = path.join(root, 'bench/out');
fs.mkdirSync(out, { recursive: true });
const world = makeBenchWorld({ locations: 20, lockersPerLocation: 4, cabinetsPerLocker: 24 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-prof-'));
fs.chmodSync(dir, 0o755); // under root, the embedded server's user must pass through
fs.writeFileSync(path.join(dir, 'world.json'), JSON.stringify(world.file));
const secret = crypto.randomBytes(18).toString('base64url');
const databaseUrl = process.env.BENCH_DATABASE_URL;
const server = await startServer(root, [...serviceNodeFlags(root), '--cpu-prof', `--cpu-prof-dir=${out}`, 'src/main.ts'], {
  DATA_DIR: path.join(dir, 'data'),
  SECRET_TOKEN: secret,
  PROVISION_FILE: path.join(dir, 'world.json'),
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
try {
  const seeded = await seed(server.url, world, secret, 500, 500);
  const session = await benchSession(server.url, databaseUrl ?? embeddedUrl(path.join(dir, 'data')), world);
  for (const scenario of chosen) {
    const r = await autocannon({
      url: server.url,
      duration: 10,
      connections: 32,
      ...scenario.options({ url: server.url, world, secret, freeCabinets: seeded.freeCabinets, messageIds: seeded.messageIds, session }),
    } as Options);
    console.log(`${scenario.name}: ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms, errors ${r.errors + r.non2xx}`);
  }
} finally {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`profile written to ${out}`);
