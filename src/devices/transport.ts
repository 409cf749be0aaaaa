// What the dispatcher needs from a broker, embedded or external.
import type { OutboxMessage } from './store.ts';
import { withAudio } from './wire.ts';

export interface GatewayLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLogger: GatewayLogger = Object.freeze({ debug() {}, info() {}, warn() {}, error() {} });

export interface Transport {
  /** Publishes with QoS 1; resolves once the broker has taken the message. `id`: the outbox row's. */
  publish(topic: string, payload: Buffer, id?: number): Promise<void>;
  /** The broker is reachable (embedded: listening; external: connected). */
  readonly up: boolean;
  close(): Promise<void>;
}

const PUBLISH_TIMEOUT_MS = 10_000;

/** The JSON a device receives for an outbox row: its payload, with the audio kept apart put back in. */
export function messageJson(row: OutboxMessage): Buffer {
  return Buffer.from(JSON.stringify(row.audio === null ? row.payload : withAudio(row.payload, row.audio)));
}

/** Publishes rows in order (QoS 1, in flight together); the ids the broker took and those it did not. */
export async function publishAll(transport: Transport, rows: readonly OutboxMessage[]): Promise<{ ok: number[]; failed: number[]; error: string }> {
  const done = new Map<number, boolean>();
  let error = '';
  const all = Promise.all(
    rows.map((row) =>
      transport.publish(row.topic, messageJson(row), row.id).then(
        () => void done.set(row.id, true),
        (err: unknown) => {
          done.set(row.id, false);
          error ||= err instanceof Error ? err.message : String(err);
        },
      ),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, PUBLISH_TIMEOUT_MS)))]);
  clearTimeout(timer);
  const ok: number[] = [];
  const failed: number[] = [];
  for (const row of rows) (done.get(row.id) === true ? ok : failed).push(row.id);
  if (failed.length > 0 && error === '') error = 'the broker did not confirm the publish in time';
  return { ok, failed, error };
}
