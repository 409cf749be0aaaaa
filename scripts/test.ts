// npm test: type-check, lint, then every test file under tests/ with node's test runner.
// TEST_DATABASE_URL / TEST_MQTT_URL switch the same suites to a real PostgreSQL / broker.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

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
}
const backend = process.env.TEST_DATABASE_URL ? 'PostgreSQL (TEST_DATABASE_URL)' : 'embedded PGlite';
const broker = process.env.TEST_MQTT_URL ? 'external broker (TEST_MQTT_URL)' : 'embedded broker';
console.log(`> node --test on ${backend}, ${broker}`);
const files = only.length > 0 ? only : testFiles(path.join(root, 'tests')).sort();
run(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=120000', ...files]);
