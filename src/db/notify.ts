// Commit signals between instances on PostgreSQL: LISTEN on one connection of its own, NOTIFY
// through the pool. A NOTIFY is sent after the commit it tells of, as a statement of its own (a
// NOTIFY inside a writing transaction would serialize every such commit on PostgreSQL's global
// notify lock), and at most one per NOTIFY_GAP_MS: signals that come meanwhile go out together in
// the next. Under load that is a few statements a second instead of one per write; the instance
// that committed wakes its own listeners at once, and the others are at most a gap late.
// A lost NOTIFY (this instance died right after a commit, the listening connection was down) only
// delays the others until their next poll; a listening connection that comes back wakes every
// local listener once, for what it may have missed.
import pg from 'pg';
import { NOTIFY_CHANNEL, type Signal, type SignalHub } from './signals.ts';

const NOTIFY_GAP_MS = 25;
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

export interface Notifier {
  send(signals: ReadonlySet<Signal>): void;
  /** Opens the listening connection (once); resolves once it listens. */
  listen(): Promise<void>;
  close(): Promise<void>;
}

export function postgresNotifier(pool: pg.Pool, clientConfig: pg.ClientConfig, hub: SignalHub): Notifier {
  let closed = false;
  let client: pg.Client | null = null;
  let retryMs = RECONNECT_MIN_MS;
  let retryTimer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let gapTimer: NodeJS.Timeout | null = null;
  let everListened = false;
  let listened: () => void = () => {};
  const firstListen = new Promise<void>((resolve) => (listened = resolve));
  /** The signals of everything committed since the last NOTIFY, merged into the next one. */
  const queued = new Set<Signal>();

  const flush = () => {
    if (inFlight !== null || queued.size === 0 || closed) return;
    const payload = hub.payload(queued);
    queued.clear();
    inFlight = pool
      .query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, payload])
      .then(
        () => undefined,
        () => undefined,
      ) // the others poll anyway
      .finally(() => {
        if (closed) return;
        gapTimer = setTimeout(() => {
          gapTimer = null;
          inFlight = null;
          flush();
        }, NOTIFY_GAP_MS);
        gapTimer.unref();
      });
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

  const connect = async () => {
    if (closed) return;
    // keepAlive: a connection that a network drops silently is noticed, and replaced.
    const c = new pg.Client({ ...clientConfig, keepAlive: true });
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
    } catch {
      await c.end().catch(() => {});
      reconnectLater();
      return;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    retryMs = RECONNECT_MIN_MS;
    if (everListened) hub.wakeAll();
    everListened = true;
    listened();
  };

  let started = false;
  return {
    send(signals) {
      for (const s of signals) queued.add(s);
      flush();
    },
    listen() {
      if (!started) {
        started = true;
        void connect();
      }
      return firstListen;
    },
    async close() {
      closed = true;
      if (retryTimer !== null) clearTimeout(retryTimer);
      if (gapTimer !== null) clearTimeout(gapTimer);
      await inFlight;
      const c = client;
      client = null;
      await c?.end().catch(() => {});
      listened(); // nobody waits for a listener that will not come
    },
  };
}
