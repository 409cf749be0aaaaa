// Commit signals between instances on PostgreSQL: LISTEN on one connection of its own, NOTIFY
// through the pool. A NOTIFY is sent after the commit it tells of, as a statement of its own (a
// NOTIFY inside a writing transaction would serialize every such commit on PostgreSQL's global
// notify lock), at most one in flight: signals that come meanwhile go out together in the next.
// A lost NOTIFY (this instance died right after a commit, the listening connection was down) only
// delays the others until their next poll.
import pg from 'pg';
import { NOTIFY_CHANNEL, type SignalHub } from './signals.ts';

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

export interface Notifier {
  send(payload: string): void;
  /** Starts listening (once): other instances' signals then reach the hub. */
  listen(): void;
  close(): Promise<void>;
}

export function postgresNotifier(pool: pg.Pool, clientConfig: pg.ClientConfig, hub: SignalHub): Notifier {
  let closed = false;
  let listening = false;
  let client: pg.Client | null = null;
  let retryMs = RECONNECT_MIN_MS;
  let retryTimer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  const queued = new Set<string>();

  const flush = () => {
    if (inFlight !== null || queued.size === 0 || closed) return;
    // One payload per instance: its signals merged.
    const signals = new Set<string>();
    for (const payload of queued) for (const s of (payload.split(':')[1] ?? '').split(',')) signals.add(s);
    queued.clear();
    inFlight = pool
      .query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, `${hub.instanceId}:${[...signals].join(',')}`])
      .then(() => undefined, () => undefined) // the others poll anyway
      .finally(() => {
        inFlight = null;
        flush();
      });
  };

  const connect = async () => {
    if (closed) return;
    const c = new pg.Client(clientConfig);
    c.on('error', () => {}); // 'end' follows and reconnects
    c.on('notification', (msg) => {
      if (msg.channel === NOTIFY_CHANNEL && msg.payload !== undefined) hub.received(msg.payload);
    });
    c.on('end', () => {
      if (client === c) client = null;
      reconnectLater();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${NOTIFY_CHANNEL}`);
      if (closed) {
        await c.end().catch(() => {});
        return;
      }
      client = c;
      retryMs = RECONNECT_MIN_MS;
    } catch {
      await c.end().catch(() => {});
      reconnectLater();
    }
  };

  const reconnectLater = () => {
    if (closed || retryTimer !== null || client !== null) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void connect();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(RECONNECT_MAX_MS, retryMs * 2);
  };

  return {
    send(payload) {
      queued.add(payload);
      flush();
    },
    listen() {
      if (listening) return;
      listening = true;
      void connect();
    },
    async close() {
      closed = true;
      if (retryTimer !== null) clearTimeout(retryTimer);
      await inFlight;
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
