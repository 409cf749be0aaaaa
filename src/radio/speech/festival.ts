// Festival with CMU's HTS "slt" voice (`apt-get install festival festvox-us-slt-hts`): the most
// intelligible engine, kept running (`festival --pipe`) so a synthesis costs ~100 ms instead of a
// start. It reads Scheme on stdin: the text goes in as a Scheme string literal, with `\` and `"`
// escaped and control characters blanked, inside `(Utterance Text ...)`, which Festival reads as
// plain text (no SSML or SABLE mode). Each command reports on stderr (unbuffered): "done N" after
// writing the WAV, then "end N" whatever happened (SIOD's unwind-protect catches an error and
// goes on), so an error in one text fails that text only.
// A process that hangs or dies is replaced on the next call.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { SpeechUnavailableError } from './errors.ts';
import { plainText, type EngineBounds, type SpeechEngine } from './engine.ts';
import { readSpeech } from './flite-cli.ts';
import { Limiter } from './limiter.ts';
import { SAMPLE_RATE } from './wav.ts';

export const FESTIVAL_SLT_VOICE = 'voice_cmu_us_slt_arctic_hts';

/** A string literal Festival's Scheme reads back as exactly the text. */
export const schemeString = (text: string) => `"${plainText(text).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

type Festival = ChildProcessByStdio<Writable, null, Readable>;

interface Process {
  child: Festival;
  lines: string[];
  waiters: Map<number, () => void>;
  exited: boolean;
}

export function festivalEngine(binary: string, tmpDir: string, bounds: EngineBounds): SpeechEngine {
  // One process speaks one text at a time; more processes would each load the voice (~40 MB).
  const limiter = new Limiter({ concurrency: 1, queueLimit: bounds.queueLimit, timeoutMs: bounds.timeoutMs });
  let current: Process | null = null;
  let next = 1;

  const start = (): Process => {
    const child = spawn(binary, ['--pipe'], { stdio: ['pipe', 'ignore', 'pipe'], shell: false });
    const p: Process = { child, lines: [], waiters: new Map(), exited: false };
    let buffered = '';
    child.stderr.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let at: number;
      while ((at = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, at).trim();
        buffered = buffered.slice(at + 1);
        const m = /^(done|end) (\d+)$/.exec(line);
        if (m === null) continue;
        if (m[1] === 'done') p.lines.push(m[2]!);
        else p.waiters.get(Number(m[2]))?.();
      }
    });
    const gone = () => {
      p.exited = true;
      for (const wake of p.waiters.values()) wake();
    };
    child.on('exit', gone);
    child.on('error', gone);
    child.stdin.on('error', () => {}); // a dead process: its waiters are woken by exit
    child.stdin.write(`(${FESTIVAL_SLT_VOICE})\n`);
    return p;
  };

  const stop = (p: Process | null) => {
    if (p !== null && !p.exited) p.child.kill('SIGKILL');
  };

  const say = (p: Process, text: string, file: string, signal: AbortSignal): Promise<boolean> => {
    const id = next++;
    return new Promise<boolean>((resolve, reject) => {
      const onAbort = () => {
        p.waiters.delete(id);
        // A text it has not finished in time: it may be stuck; the next call starts a fresh one.
        if (current === p) current = null;
        stop(p);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      p.waiters.set(id, () => {
        signal.removeEventListener('abort', onAbort);
        p.waiters.delete(id);
        resolve(p.lines.includes(String(id)));
        p.lines = p.lines.filter((l) => l !== String(id));
      });
      const utterance = `(utt.wave.resample (utt.synth (Utterance Text ${schemeString(text)})) ${SAMPLE_RATE})`;
      p.child.stdin.write(
        `(begin (unwind-protect (begin (utt.save.wave ${utterance} ${schemeString(file)} 'riff) (format stderr "done ${id}\\n")) ` +
          `(format stderr "fail ${id}\\n")) (format stderr "end ${id}\\n"))\n`,
      );
    });
  };

  return {
    name: 'festival',
    voice: 'cmu slt hts (Festival)',
    speaks: (language) => language === 'en' || language === 'en-us',
    speak: (text, _language, maxSamples) =>
      limiter.run(async (_budget, signal) => {
        if (current === null || current.exited) current = start();
        const file = path.join(tmpDir, `${crypto.randomUUID()}.wav`);
        try {
          const p = current;
          if (!(await say(p, text, file, signal))) {
            if (p.exited && current === p) current = null;
            throw new SpeechUnavailableError(p.exited ? 'festival stopped' : 'festival could not speak the text');
          }
          return await readSpeech(file, maxSamples);
        } finally {
          await fs.rm(file, { force: true });
        }
      }),
    ready: async () => {
      current ??= start();
      // Warm: the first text loads the voice.
      await limiter.run(async (_budget, signal) => {
        const file = path.join(tmpDir, 'warm-up.wav');
        const spoke = await say(current ?? (current = start()), 'Attention, please.', file, signal);
        await fs.rm(file, { force: true });
        if (!spoke) throw new SpeechUnavailableError('festival cannot speak with the slt voice');
      });
    },
    close: async () => {
      limiter.close();
      const p = current;
      current = null;
      if (p !== null && !p.exited) {
        p.child.stdin.end('(quit)\n');
        const timer = setTimeout(() => stop(p), 1_000);
        await new Promise<void>((resolve) => (p.exited ? resolve() : p.child.once('exit', () => resolve())));
        clearTimeout(timer);
      }
    },
  };
}
