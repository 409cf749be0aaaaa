// A radio edge device without a radio: saves each announcement's WAV into a folder, acks it, and
// plays it when a command-line player (aplay, paplay, play) is installed. A message that arrives
// past its expires_at is dropped unplayed (and acked, so it is not sent again), as a real edge
// device must (contract section 12). With `say`, it reports speech heard on the channel
// (radio/<edge_id>/heard), as an edge device with speech recognition does.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { edgeHeardTopic, edgePlayedTopic, edgePlayTopic } from '../wire.ts';
import { connectDevice, type Print, type Simulator } from './connection.ts';

export interface EdgeSimulatorOptions {
  edgeId: string;
  /** The edge device's key: its MQTT password. */
  key: string;
  mqttUrl: string;
  /** Where the WAV files go (created if missing). */
  outDir: string;
  /** false: only save the files. */
  play?: boolean;
  /** The audio player to use (tests); default: the first of aplay, paplay, play on PATH. */
  player?: string | null;
  print?: Print;
  /** false: a clean MQTT session (tests). */
  persistentSession?: boolean;
  /** Phrases heard on the channel, reported once connected ("I'm on it"). */
  say?: readonly string[];
  /** Who said them (the heard message's speaker). */
  speaker?: string;
  /** The device's clock (tests); default the system's. */
  now?: () => Date;
}

/** Whether a play message is past its expires_at (a message without one never is). */
export function isExpired(body: Record<string, unknown>, now: Date): boolean {
  const at = typeof body.expires_at === 'string' ? Date.parse(body.expires_at) : Number.NaN;
  return Number.isFinite(at) && at <= now.getTime();
}

const PLAYERS = ['aplay', 'paplay', 'play'];

/** The first audio player on PATH, if any. */
export function findPlayer(): string | null {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const player of PLAYERS) {
    for (const dir of dirs) {
      try {
        fs.accessSync(path.join(dir, player), fs.constants.X_OK);
        return path.join(dir, player);
      } catch {
        // not here
      }
    }
  }
  return null;
}

function playFile(player: string, file: string): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(player, [file], { stdio: 'ignore' });
    child.on('error', () => resolve(null));
    child.on('exit', (code) => resolve(code));
  });
}

/** 10 ms of silence, 16-bit mono at 8 kHz: what the player is tried with at start. */
function silentWav(): Buffer {
  const data = Buffer.alloc(160);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** The player, if it can play on this machine: one without a sound device has aplay and nothing to
 * play on, and would otherwise fail on every announcement. */
async function workingPlayer(player: string | null): Promise<{ player: string | null; note: string }> {
  if (player === null) return { player: null, note: 'no audio player found' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-edge-probe-'));
  try {
    fs.writeFileSync(path.join(dir, 'silence.wav'), silentWav());
    if ((await playFile(player, path.join(dir, 'silence.wav'))) === 0) return { player, note: `playing them with ${path.basename(player)}` };
    return { player: null, note: `${path.basename(player)} cannot play here: no sound device` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const safeName = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100);

export function startEdgeSimulator(opts: EdgeSimulatorOptions): Simulator {
  const print: Print = opts.print ?? ((line) => console.log(`[edge ${opts.edgeId}] ${line}`));
  fs.mkdirSync(opts.outDir, { recursive: true });
  const playing =
    opts.play === false ? Promise.resolve({ player: null, note: 'not playing them' }) : workingPlayer(opts.player === undefined ? findPlayer() : opts.player);
  void playing.then(({ note }) => print(`saving announcements into ${opts.outDir} (${note})`));

  const now = opts.now ?? (() => new Date());
  const simulator = connectDevice({
    url: opts.mqttUrl,
    username: `edge:${opts.edgeId}`,
    password: opts.key,
    clientId: `edge-${opts.edgeId}-sim`.slice(0, 64),
    inbox: edgePlayTopic(opts.edgeId),
    idField: 'message_id',
    print,
    persistentSession: opts.persistentSession,
    async onMessage({ id, body, duplicate }, client) {
      const ack = () => client.publishAsync(edgePlayedTopic(opts.edgeId), JSON.stringify({ message_id: id, status: 'played' }), { qos: 1 });
      if (duplicate) {
        print(`message ${id} again: already played, acking again`);
        await ack();
        return;
      }
      const text = typeof body.text === 'string' ? body.text : '';
      if (isExpired(body, now())) {
        print(`message ${id} "${text}" arrived after its expires_at ${String(body.expires_at)}: dropped unplayed`);
        await client.publishAsync(edgePlayedTopic(opts.edgeId), JSON.stringify({ message_id: id, status: 'expired' }), { qos: 1 });
        return;
      }
      const audio = typeof body.audio === 'string' ? Buffer.from(body.audio, 'base64') : Buffer.alloc(0);
      const file = path.join(opts.outDir, `${safeName(id)}.wav`);
      fs.writeFileSync(file, audio);
      print(`message ${id} from ${String(body.actor ?? 'unknown')}: "${text}" -> ${file} (${audio.length} bytes)`);
      const { player } = await playing;
      if (player !== null && audio.length > 0) {
        const code = await playFile(player, file);
        print(code === 0 ? `played ${path.basename(file)}` : `${path.basename(player)} could not play ${path.basename(file)}`);
      }
      await ack();
      print(`acked ${id}`);
    },
  });
  if (opts.say !== undefined && opts.say.length > 0) {
    const phrases = opts.say;
    void simulator.ready
      .then(async () => {
        for (const text of phrases) {
          const heard = {
            heard_id: crypto.randomUUID(),
            text,
            ...(opts.speaker === undefined ? {} : { speaker: opts.speaker }),
            heard_at: now().toISOString(),
          };
          await simulator.publish(edgeHeardTopic(opts.edgeId), heard);
          print(`said "${text}"${opts.speaker === undefined ? '' : ` as ${opts.speaker}`} (heard_id ${heard.heard_id})`);
        }
      })
      .catch((err: unknown) => print(`could not say it: ${(err as Error).message}`));
  }
  return simulator;
}
