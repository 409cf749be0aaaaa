// npm test: type-check, lint, format check, then every test file under tests/ with node's test runner, on one
// database server: the embedded PostgreSQL server started here in a temporary directory, or the
// server of TEST_DATABASE_URL. TEST_MQTT_URL switches the suites to a real broker.
// `npm test -- FILE...` runs those files only (no type-check, lint or format check).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ENV_RUN, ENV_SERVER, ENV_TEMPLATE, startSuiteDatabase } from '../tests/support/suite-database.ts';

const root = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
/** Test files at once: each is a process with its own database; two cores keep three busy. */
const CONCURRENCY = process.env.TEST_CONCURRENCY ?? '3';

function run(cmd: string, args: string[]): void {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [path.relative(root, full)] : [];
  });
}

const only = process.argv.slice(2);
if (only.length === 0) {
  console.log('> tsc --noEmit');
  run(bin('tsc'), ['--noEmit']);
  console.log('> eslint .');
  run(bin('eslint'), ['.']);
  console.log('> prettier --check .');
  run(bin('prettier'), ['--check', '--log-level', 'warn', '.']);
}

const external = process.env.TEST_DATABASE_URL || undefined;
const started = Date.now();
const database = await startSuiteDatabase(external);
const backend = external ? 'PostgreSQL (TEST_DATABASE_URL)' : `the embedded PostgreSQL server (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`;
const broker = process.env.TEST_MQTT_URL ? 'external broker (TEST_MQTT_URL)' : 'embedded broker';
console.log(`> node --test on ${backend}, ${broker}`);

const files = only.length > 0 ? only : testFiles(path.join(root, 'tests')).sort();
const child = spawn(process.execPath, ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-timeout=120000', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    [ENV_SERVER]: database.url,
    [ENV_TEMPLATE]: database.template,
    [ENV_RUN]: database.runId,
    TEST_EXTERNAL_DATABASE: external ? '1' : '0',
  },
});

let stopping = false;
const finish = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await database.close().catch((err: unknown) => console.error(`could not remove the suite's database: ${(err as Error).message}`));
  process.exit(code);
};
// Ctrl-C reaches the test processes from the terminal; the server, in a process group of its own,
// is stopped here once they are gone.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    child.kill(signal);
    setTimeout(() => void finish(130), 10_000).unref();
  });
}
child.on('exit', (code, signal) => void finish(code ?? (signal ? 130 : 1)));
