// A radio edge device without a radio: saves each announcement's WAV into a folder, acks it, and
// plays it when a command-line player (aplay, paplay, play) is installed. A message that arrives
// past its expires_at is dropped unplayed (and acked, so it is not sent again), as a real edge
// device must (contract section 12). With `say`, it reports speech heard on the channel
// (radio/<edge_id>/heard), as an edge device with speech recognition does.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
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

const safeName = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100);

export function startEdgeSimulator(opts: EdgeSimulatorOptions): Simulator {
  const print: Print = opts.print ?? ((line) => console.log(`[edge ${opts.edgeId}] ${line}`));
  fs.mkdirSync(opts.outDir, { recursive: true });
  const player = opts.play === false ? null : findPlayer();
  print(player === null ? `saving announcements into ${opts.outDir} (no audio player found)` : `saving announcements into ${opts.outDir}, playing them with ${path.basename(player)}`);

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
    void simulator.ready.then(async () => {
      for (const text of phrases) {
        const heard = { heard_id: crypto.randomUUID(), text, ...(opts.speaker === undefined ? {} : { speaker: opts.speaker }), heard_at: now().toISOString() };
        await simulator.publish(edgeHeardTopic(opts.edgeId), heard);
        print(`said "${text}"${opts.speaker === undefined ? '' : ` as ${opts.speaker}`} (heard_id ${heard.heard_id})`);
      }
    }).catch((err: unknown) => print(`could not say it: ${(err as Error).message}`));
  }
  return simulator;
}